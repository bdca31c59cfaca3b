"""The confluent-kafka settings every client of the bench-kafka source starts from.

The source's clients (the driver's end-offset probe, the workers' range readers, the
progress listener's offset committer) only ever read by explicit offset and commit
explicitly, so none of them may commit or store offsets on its own.
"""

from __future__ import annotations

from typing import Any

from bench.runtime.kafka.security import current as kafka_security


def client_conf(bootstrap: str, group_id: str = "bench-reader") -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 50,
        "socket.keepalive.enable": True,
        "log_level": 3,
        **kafka_security().confluent(),
    }
