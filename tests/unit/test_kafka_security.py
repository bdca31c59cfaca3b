"""Kafka client security settings: checked once, spelled right for each client, never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.runtime.kafka.security import KafkaConfigError, KafkaSecurity, current, install

SCRAM = ["security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512", "sasl.username=alice",
         "sasl.password=pa\"ss"]


def test_each_client_gets_its_own_spelling(tmp_path: Path) -> None:
    sec = KafkaSecurity.parse(SCRAM)
    assert sec.confluent() == {"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
                               "sasl.username": "alice", "sasl.password": 'pa"ss'}
    spark = sec.spark()
    assert spark["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert spark["kafka.sasl.jaas.config"] == (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="pa\\"ss";'
    )
    aio = sec.aiokafka()
    assert (aio["security_protocol"], aio["sasl_mechanism"], aio["sasl_plain_username"]) == (
        "SASL_SSL", "SCRAM-SHA-512", "alice")
    assert aio["ssl_context"] is not None  # SASL_SSL: TLS with the system's trust store


def test_plaintext_adds_nothing() -> None:
    sec = KafkaSecurity.parse([])
    assert not sec and sec.aiokafka() == {} and sec.confluent() == {} and sec.spark() == {}


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["sasl.usernme=alice"], "did you mean 'sasl.username'"),
        (["security.protocol=SASL_TLS"], "must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
        (["security.protocol=SASL_PLAINTEXT", "sasl.username=a"], "needs sasl.password"),
        (["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=GSSAPI", "sasl.username=a", "sasl.password=b"],
         "sasl.mechanism=GSSAPI"),
        (["ssl.ca.location=/nonexistent/ca.pem"], "no such file"),
        (["novalue"], "expected KEY=VALUE"),
    ],
)
def test_bad_settings_name_the_setting(pairs: list[str], message: str) -> None:
    with pytest.raises(KafkaConfigError, match=message):
        KafkaSecurity.parse(pairs)


def test_a_properties_file_and_options_combine(tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("# comment\nsecurity.protocol = SASL_PLAINTEXT\nsasl.username: bob\nsasl.password=x\n")
    sec = KafkaSecurity.parse(["sasl.password=y"], str(props))
    assert dict(sec.settings) == {"security.protocol": "SASL_PLAINTEXT", "sasl.username": "bob",
                                  "sasl.password": "y"}
    with pytest.raises(KafkaConfigError, match="missing.properties"):
        KafkaSecurity.parse([], str(tmp_path / "missing.properties"))


def test_secrets_are_never_shown_and_travel_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    sec = KafkaSecurity.parse(SCRAM)
    assert 'pa"ss' not in repr(sec) and sec.redacted()["sasl.password"] == "***"
    monkeypatch.delenv("BENCH_KAFKA_CONFIG", raising=False)
    assert not current()
    install(sec)
    assert current() == sec
    install(KafkaSecurity())
    assert not current()


def test_every_kafka_client_in_the_code_gets_the_security_settings() -> None:
    """A client built without them works on PLAINTEXT and fails only on a secured cluster
    (a new one was missed once): every construction must pass them on."""
    import re

    root = Path(__file__).resolve().parents[2]
    call = re.compile(r"\b(AIOKafkaProducer|AIOKafkaConsumer|AIOKafkaAdminClient|Producer|Consumer|AdminClient)\(")
    missing = []
    for path in [*root.glob("core/bench/**/*.py"), *root.glob("plugins/*/bench_*/**/*.py")]:
        text = path.read_text()
        for match in call.finditer(text):
            line_start = text.rfind("\n", 0, match.start()) + 1
            if text[line_start:match.start()].lstrip().startswith(("class ", "#", "def ")):
                continue
            window = text[match.start():match.start() + 400]
            if not re.search(r"kafka_security\(\)|client_conf\(|_reader_conf\(|security\.confluent\(\)", window):
                missing.append(f"{path.relative_to(root)}:{text.count(chr(10), 0, match.start()) + 1}")
    assert not missing, missing
