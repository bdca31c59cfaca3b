"""Loopback ports: finding a free one and asking whether one accepts connections.

Every launcher (the PyPI brokers, Apache Kafka, Spark's standalone master) needs both;
they live here so that none of them imports another to get them.
"""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0
