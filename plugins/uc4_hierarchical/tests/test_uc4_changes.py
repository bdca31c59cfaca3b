"""UC4 registry changes during a run, on the real broker and real Spark.

The generator's own change sequence (``registry.changed``: a sensor moved, a group added
with a sensor moved into it, in turn) is replayed between windows through
bench.testing.run_topology, and every (group, window) sum is compared with an oracle
that computes it from the tree in force for that window. Without the feedback loop
(the 2023 study's variant) each leaf goes straight to all its ancestors, so a group's
window W holds exactly the leaf values of W under the registry of W.

A second test runs the generator's change loop against Kafka and reads the
configuration topic back: the documents the SUT receives are that same sequence.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bench.api import GeneratorSpec
from bench_uc4 import USE_CASE, registry
from bench_uc4.generator import change_registry
from uc4_scenario import (
    LEAVES,
    T0,
    WINDOW_MS,
    WINDOWS,
    last_closed_window,
    leaf_records,
    observed,
    registry_event,
    value,
)

pytestmark = pytest.mark.e2e

CHANGES = 4  # after windows 0..3: move, add group, move, add group
SEED = 3
BASE = registry.build_tree(3, 2)


def trees() -> list[registry.Node]:
    """The registry in force for window w is trees()[min(w, CHANGES)]."""
    out = [BASE]
    for step in range(1, CHANGES + 1):
        out.append(registry.changed(out[-1], step, SEED))
    return out


TREES = trees()


def tree_of(window: int) -> registry.Node:
    return TREES[min(window, CHANGES)]





def steps() -> list[dict[str, list[tuple[str, str, int]]]]:
    """Registry events in steps of their own (a step's topics may land in different batches)."""
    plan: list[dict[str, list[tuple[str, str, int]]]] = [registry_event(BASE, T0)]
    for window in range(WINDOWS):
        plan.append({"input": leaf_records(window)})
        if window < CHANGES:
            plan.append(registry_event(TREES[window + 1], T0 + 1 + window))
    return plan



def expected(last_closed: int) -> dict[tuple[str, int], tuple[float, int]]:
    result: dict[tuple[str, int], tuple[float, int]] = {}
    for window in range(last_closed + 1):
        for group, leaves in registry.leaves_under(tree_of(window)).items():
            if leaves:
                result[(group, window)] = (sum(value(leaf, window) for leaf in leaves), len(leaves))
    return result



def test_the_change_sequence_moves_sensors_and_adds_groups() -> None:
    added = [g for g in registry.leaves_under(TREES[-1]) if g.startswith("group_added_")]
    assert added == ["group_added_2", "group_added_4"]
    for before, after in zip(TREES, TREES[1:], strict=False):
        assert sorted(registry.leaves_under(before)[registry.ROOT]) == sorted(
            registry.leaves_under(after)[registry.ROOT]
        ), "a change never loses or duplicates a sensor"
        assert registry.leaves_under(before) != registry.leaves_under(after)


def test_group_sums_stay_exact_across_registry_changes(kafka_bootstrap: str, spark: Any) -> None:
    from bench.testing import run_topology

    result = run_topology(
        USE_CASE,
        steps(),
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        params={"feedback": False, "windowSizeMs": WINDOW_MS, "gracePeriodMs": 5000},
        collect=("output",),
    )
    got = observed([r for r in result if r["topic"] == "output"])
    closed = last_closed_window()
    want = expected(closed)
    assert {k: v for k, v in got.items() if k[1] <= closed} == want
    assert result.dropped == 0
    # the added groups aggregate from the window after they were added
    assert ("group_added_2", 1) not in got and ("group_added_2", 2) in got
    assert ("group_added_4", 3) not in got and ("group_added_4", 4) in got


async def test_the_generator_publishes_the_change_sequence(kafka_bootstrap: str) -> None:
    from aiokafka import AIOKafkaConsumer
    from bench.testing import create_topics

    topic = f"configuration-changes-{id(object())}"
    await asyncio.to_thread(create_topics, kafka_bootstrap, {topic: 1})
    params = {"nestedGroups": 3, "childrenPerGroup": 2, "registryChangeSeed": SEED}
    spec = GeneratorSpec(kafka_bootstrap, "input", LEAVES, 1000.0, None, params, {"configuration": topic})
    task = asyncio.ensure_future(change_registry(spec, 0.2))
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    docs: list[str] = []
    try:
        while len(docs) < CHANGES:
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 30)
            docs += [m.value.decode() for records in batch.values() for m in records]
    finally:
        task.cancel()
        published = await asyncio.wait_for(task, 30)  # a hang here once ate the CI's budget
        await consumer.stop()
    # the cancel may land inside the send of the last document the consumer already saw:
    # that one is published but not counted
    assert published >= CHANGES - 1
    assert docs[:CHANGES] == [registry.dumps(t) for t in TREES[1:]]
