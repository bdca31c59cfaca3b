"""Keys of the Benchmark and Execution documents change the run bench resolves: its
execution, its SLOs, its parameters and the patched objects of each experiment.

Why: a key the models accept but nothing reads is a setting accepted and ignored
(tests/unit/test_no_inert_setting.py points here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.commands import cli
from bench.cli.launch import PreparedRun, resolve_run
from bench.config.model import effective_slos
from bench.errors import UserError
from bench.execution.deployment import build_objects, merged_params
from bench.plugins import load_plugins

REGISTRY = load_plugins()


def _run(tmp_path: Path, benchmark: dict[str, Any] | None = None, execution: dict[str, Any] | None = None,
         *args: str) -> PreparedRun:
    """``bench run --plugin uc1`` with uc1's benchmark changed by ``benchmark`` and an
    Execution file ``execution``, resolved (nothing starts)."""
    opts: list[str] = ["--plugin", "uc1", *args]
    if benchmark is not None:
        doc = {**REGISTRY.use_cases["uc1"].default_benchmark(), **benchmark}
        (tmp_path / "benchmark.yaml").write_text(yaml.safe_dump(doc))
        opts += ["--benchmark", str(tmp_path / "benchmark.yaml")]
    if execution is not None:
        (tmp_path / "execution.yaml").write_text(yaml.safe_dump(execution))
        opts += ["--execution", str(tmp_path / "execution.yaml")]
    ctx = cli.commands["run"].make_context("run", opts)
    return resolve_run(REGISTRY, dict(ctx.params))


def _objects(p: PreparedRun) -> dict[str, dict[str, Any]]:
    ex = p.execution
    objects = build_objects(REGISTRY, p.benchmark, ex, p.params, ex.load.loadValues[0], ex.resources.resourceValues[0])
    return {o["metadata"]["name"]: o for o in objects}


def _params(p: PreparedRun) -> dict[str, Any]:
    ex = p.execution
    objects = build_objects(REGISTRY, p.benchmark, ex, p.params, ex.load.loadValues[0], ex.resources.resourceValues[0])
    return merged_params(p.use_case, p.benchmark, ex, objects, p.params)


def test_execution_load_and_resources_are_what_is_measured(tmp_path: Path) -> None:
    p = _run(tmp_path, None, {"load": {"loadType": "MessagePeriod", "loadValues": [500, 250]},
                              "resources": {"resourceType": "CoresPerInstance", "resourceValues": [2]}})
    assert (p.execution.load.loadType, p.execution.load.loadValues) == ("MessagePeriod", [250, 500])
    assert (p.execution.resources.resourceType, p.execution.resources.resourceValues) == ("CoresPerInstance", [2])
    objects = _objects(p)
    assert objects["generator"]["spec"]["periodMs"] == 250, "the load type's patcher applies the load value"
    assert objects["sut"]["spec"]["coresPerInstance"] == 2, "the resource type's patcher applies the resources"


def test_config_overrides_patch_the_named_resource(tmp_path: Path) -> None:
    override = {"patcher": {"type": "ParamPatcher", "resource": "sut", "properties": {"key": "log_max_mb"}},
                "value": 7}
    p = _run(tmp_path, None, {"configOverrides": [override], "load": {"loadValues": [100]},
                              "resources": {"resourceValues": [1]}})
    objects = _objects(p)
    assert objects["sut"]["spec"]["params"]["log_max_mb"] == 7
    assert "log_max_mb" not in objects["generator"]["spec"]["params"]


def test_benchmark_and_execution_params_reach_the_use_case(tmp_path: Path) -> None:
    assert _params(_run(tmp_path, {"params": {"log_max_mb": 3}}, None, "--loads", "100", "--resources", "1")
                   )["log_max_mb"] == 3
    both = _run(tmp_path, {"params": {"log_max_mb": 3}}, {"params": {"log_max_mb": 5}}, "--loads", "100",
                "--resources", "1")
    assert _params(both)["log_max_mb"] == 5, "the execution's params override the benchmark's"


def test_benchmark_default_execution_and_slos_are_the_runs(tmp_path: Path) -> None:
    slos = [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"threshold": 123}},
            {"name": "mine", "sloType": "generic", "properties": {"sli": "lag", "threshold": 9, "operator": "lt"}}]
    p = _run(tmp_path, {"name": "my-bench", "slos": slos,
                        "defaultExecution": {"load": {"loadValues": [700]}, "resources": {"resourceValues": [2]},
                                             "execution": {"duration": 55, "warmup": 5}}})
    assert p.benchmark.name == p.execution.benchmark == "my-bench"
    assert (p.execution.load.loadValues, p.execution.execution.duration) == ([700], 55)
    judged = {s.name: (s.sloType, s.properties) for s in effective_slos(p.benchmark, p.execution)}
    assert judged == {"lag-trend": ("lag-trend", {"threshold": 123}),
                      "mine": ("generic", {"sli": "lag", "threshold": 9, "operator": "lt"})}


def test_benchmark_load_types_and_their_patchers_are_what_a_load_changes(tmp_path: Path) -> None:
    load_types = [{"typeName": "Period", "direction": "decreasing",
                   "patchers": [{"type": "GenericResourcePatcher", "resource": "generator",
                                 "properties": {"path": "spec/periodMs"}}]}]
    p = _run(tmp_path, {"loadTypes": load_types}, None, "--loads", "400", "--resources", "1")
    assert p.execution.load.loadType == "Period"
    assert _objects(p)["generator"]["spec"]["periodMs"] == 400
    from bench.config.model import decreasing_load

    assert decreasing_load(p.benchmark, p.execution), "direction: decreasing orders the loads downwards"


def test_resource_set_actions_and_files_bench_cannot_honour_are_refused(tmp_path: Path) -> None:
    """``afterActions`` (exec/delete in pods) and ``files`` not beside the benchmark file
    would be ignored; each is refused in one line naming it."""
    sut = REGISTRY.use_cases["uc1"].default_benchmark()["sut"]
    with pytest.raises(UserError, match="benchmark.sut.afterActions: bench runs no exec or delete actions"):
        _run(tmp_path, {"sut": {**sut, "afterActions": [{"delete": {"selector": {"kind": "Pod"}}}]}})
    with pytest.raises(UserError, match="benchmark.sut: the files nowhere.yaml are not next to the benchmark file"):
        _run(tmp_path, {"sut": {**sut, "files": ["nowhere.yaml"]}})
