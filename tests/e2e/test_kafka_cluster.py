"""The embedded Apache Kafka: one KRaft node started and stopped, and a configuration it refuses.

The three-node cluster's own tests (every partition on all three nodes, a killed node
leaves a working cluster) live in test_scale_out.py, on the cluster that module starts
anyway: a second three-node start cost 25-30 s."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.runtime.host import procs
from bench.runtime.host.jars import kafka_jars
from bench.runtime.kafka.apache_kafka import KafkaStartError, start_sync

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(kafka_jars() is None, reason="Apache Kafka not installed (scripts/install fetches it)"),
]


def test_start_and_stop_leave_no_process_and_no_files() -> None:
    handle = start_sync(1)
    pids = [n.pid for n in handle.nodes]
    assert handle.kind == "kafka" and handle.version == kafka_jars().version  # type: ignore[union-attr]
    handle.stop_sync()
    assert not any(os.path.exists(f"/proc/{pid}") and "Z" not in Path(f"/proc/{pid}/stat").read_text()
                   for pid in pids)
    assert not os.path.exists(handle.root)
    assert not set(pids) & set(procs.live())


def test_a_broken_configuration_fails_with_the_broker_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_KAFKA_HEAP", "1k")  # the JVM refuses to start with it
    with pytest.raises(KafkaStartError, match="Apache Kafka"):
        start_sync(1)
