"""UC4 correctness on the real broker and real Spark (through bench.testing.run_topology).

A full tree k=2, n=3 (8 leaves, 7 groups). Each leaf sends two records per 5 s
window: a decoy, then the value that must count (the latest). Values differ per leaf
and window, so a wrong membership, a missed duplicate or a double count changes a sum.
After window MOVE_AFTER a new registry moves s_0 from group_lvl_2_0 to group_lvl_2_3.

With feedback, group results travel up one level per window: a group of height h
holds in window W the leaf values of window W - (h - 1). The oracle computes every
expected (group, window) -> (sum, count) from the registry tree independently of the
query and the test compares the whole set for the windows the watermark closed.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench_uc4 import USE_CASE, registry
from uc4_scenario import T0, WINDOW_MS, WINDOWS, last_closed_window, leaf_records, observed, registry_event, value

pytestmark = pytest.mark.e2e

MOVE_AFTER = 2
OLD = registry.build_tree(3, 2)
NEW = registry.move(OLD, "s_0", "group_lvl_2_3")





def tree_of(window: int) -> registry.Node:
    return OLD if window <= MOVE_AFTER else NEW


def expected(feedback: bool, last_closed: int) -> dict[tuple[str, int], tuple[float, int]]:
    """(group, window) -> (sum, count of direct contributors) for windows <= last_closed."""
    result: dict[tuple[str, int], tuple[float, int]] = {}
    for window in range(last_closed + 1):
        for group in registry.leaves_under(OLD):
            lag = registry.height(OLD, group) - 1 if feedback else 0
            source = window - lag
            if source < 0:
                continue
            tree = tree_of(source)
            leaves = registry.leaves_under(tree)[group]
            if not leaves:
                continue
            direct = [n for n, anc in registry.walk(tree) if anc[:1] == [group]]
            count = len(direct) if feedback else len(leaves)
            result[(group, window)] = (sum(value(leaf, source) for leaf in leaves), count)
    return result



def steps(feedback: bool) -> list[dict[str, list[tuple[str, str, int]]]]:
    """One window per step, so that the watermark advances one window at a time and the
    fed-back results of window W reach window W + 1 before it closes. Registry events
    travel in steps of their own: measurements of a sensor the query has not seen in
    the registry yet are dropped, and a step's topics may land in different batches."""
    plan: list[dict[str, list[tuple[str, str, int]]]] = [registry_event(OLD, T0)]
    for window in range(WINDOWS):
        plan.append({"input": leaf_records(window)})
        if window == MOVE_AFTER:
            plan.append(registry_event(NEW, T0 + 1))
    if not feedback:  # without feedback nothing needs pacing: fewer, larger steps
        before = {"input": [r for s in plan[1 : MOVE_AFTER + 2] for r in s["input"]]}
        after = {"input": [r for s in plan[MOVE_AFTER + 3 :] for r in s["input"]]}
        plan = [plan[0], before, registry_event(NEW, T0 + 1), after]
    return plan


@pytest.mark.parametrize("feedback", [True, False], ids=["feedback", "no-feedback"])
def test_group_sums_follow_the_registry(feedback: bool, kafka_bootstrap: str, spark: Any) -> None:
    from bench.testing import run_topology

    result = run_topology(
        USE_CASE,
        steps(feedback),
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        params={"feedback": feedback, "windowSizeMs": WINDOW_MS, "gracePeriodMs": 5000},
        collect=("output", "aggregation-feedback") if feedback else ("output",),
    )
    outputs = [r for r in result if r["topic"] == "output"]
    got = observed(outputs)
    closed = last_closed_window()
    want = expected(feedback, closed)
    assert {k: v for k, v in got.items() if k[1] <= closed} == want
    assert all(k[1] <= closed for k in got), "a window was emitted before the watermark passed it"
    assert result.dropped == 0
    # the moved sensor counts for its new group from the change on, and no longer for the old one
    assert got[("group_lvl_2_3", MOVE_AFTER + 1)][1] == 3
    assert got[("group_lvl_2_0", MOVE_AFTER + 1)][1] == 1
    if feedback:
        fed = sorted((r["key"], r["value"]) for r in result if r["topic"] == "aggregation-feedback")
        assert fed == sorted((r["key"], r["value"]) for r in outputs)
    # the SUT group committed every topic it reads
    for logical in ("input", "configuration", *(["aggregation-feedback"] if feedback else [])):
        if logical in result.committed:
            assert result.committed[logical] == result.end_offsets[logical]
