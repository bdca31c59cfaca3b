"""Kafka client security (SASL PLAIN/SCRAM, SSL), given once and applied to every client.

Why one module: bench talks to Kafka through three client stacks (aiokafka for the
generator, lag sampler and admin; librdkafka via confluent-kafka for the offset
committer, the Python source and the test harness; Java for Spark's own connector),
each spelling the same settings differently. The user gives them once, in Kafka's own
property names (``--kafka-config security.protocol=SASL_SSL`` or a properties file),
and each client asks this module for its spelling.

How they travel: the CLI puts them into the environment variable
:data:`ENV` (JSON), which every child process (generator, SUT driver, Spark's Python
workers) inherits. They never go into a spec file, a result file, a log line or a
metric: :meth:`KafkaSecurity.redacted` is what may be shown.
"""

from __future__ import annotations

import difflib
import json
import os
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import UserError

ENV = "BENCH_KAFKA_CONFIG"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: the settings bench understands, in Apache Kafka's client property names
KNOWN = (
    "security.protocol",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
)
SECRETS = frozenset({"sasl.password", "ssl.key.password"})
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


class KafkaConfigError(UserError):
    pass


@dataclass(frozen=True)
class KafkaSecurity:
    settings: Mapping[str, str] = field(default_factory=dict)
    #: where each key was given when not by ``--kafka-config`` (``--kafka-config-file PATH:LINE``),
    #: so that a bad one is reported where the user can find it
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)

    # ------------------------------------------------------------------ reading

    @classmethod
    def parse(cls, pairs: Iterable[str] = (), file: str | None = None) -> KafkaSecurity:
        """From ``KEY=VALUE`` options and/or a Java properties file (options win); validated."""
        settings: dict[str, str] = {}
        origins: dict[str, str] = {}
        if file:
            for key, (value, number) in _read_properties(file).items():
                settings[key] = value
                origins[key] = f"--kafka-config-file {file}:{number}:"
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise KafkaConfigError(f"--kafka-config {pair!r}: expected KEY=VALUE")
            settings[key.strip()] = value.strip()
            origins.pop(key.strip(), None)
        security = cls(settings, origins)
        security.validate()
        return security

    def where(self, key: str) -> str:
        """How the user gave ``key``: ``--kafka-config`` or ``--kafka-config-file PATH:LINE:``."""
        return self.origins.get(key, "--kafka-config")

    def validate(self) -> None:
        for key in self.settings:
            if key not in KNOWN:
                near = difflib.get_close_matches(key, KNOWN, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(KNOWN)}"
                raise KafkaConfigError(f"{self.where(key)} {key}: unknown Kafka client setting{hint}")
        protocol = self.protocol
        if protocol not in PROTOCOLS:
            raise KafkaConfigError(
                f"{self.where('security.protocol')} security.protocol={protocol}: must be one of "
                f"{', '.join(PROTOCOLS)}"
            )
        if self.sasl:
            mechanism = self.settings.get("sasl.mechanism", "PLAIN").upper()
            if mechanism not in MECHANISMS:
                raise KafkaConfigError(
                    f"{self.where('sasl.mechanism')} sasl.mechanism={mechanism}: must be one of "
                    f"{', '.join(MECHANISMS)}"
                )
            for needed in ("sasl.username", "sasl.password"):
                if not self.settings.get(needed):
                    raise KafkaConfigError(f"{self.where('security.protocol')} security.protocol={protocol} "
                                           f"needs {needed}")
        for key in ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location"):
            path = self.settings.get(key)
            if path and not Path(path).is_file():
                raise KafkaConfigError(f"{self.where(key)} {key}={path}: no such file")

    @property
    def protocol(self) -> str:
        return self.settings.get("security.protocol", "PLAINTEXT").upper()

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    def __bool__(self) -> bool:
        return bool(self.settings)

    def redacted(self) -> dict[str, str]:
        """What may appear in logs and result files."""
        return {k: ("***" if k in SECRETS else v) for k, v in sorted(self.settings.items())}

    def __repr__(self) -> str:  # never print a secret by accident
        return f"KafkaSecurity({self.redacted()})"

    # ------------------------------------------------------------------ clients

    def aiokafka(self) -> dict[str, Any]:
        """Keyword arguments for aiokafka's producer, consumer and admin client."""
        if not self.settings:
            return {}
        out: dict[str, Any] = {"security_protocol": self.protocol}
        if self.sasl:
            out["sasl_mechanism"] = self.settings.get("sasl.mechanism", "PLAIN").upper()
            out["sasl_plain_username"] = self.settings["sasl.username"]
            out["sasl_plain_password"] = self.settings["sasl.password"]
        if self.tls:
            context = ssl.create_default_context(cafile=self.settings.get("ssl.ca.location"))
            if self.settings.get("ssl.certificate.location"):
                context.load_cert_chain(self.settings["ssl.certificate.location"],
                                        self.settings.get("ssl.key.location"), self.settings.get("ssl.key.password"))
            if self.settings.get("ssl.endpoint.identification.algorithm", "https") == "":
                context.check_hostname = False
            out["ssl_context"] = context
        return out

    def confluent(self) -> dict[str, str]:
        """librdkafka properties (confluent-kafka's Producer, Consumer, AdminClient)."""
        if not self.settings:
            return {}
        out = {"security.protocol": self.protocol}
        if self.sasl:
            out["sasl.mechanisms"] = self.settings.get("sasl.mechanism", "PLAIN").upper()
            out["sasl.username"] = self.settings["sasl.username"]
            out["sasl.password"] = self.settings["sasl.password"]
        for key in ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.key.password",
                    "ssl.endpoint.identification.algorithm"):
            if key in self.settings:
                out[key] = self.settings[key]
        return out

    def spark(self) -> dict[str, str]:
        """Options of Spark's ``kafka`` source and sink (Java client properties, ``kafka.``-prefixed)."""
        if not self.settings:
            return {}
        out = {"kafka.security.protocol": self.protocol}
        if self.sasl:
            mechanism = self.settings.get("sasl.mechanism", "PLAIN").upper()
            user = _jaas_quote(self.settings["sasl.username"])
            password = _jaas_quote(self.settings["sasl.password"])
            out["kafka.sasl.mechanism"] = mechanism
            out["kafka.sasl.jaas.config"] = (
                f'{_LOGIN_MODULES[mechanism]} required username="{user}" password="{password}";'
            )
        if self.tls:
            if self.settings.get("ssl.ca.location"):
                out["kafka.ssl.truststore.type"] = "PEM"
                out["kafka.ssl.truststore.location"] = self.settings["ssl.ca.location"]
            if self.settings.get("ssl.certificate.location") and self.settings.get("ssl.key.location"):
                out["kafka.ssl.keystore.type"] = "PEM"
                chain = Path(self.settings["ssl.certificate.location"]).read_text()
                out["kafka.ssl.keystore.certificate.chain"] = chain
                out["kafka.ssl.keystore.key"] = Path(self.settings["ssl.key.location"]).read_text()
                if self.settings.get("ssl.key.password"):
                    out["kafka.ssl.key.password"] = self.settings["ssl.key.password"]
            if "ssl.endpoint.identification.algorithm" in self.settings:
                out["kafka.ssl.endpoint.identification.algorithm"] = self.settings[
                    "ssl.endpoint.identification.algorithm"]
        return out


def _jaas_quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _read_properties(path: str) -> dict[str, tuple[str, int]]:
    """KEY -> (VALUE, line number) of a Java properties file."""
    from bench.config.files import FileError, read_text  # regular, size-capped UTF-8 text

    try:
        text = read_text(path, "--kafka-config-file")
    except FileError as exc:
        raise KafkaConfigError(str(exc)) from None
    out: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep <= 0:
            raise KafkaConfigError(f"--kafka-config-file {path}:{number}: expected KEY=VALUE")
        if (key := line[:sep].strip()) in out:
            raise KafkaConfigError(f"--kafka-config-file {path}:{number}: {key} is given twice; keep one")
        out[key] = (line[sep + 1:].strip(), number)
    return out


_cache: tuple[str, KafkaSecurity] | None = None


def current() -> KafkaSecurity:
    """The settings this process (and its children) run with: empty unless the CLI installed some."""
    global _cache
    raw = os.environ.get(ENV, "")
    if _cache is None or _cache[0] != raw:
        settings = json.loads(raw) if raw else {}
        _cache = (raw, KafkaSecurity({str(k): str(v) for k, v in settings.items()}))
    return _cache[1]


def install(security: KafkaSecurity) -> None:
    """Make ``security`` the settings of this process and of every child it starts."""
    if security:
        os.environ[ENV] = json.dumps(dict(security.settings))
    else:
        os.environ.pop(ENV, None)
