"""bench's pytest plugin: the fixtures a plugin's own tests use against an installed bench.

Installed with bench (entry point ``pytest11``), so ``pytest`` in a plugin's folder has
these fixtures with no conftest.py. A conftest.py that defines a fixture of the same
name wins (bench's own repository does so for ``kafka_bootstrap`` and ``spark``).

- ``kafka_bootstrap`` (session): ``host:port`` of a broker started for the session (the
  embedded default), or of ``BENCH_TEST_BOOTSTRAP`` when set.
- ``spark`` (session): one local[1] SparkSession able to read and write Kafka.
- ``bench_registry`` (module): ``bench.testing.load_plugins()``, the installed plugins.
- ``topology_runner``: ``run(use_case, inputs, **options) -> TopologyResult``, i.e.
  :func:`bench.testing.run_topology` on the session's broker and Spark.
- ``generator_runner``: ``run(generator, **options) -> GeneratorRun``, i.e.
  :func:`bench.testing.run_generator` on the session's broker (checks the contract).
- ``bench_runner``: ``run(plugin, **options) -> BenchRunResult``, i.e.
  :func:`bench.testing.bench_run` into a temporary folder on the session's broker: one
  experiment (one load, one resource value) to a demand table.

A test that uses any of the fixtures that start real parts is marked ``e2e``, so
``pytest -m "not e2e"`` starts no broker and no JVM.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

#: fixtures that start a broker or a JVM: a test using one is end to end
REAL_PARTS = frozenset({"kafka_bootstrap", "spark", "topology_runner", "generator_runner", "bench_runner"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end on the real broker and real Spark (slower)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_PARTS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """host:port of a Kafka broker for this session (``BENCH_TEST_BOOTSTRAP`` or the embedded one)."""
    given = os.environ.get("BENCH_TEST_BOOTSTRAP")
    if given:
        yield given
        return
    from bench.runtime.kafka.broker import running_broker

    with running_broker() as broker:
        yield broker.bootstrap_servers


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[1] SparkSession that reads and writes Kafka, shared by the session."""
    from bench.runtime.spark.session import build_session, stop_session

    session = build_session("local[1]", "bench-plugin-tests", 1)
    try:
        yield session
    finally:
        stop_session(session)


@pytest.fixture(scope="module")
def bench_registry() -> Any:
    """The installed plugins (``bench.testing.load_plugins()``), loaded once per module."""
    from bench.testing import load_plugins

    return load_plugins()


@pytest.fixture
def topology_runner(kafka_bootstrap: str, spark: Any) -> Callable[..., Any]:
    """``run(use_case, inputs, **options)``: :func:`bench.testing.run_topology` on the
    session's broker and Spark."""
    from bench.testing import run_topology

    return functools.partial(run_topology, bootstrap_servers=kafka_bootstrap, spark=spark)


@pytest.fixture
def generator_runner(kafka_bootstrap: str) -> Callable[..., Any]:
    """``run(generator, **options)``: :func:`bench.testing.run_generator` on the session's broker."""
    from bench.testing import run_generator

    return functools.partial(run_generator, bootstrap_servers=kafka_bootstrap)


@pytest.fixture
def bench_runner(kafka_bootstrap: str, tmp_path: Path) -> Callable[..., Any]:
    """``run(plugin, **options)``: :func:`bench.testing.bench_run` into ``tmp_path/results``
    on the session's broker."""
    from bench.testing import bench_run

    def run(plugin: str, **options: Any) -> Any:
        options.setdefault("bootstrap_servers", kafka_bootstrap)
        return bench_run(plugin, options.pop("results", tmp_path / "results"), **options)

    return run
