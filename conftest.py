"""Shared fixtures: one Kafka-protocol broker and one SparkSession per test session.

At the root so that they reach the tests of the core (tests/) and those that live
with each plugin (plugins/*/tests/) alike. Both start only when a test asks for them
(the e2e tests), so unit tests stay fast.
``BENCH_TEST_BOOTSTRAP`` points the tests at an existing broker instead.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

# The fuzz and property tests draw the same examples on every run by default, so that CI
# (one run decides whether a change lands) fails only for a change, never for a draw;
# HYPOTHESIS_PROFILE=explore draws new examples each run, for looking for bugs.
hypothesis_settings.register_profile("repeatable", derandomize=True, deadline=None)
hypothesis_settings.register_profile("explore", deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


# kafka_bootstrap (a broker for the session, BENCH_TEST_BOOTSTRAP or the embedded one) and
# spark (one local[1] SparkSession) come from bench's own testing kit
# (bench.pytest_plugin, entry point pytest11): the repository's tests use what plugin
# authors get.


# Fixtures that start real parts: a test using one is end to end, whatever its folder,
# so `-m "not e2e"` (scripts/test --unit) never starts a broker or a JVM.
REAL_PARTS = {"spark", "kafka_bootstrap"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_PARTS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="module")
def registry() -> Any:
    """The installed plugins plus the fake use case of tests/unit/fakes.py, once per module:
    loading entry points is slow, and a module that mutates it keeps the change to itself."""
    from bench.plugins import load_plugins

    reg = load_plugins()
    try:
        from tests.unit.fakes import FAKE_USE_CASE
    except ImportError:  # plugin test folders run without the core's tests on the path
        return reg
    reg.use_cases.setdefault("fake", FAKE_USE_CASE)
    return reg
