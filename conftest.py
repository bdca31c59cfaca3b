"""Shared fixtures: one Kafka-protocol broker and one SparkSession per test session.

At the root so that they reach the tests of the core (tests/) and those that live
with each plugin (plugins/*/tests/) alike. Both start only when a test asks for them
(the e2e tests), so unit tests stay fast.
``BENCH_TEST_BOOTSTRAP`` points the tests at an existing broker instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """host:port of a Kafka-protocol broker (the embedded default) for this session."""
    given = os.environ.get("BENCH_TEST_BOOTSTRAP")
    if given:
        yield given
        return
    from bench.runtime.kafka.broker import running_broker

    with running_broker() as broker:
        yield broker.bootstrap_servers


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[1] SparkSession (bench-kafka registered) shared by all e2e tests."""
    from bench.runtime.spark.session import build_session

    session = build_session("local[1]", "bench-tests", 1)
    try:
        yield session
    finally:
        from bench.runtime.spark.session import stop_session

        stop_session(session)
