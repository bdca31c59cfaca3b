"""The embedded platform notices each fault at the next sample, before it asks Kafka anything."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest
from bench.api import ExperimentSpec, TopicSpec
from bench.platforms.children import lag_failure
from bench.platforms.embedded import GENERATOR_STALL_S, Child, EmbeddedPlatform, PlatformError, _Run

from .fakes import FAKE_USE_CASE


def _spec() -> ExperimentSpec:
    return ExperimentSpec(experiment_id="e1", use_case=FAKE_USE_CASE, objects=[],
                          topics=[TopicSpec("input", "input-e1", 1)], params={}, load=1, resources=1, group_id="g")


def _child(name: str, finished: bool = False, silent_for: float = 0.0) -> Child:
    proc: Any = SimpleNamespace(returncode=-9 if finished else None, pid=0)
    child = Child(name, proc, "/nonexistent")
    if finished:
        child.finished.set()
    child.last_event_at = time.monotonic() - silent_for
    return child


class _Node:
    def __init__(self, node_id: int, alive: bool) -> None:
        self.node_id, self._alive = node_id, alive

    def alive(self) -> bool:
        return self._alive


class _Cluster:
    kind = "kafka"

    def __init__(self, *alive: bool) -> None:
        self.nodes = [_Node(i + 1, a) for i, a in enumerate(alive)]

    def alive(self) -> bool:
        return all(n.alive() for n in self.nodes)


def _platform(generators: list[Child], broker: Any = None) -> EmbeddedPlatform:
    platform = EmbeddedPlatform({"bootstrap_servers": "127.0.0.1:1"})
    platform.broker = broker
    platform._runs["e1"] = _Run("/nonexistent", generators=generators)
    return platform


@pytest.mark.parametrize(
    ("generators", "broker", "message"),
    [
        ([_child("generator-0", finished=True)], None, "generator generator-0 exited during the experiment"),
        ([_child("generator-0", silent_for=GENERATOR_STALL_S + 1)], None, "generator generator-0 stalled"),
        ([_child("generator-0")], _Cluster(False), "embedded broker (kafka) died during the experiment"),
        ([_child("generator-0")], _Cluster(True, False, True), "embedded broker node 2 of 3 died"),
    ],
)
def test_sample_raises_for_each_fault(generators: list[Child], broker: Any, message: str) -> None:
    with pytest.raises(PlatformError) as err:
        asyncio.run(_platform(generators, broker).sample(_spec()))
    assert message in str(err.value)


def test_a_generator_that_reports_is_not_stalled() -> None:
    platform = _platform([_child("generator-0", silent_for=GENERATOR_STALL_S - 2)], _Cluster(True, True, True))
    platform._check_load_path(platform._runs["e1"])  # no exception
    assert platform._broker_failure() is None


def test_a_node_that_died_after_the_last_sample_still_fails_the_repetition() -> None:
    """Stopping the generators is the repetition's last look: no verdict from a broken cluster."""
    platform = _platform([_child("generator-0")], _Cluster(True, False, True))
    with pytest.raises(PlatformError, match="embedded broker node 2 of 3 died during the experiment"):
        asyncio.run(platform.stop_generators(_spec()))


def test_a_lag_query_cut_off_by_a_dying_node_names_the_node() -> None:
    """A killed node closes its connections before its process shows as exited: the lag
    query's error comes first, and the fault must still name the node, not the connection."""
    cluster = _Cluster(True, True, True)

    async def node_dies_soon() -> PlatformError:
        asyncio.get_running_loop().call_later(0.4, setattr, cluster.nodes[1], "_alive", False)
        platform = _platform([], cluster)
        return await lag_failure(ConnectionError("Connection at 127.0.0.1:1 closed"), 15, platform._broker_failure)

    assert "embedded broker node 2 of 3 died during the experiment" in str(asyncio.run(node_dies_soon()))


@pytest.mark.parametrize(
    ("exc", "message"),
    [(TimeoutError(), "lag sampling got no answer from Kafka within 15 s"),
     (ConnectionError("refused"), "lag sampling failed: ConnectionError: refused")],
)
def test_a_lag_query_failure_with_the_broker_up_says_what_failed(exc: Exception, message: str) -> None:
    platform = _platform([], _Cluster(True, True))
    assert str(asyncio.run(lag_failure(exc, 15, platform._broker_failure, wait=0.3))) == message
