"""UC4's plugin surface: registration, default benchmark, generator keys, patcher,
and the pandas functions of the stateful registry join (run here without Spark)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from bench.config.model import parse_benchmark, validate_benchmark
from bench.plugins import load_plugins
from bench_uc4 import generator, params, patchers, registry, topology


@pytest.fixture(scope="module")
def plugins() -> Any:
    return load_plugins()


def test_entry_point_registers_use_case_generator_and_patcher(plugins: Any) -> None:
    info = next(p for p in plugins.plugins if p.name == "uc4")
    assert info.error is None
    use_case = plugins.use_cases["uc4"]
    assert use_case.generator == "uc4-registry" in plugins.generators
    assert patchers.NAME in plugins.patchers
    assert use_case.default_params["feedback"] is True


def test_the_query_runs_with_c1_only_on_driver_and_executors() -> None:
    from bench_uc4 import USE_CASE

    assert USE_CASE.spark_conf["spark.driver.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"
    assert USE_CASE.spark_conf["spark.executor.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"


def test_default_benchmark_validates_and_keeps_the_agreed_shape(plugins: Any) -> None:
    doc = plugins.use_cases["uc4"].default_benchmark()
    validate_benchmark(parse_benchmark(doc), plugins)
    gen = doc["loadGenerator"]["resources"][0]["spec"]
    assert gen["sensors"] == 16 and gen["params"] == {"nestedGroups": 2, "childrenPerGroup": 4}
    assert [t["name"] for t in doc["kafkaConfig"]["topics"]] == [
        "input",
        "output",
        "configuration",
        "aggregation-feedback",
    ]
    assert doc["loadTypes"][0]["typeName"] == "NumNestedGroups"
    assert max(doc["defaultExecution"]["load"]["loadValues"]) <= 6  # levels, not records/s


def test_load_type_patchers_set_levels_sensors_and_instances(plugins: Any) -> None:
    from bench.patchers.apply import apply_all

    doc = plugins.use_cases["uc4"].default_benchmark()
    objects = doc["loadGenerator"]["resources"]
    objects[0]["spec"]["maxPerInstance"] = 100
    for load_type, value, levels, children, sensors, replicas in [
        (0, 3, 3, 4, 64, 1),
        (0, 4, 4, 4, 256, 3),
        (1, 8, 2, 8, 64, 1),
    ]:
        refs = doc["loadTypes"][load_type]["patchers"]
        patched = _apply(plugins, objects, refs, value, apply_all)
        spec = patched[0]["spec"]
        assert (spec["params"]["nestedGroups"], spec["params"]["childrenPerGroup"]) == (levels, children)
        assert (spec["sensors"], spec["replicas"]) == (sensors, replicas)
    assert objects[0]["spec"]["sensors"] == 16  # patchers never mutate their input


def _apply(plugins: Any, objects: Any, refs: Any, value: Any, apply_all: Any) -> Any:
    for ref in refs:
        patcher = plugins.patchers[ref["type"]]
        objects = patcher.patch(objects, value, ref.get("properties", {}))
    return objects


def test_keys_prefer_the_nested_groups_param_over_the_load() -> None:
    assert generator.keys(3, {}) == registry.leaf_keys(3, 4)
    assert generator.keys(16, {"nestedGroups": 2, "childrenPerGroup": 4}) == registry.leaf_keys(2, 4)
    assert len(generator.keys(2, {"childrenPerGroup": "3"})) == 9
    with pytest.raises(ValueError):
        generator.keys(2, {"childrenPerGroup": 2.5})


def test_registry_document_is_a_full_tree_unless_one_is_given() -> None:
    from bench.api import GeneratorSpec

    spec = GeneratorSpec("x:1", "input", [], params={"nestedGroups": 2, "childrenPerGroup": 2})
    assert registry.parse(generator.registry_for(spec)).to_json() == registry.build_tree(2, 2).to_json()
    custom = {"identifier": "r", "children": [{"identifier": "s_0"}]}
    spec = GeneratorSpec("x:1", "input", [], params={"registry": custom})
    assert json.loads(generator.registry_for(spec))["children"][0]["identifier"] == "s_0"


@pytest.mark.parametrize("raw, want", [(True, True), ("false", False), ("TRUE", True), (0, False)])
def test_feedback_flag_parses_cli_strings(raw: Any, want: bool) -> None:
    assert params.flag(raw) is want


def test_feedback_flag_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        params.flag("maybe")


class FakeState:
    """The part of GroupState the registry join uses."""

    def __init__(self, value: tuple[Any, ...] | None = None) -> None:
        self.value = value
        self.updates = 0

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> tuple[Any, ...]:
        assert self.value is not None
        return self.value

    def update(self, value: tuple[Any, ...]) -> None:
        self.value = value
        self.updates += 1


def _rows(*rows: dict[str, Any]) -> pd.DataFrame:
    cols = ["child", "kind", "ts", "value", "parents", "reg_ts", "reg_offset"]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


def _reg(parents: list[str], ts: int, offset: int) -> dict[str, Any]:
    return {"child": "s_0", "kind": 0, "parents": json.dumps(parents), "reg_ts": ts, "reg_offset": offset}


def _m(value: float) -> dict[str, Any]:
    return {"child": "s_0", "kind": 1, "ts": pd.Timestamp(1000, unit="ms"), "value": value}


def _join(state: FakeState, *frames: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(list(topology.duplicate_to_parents((0,), iter(frames), state)))


def _known(state: FakeState) -> dict[str, Any]:
    return dict(json.loads(state.get[0]))


def test_join_applies_the_newest_registry_row_of_the_batch_before_its_measurements() -> None:
    state = FakeState()
    # the registry row arrives in a later chunk than the measurement: still applied first
    out = _join(state, _rows(_m(5.0)), _rows(_reg(["b"], 2, 1), _reg(["a", "c"], 1, 0)))
    assert list(out["grp"]) == ["b"] and list(out["value"]) == [5.0]
    assert _known(state) == {"s_0": [["b"], 2, 1]}


def test_join_keeps_parents_across_batches_and_ignores_older_registry_rows() -> None:
    state = FakeState((json.dumps({"s_0": [["a", "root"], 5, 3]}),))
    out = _join(state, _rows(_m(1.0), _m(2.0)))
    assert sorted(zip(out["grp"], out["value"], strict=True)) == [("a", 1.0), ("a", 2.0), ("root", 1.0), ("root", 2.0)]
    out = _join(state, _rows(_reg(["old"], 4, 9), _m(3.0)))
    assert list(out["grp"]) == ["a", "root"]


def test_a_bucket_keeps_each_childs_parents_apart_and_writes_its_state_only_on_change() -> None:
    state = FakeState()
    first = _rows({**_reg(["g1"], 1, 0), "child": "s_1"}, {**_reg(["g2", "root"], 1, 1), "child": "s_2"},
                  {**_m(1.0), "child": "s_1"}, {**_m(2.0), "child": "s_2"}, {**_m(3.0), "child": "s_9"})
    out = _join(state, first)
    assert sorted(zip(out["grp"], out["child"], out["value"], strict=True)) == [
        ("g1", "s_1", 1.0), ("g2", "s_2", 2.0), ("root", "s_2", 2.0)]
    assert state.updates == 1
    # measurements only: the state is read, not written again
    out = _join(state, _rows({**_m(4.0), "child": "s_2"}))
    assert sorted(out["grp"]) == ["g2", "root"] and state.updates == 1
    # a move of s_1 leaves s_2 where it was
    _join(state, _rows({**_reg(["g2"], 2, 5), "child": "s_1"}))
    assert _known(state) == {"s_1": [["g2"], 2, 5], "s_2": [["g2", "root"], 1, 1]} and state.updates == 2


def test_buckets_cover_every_task_slot() -> None:
    assert topology.buckets_for(1) == 8 and topology.buckets_for(6) == 24 and topology.buckets_for(0) == 8


def test_join_drops_measurements_of_unknown_sensors() -> None:
    out = _join(FakeState(), _rows(_m(1.0)))
    assert out.empty


def test_explode_skips_malformed_events_and_maps_every_child() -> None:
    tree = registry.build_tree(2, 2)
    frame = pd.DataFrame(
        {
            "value": ["{broken", registry.dumps(tree), None],
            "timestamp": [pd.Timestamp(0, unit="ms")] * 3,
            "offset": [0, 1, 2],
        }
    )
    out = pd.concat(list(topology.explode_registry(iter([frame]), feedback=True)))
    assert set(out["child"]) == set(registry.parents_of(tree, True))
    assert set(out["reg_offset"]) == {1}
    row = out[out["child"] == "s_3"].iloc[0]
    assert json.loads(row["parents"]) == ["group_lvl_1_1"]
