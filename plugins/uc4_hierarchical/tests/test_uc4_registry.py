"""UC4's registry tree: building, parsing, parent mapping, moves (pure, no Kafka/Spark)."""

from __future__ import annotations

import json

import pytest
from bench_uc4 import registry


def test_full_tree_has_children_to_the_levels_leaves_numbered_left_to_right() -> None:
    tree = registry.build_tree(3, 2)
    leaves = [n.identifier for n, _ in registry.walk(tree) if not n.is_group]
    assert leaves == [f"s_{i}" for i in range(8)]
    assert registry.leaf_keys(3, 2) == leaves
    assert len(registry.leaf_keys(4)) == 256
    groups = [n.identifier for n, _ in registry.walk(tree) if n.is_group]
    assert len(groups) == 1 + 2 + 4
    assert tree.identifier == registry.ROOT


def test_json_round_trip_uses_the_reference_shape() -> None:
    tree = registry.build_tree(2, 3)
    doc = json.loads(registry.dumps(tree))
    assert set(doc) == {"identifier", "name", "children"}
    leaf = doc["children"][0]["children"][0]
    assert leaf == {"identifier": "s_0", "name": "s_0"}
    assert registry.dumps(registry.parse(registry.dumps(tree))) == registry.dumps(tree)


@pytest.mark.parametrize(
    "bad", ['{"name": "x"}', "[1, 2]", '{"identifier": "g", "children": 3}', '{"identifier": 5}', "not json"]
)
def test_parse_rejects_what_is_not_a_tree(bad: str) -> None:
    with pytest.raises(ValueError):
        registry.parse(bad)


def test_with_feedback_every_node_goes_to_its_direct_parent_only() -> None:
    parents = registry.parents_of(registry.build_tree(3, 2), feedback=True)
    assert parents["s_0"] == ["group_lvl_2_0"]
    assert parents["s_7"] == ["group_lvl_2_3"]
    assert parents["group_lvl_2_3"] == ["group_lvl_1_1"]
    assert parents["group_lvl_1_0"] == [registry.ROOT]
    assert registry.ROOT not in parents
    assert len(parents) == 8 + 6


def test_without_feedback_leaves_go_to_all_ancestors_and_groups_nowhere() -> None:
    parents = registry.parents_of(registry.build_tree(3, 2), feedback=False)
    assert parents["s_5"] == ["group_lvl_2_2", "group_lvl_1_1", registry.ROOT]
    assert set(parents) == set(registry.leaf_keys(3, 2))


def test_a_sensor_in_two_groups_is_duplicated_to_both_once() -> None:
    doc = {
        "identifier": "root",
        "children": [
            {"identifier": "a", "children": [{"identifier": "s"}]},
            {"identifier": "b", "children": [{"identifier": "s"}, {"identifier": "s"}]},
        ],
    }
    tree = registry.parse(doc)
    assert registry.parents_of(tree, True)["s"] == ["a", "b"]
    assert registry.parents_of(tree, False)["s"] == ["a", "root", "b"]


def test_move_changes_membership_and_heights_are_per_group() -> None:
    old = registry.build_tree(3, 2)
    new = registry.move(old, "s_0", "group_lvl_2_3")
    assert registry.parents_of(new)["s_0"] == ["group_lvl_2_3"]
    assert registry.parents_of(old)["s_0"] == ["group_lvl_2_0"]  # the original is untouched
    under = registry.leaves_under(new)
    assert under["group_lvl_2_0"] == {"s_1"}
    assert under["group_lvl_1_1"] == {"s_0", "s_4", "s_5", "s_6", "s_7"}
    assert under[registry.ROOT] == set(registry.leaf_keys(3, 2))
    assert [registry.height(new, g) for g in ("group_lvl_2_0", "group_lvl_1_0", registry.ROOT)] == [1, 2, 3]
    with pytest.raises(KeyError):
        registry.move(old, "s_99", "group_lvl_2_3")
    with pytest.raises(KeyError):
        registry.move(old, "s_0", "nowhere")


@pytest.mark.parametrize("levels, children", [(0, 4), (2, 0)])
def test_degenerate_shapes_are_refused(levels: int, children: int) -> None:
    with pytest.raises(ValueError):
        registry.build_tree(levels, children)


def test_a_load_in_records_per_second_is_refused_not_expanded() -> None:
    with pytest.raises(ValueError, match="nesting levels"):
        registry.leaf_keys(2000)
    with pytest.raises(ValueError, match="nesting levels"):
        registry.build_tree(12, 4)
    assert len(registry.leaf_keys(11, 4)) == 4**11


def test_a_registry_larger_than_one_kafka_message_fits_compressed_or_is_refused() -> None:
    """7 levels of 4 are 1,058,994 bytes of JSON, above the 1 MB a broker takes by default:
    the producer refused it on every attempt. Sent gzip'd it is ~125 KB; 9
    levels stay too large even so and are refused with their size."""
    seven = registry.dumps(registry.build_tree(7, 4)).encode()
    assert len(seven) > registry.MAX_EVENT_BYTES
    assert registry.wire_size(seven) < registry.MAX_EVENT_BYTES
    registry.check_event_size(seven)
    small = registry.dumps(registry.build_tree(2, 4)).encode()
    assert registry.wire_size(small) == len(small)  # small events go as before, uncompressed
    with pytest.raises(ValueError, match=r"bytes compressed \(17,804,762 as JSON\), more than one Kafka message"):
        registry.check_event_size(registry.dumps(registry.build_tree(9, 4)).encode())


def test_a_load_whose_registry_no_broker_takes_is_refused_before_anything_starts() -> None:
    from bench_uc4.patchers import sensors_patcher

    objects = [{"kind": "BenchGenerator", "spec": {"params": {"nestedGroups": 9, "childrenPerGroup": 4}}}]
    with pytest.raises(ValueError, match="the registry of 9 levels of 4 children is"):
        sensors_patcher(objects, 9, {})  # type: ignore[arg-type]
    ok = [{"kind": "BenchGenerator", "spec": {"params": {"nestedGroups": 7, "childrenPerGroup": 4}}}]
    assert sensors_patcher(ok, 7, {})[0]["spec"]["sensors"] == 4**7  # type: ignore[arg-type]
    # what the leaves decide is refused without building the tree (11 levels: 4 million leaves)
    registry.full_tree_sizes.cache_clear()
    huge = [{"kind": "BenchGenerator", "spec": {"params": {"nestedGroups": 11, "childrenPerGroup": 4}}}]
    with pytest.raises(ValueError, match=r"the registry of 11 levels of 4 children is at least 15,938,355 bytes"):
        sensors_patcher(huge, 11, {})  # type: ignore[arg-type]
    assert registry.full_tree_sizes.cache_info().misses == 0
    # a value no tree takes is refused by its logarithm (4^(10^9) would take minutes)
    absurd = [{"kind": "BenchGenerator", "spec": {"params": {"nestedGroups": 10**9, "childrenPerGroup": 4}}}]
    with pytest.raises(ValueError, match=r"4\^1000000000 leaves is more than 10,000,000"):
        sensors_patcher(absurd, 10**9, {})  # type: ignore[arg-type]
    # the bound is below every full tree's measured size, so it refuses nothing that fits
    for levels in (7, 8):
        assert 4**levels * registry.MIN_WIRE_BYTES_PER_LEAF < registry.full_tree_sizes(levels, 4)[1]
