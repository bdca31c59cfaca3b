"""UC4 registry changes at run time: the change sequence (pure) and the generator's loop
that publishes it (with a fake clock and a fake producer)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bench.api import GeneratorReport, GeneratorSpec
from bench_uc4 import generator, registry


def parents(tree: registry.Node) -> dict[str, str]:
    return {n.identifier: anc[0] for n, anc in registry.walk(tree) if anc}


def sensors(tree: registry.Node) -> list[str]:
    return sorted(n.identifier for n, _ in registry.walk(tree) if not n.is_group)


def test_odd_change_moves_exactly_one_sensor_between_sensor_groups() -> None:
    tree = registry.build_tree(3, 4)
    after = registry.changed(tree, 1, seed=7)
    moved = [s for s in sensors(tree) if parents(tree)[s] != parents(after)[s]]
    assert len(moved) == 1
    assert parents(after)[moved[0]] in registry.sensor_groups(tree)
    assert sensors(after) == sensors(tree)
    assert registry.dumps(registry.changed(tree, 1, seed=7)) == registry.dumps(after), "deterministic"


def test_even_change_adds_a_group_of_the_same_height_holding_one_sensor() -> None:
    tree = registry.build_tree(3, 2)
    after = registry.changed(tree, 2, seed=0)
    added = registry.added_group_key(2)
    assert registry.leaves_under(after)[added] and len(registry.leaves_under(after)[added]) == 1
    assert registry.height(after, added) == 1
    assert registry.height(after, registry.ROOT) == registry.height(tree, registry.ROOT)
    assert parents(after)[added].startswith("group_lvl_1_")
    assert sensors(after) == sensors(tree)


def test_a_long_sequence_keeps_every_sensor_once_and_the_topology_can_read_it() -> None:
    tree = registry.build_tree(2, 4)
    for step in range(1, 30):
        tree = registry.changed(tree, step, seed=1)
        assert sensors(tree) == [f"s_{i}" for i in sorted(range(16), key=lambda i: f"s_{i}")]
        parsed = registry.parse(registry.dumps(tree))
        assert registry.parents_of(parsed, feedback=False) == registry.parents_of(tree, feedback=False)


def test_a_one_level_tree_can_change_too() -> None:
    tree = registry.build_tree(1, 3)
    after = registry.changed(registry.changed(tree, 1), 2)
    assert registry.added_group_key(2) in registry.leaves_under(after)


def test_add_group_refuses_a_known_identifier() -> None:
    with pytest.raises(ValueError, match="already"):
        registry.add_group(registry.build_tree(2, 2), registry.ROOT, "s_0")


def spec(**params: Any) -> GeneratorSpec:
    base = {"nestedGroups": 2, "childrenPerGroup": 2}
    return GeneratorSpec("127.0.0.1:9", "input", registry.leaf_keys(2, 2), 1000.0, None, {**base, **params}, {})


async def test_change_loop_publishes_one_change_per_interval_until_cancelled() -> None:
    slept: list[float] = []
    sent: list[str] = []
    enough = asyncio.Event()

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 3:
            enough.set()
            await asyncio.Event().wait()  # the fourth interval never ends: cancelled there

    async def send(doc: str) -> None:
        sent.append(doc)

    task = asyncio.ensure_future(generator.change_registry(spec(registryChangeSeed=5), 0.25, send, sleep))
    await enough.wait()
    task.cancel()
    assert await task == 3
    assert slept == [0.25] * 4
    tree = registry.build_tree(2, 2)
    want = []
    for step in (1, 2, 3):
        tree = registry.changed(tree, step, 5)
        want.append(registry.dumps(tree))
    assert sent == want


@pytest.mark.parametrize(("params", "changes"), [({}, False), ({"registryChangeIntervalMs": 500}, True),
                                                 ({"registryChangeIntervalMs": 500, "keyOffset": 2}, False)])
async def test_only_the_first_instance_changes_the_registry_and_only_when_asked(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], changes: bool
) -> None:
    started: list[float] = []

    async def fake_changes(spec: GeneratorSpec, interval: float, *_: Any) -> int:
        started.append(interval)
        await asyncio.Event().wait()
        return 0

    async def fake_loop(spec: GeneratorSpec) -> GeneratorReport:
        await asyncio.sleep(0)
        return GeneratorReport(1.0, 1.0, 1, 1.0)

    monkeypatch.setattr(generator, "change_registry", fake_changes)
    monkeypatch.setattr(generator, "run_active_power", fake_loop)
    report = await generator.run(spec(**params))
    assert report.records == 1
    assert started == ([0.5] if changes else [])


def test_negative_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="registryChangeIntervalMs"):
        generator.change_interval_s({"registryChangeIntervalMs": -1})
