"""Resource types Instances, CoresPerInstance, MemoryPerInstance and the reference's
ThreadsAndPodResources: patchers, what the embedded platform hands the Spark driver, and
what the Kubernetes platform renders."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from bench.api import ExperimentSpec, TopicSpec, UseCase, resource_types
from bench.builtin.patchers import PATCHERS
from bench.patchers.common import PatcherError
from bench.platforms.kubernetes.manifests import render_manifests
from bench.platforms.local import spark_payload
from bench.runtime.spark.cluster import InstanceShape

P = {p.name: p.patch for p in PATCHERS}


def sut(**spec: Any) -> dict[str, Any]:
    return {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 2, "params": {}, **spec}}


def spark_application() -> dict[str, Any]:
    return {
        "kind": "SparkApplication",
        "metadata": {"name": "app"},
        "spec": {"executor": {"instances": 2, "cores": 1, "memory": "1g"}, "driver": {"cores": 1}},
    }


def worker() -> dict[str, Any]:
    command = ["spark-class", "org.apache.spark.deploy.worker.Worker", "--cores", "1", "--memory", "1g", "spark://m"]
    return {
        "kind": "Deployment",
        "metadata": {"name": "worker"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "worker", "command": command}]}}},
    }


def patched(name: str, obj: dict[str, Any], value: Any, props: dict[str, Any] | None = None) -> dict[str, Any]:
    before = copy.deepcopy(obj)
    (out,) = P[name]([obj], value, props or {})
    assert obj == before, f"{name} mutated its input"
    return out


def test_cores_patcher_per_kind() -> None:
    assert patched("ExecutorCoresPatcher", sut(), 4)["spec"]["coresPerInstance"] == 4
    assert patched("ExecutorCoresPatcher", spark_application(), 3.0)["spec"]["executor"]["cores"] == 3
    command = patched("ExecutorCoresPatcher", worker(), "2")["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[2:6] == ["--cores", "2", "--memory", "1g"]


def test_memory_patcher_per_kind_in_mib_with_factor() -> None:
    assert patched("ExecutorMemoryPatcher", sut(), 2048)["spec"]["memoryPerInstanceMb"] == 2048
    app = patched("ExecutorMemoryPatcher", spark_application(), 2, {"factor": 1024})
    assert app["spec"]["executor"]["memory"] == "2048m"
    assert app["spec"]["driver"] == {"cores": 1}, "only executors scale"
    command = patched("ExecutorMemoryPatcher", worker(), 768)["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[2:6] == ["--cores", "1", "--memory", "768m"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ExecutorCoresPatcher", 0, "at least 1"),
        ("ExecutorCoresPatcher", 1.5, "not a whole number"),
        ("ExecutorMemoryPatcher", 256, "at least 450"),
        ("ExecutorMemoryPatcher", "lots", "lots"),
    ],
)
def test_bad_values_are_one_line_errors(name: str, value: Any, message: str) -> None:
    with pytest.raises(PatcherError, match=message):
        P[name]([sut()], value, {})


def test_every_standard_benchmark_offers_the_resource_types() -> None:
    from bench.plugins import load_plugins

    registry = load_plugins()
    names = [t["typeName"] for t in resource_types()]
    assert names == ["Instances", "CoresPerInstance", "MemoryPerInstance", "ThreadsAndPodResources"]
    for use_case in registry.use_cases.values():
        doc = use_case.default_benchmark()
        offered = [t["typeName"] for t in doc["resourceTypes"]]
        assert offered[:4] == names, use_case.name
        for rtype in doc["resourceTypes"]:
            for patcher in rtype["patchers"]:
                assert patcher["type"] in registry.patchers


def test_engine_applies_cores_per_instance_to_the_sut_only() -> None:
    from bench.config.base import Benchmark, Execution
    from bench.execution.deployment import build_objects
    from bench.plugins import load_plugins

    registry = load_plugins()
    bench = Benchmark.model_validate(registry.use_cases["uc1"].default_benchmark())
    execution = Execution.model_validate(
        {
            "benchmark": "uc1",
            "load": {"loadType": "NumSensors", "loadValues": [100]},
            "resources": {"resourceType": "CoresPerInstance", "resourceValues": [1, 2]},
            "slos": [],
        }
    )
    objects = build_objects(registry, bench, execution, {}, 100.0, 2.0)
    by_kind = {o["kind"]: o for o in objects}
    assert by_kind["BenchSut"]["spec"]["coresPerInstance"] == 2
    assert by_kind["BenchSut"]["spec"]["replicas"] == 1, "instances stay as the benchmark says"
    assert "coresPerInstance" not in by_kind["BenchGenerator"]["spec"]


def test_threads_and_pod_resources_scales_one_instance_as_the_reference_does() -> None:
    """The reference's type sets R stream threads, an R-core CPU limit and R x 4 GiB per
    pod; bench's instance gets R task slots (a CPU limit per slot follows them) and
    R x 4096 MiB, the number of instances staying as the benchmark says."""
    from bench.config.base import Benchmark, Execution
    from bench.execution.deployment import build_objects
    from bench.plugins import load_plugins

    registry = load_plugins()
    bench = Benchmark.model_validate(registry.use_cases["uc1"].default_benchmark())
    execution = Execution.model_validate(
        {
            "benchmark": "uc1",
            "load": {"loadType": "NumSensors", "loadValues": [100]},
            "resources": {"resourceType": "ThreadsAndPodResources", "resourceValues": [1, 3]},
            "slos": [],
        }
    )
    objects = build_objects(registry, bench, execution, {}, 100.0, 3.0)
    spec = {o["kind"]: o for o in objects}["BenchSut"]["spec"]
    assert (spec["coresPerInstance"], spec["memoryPerInstanceMb"], spec["replicas"]) == (3, 3 * 4096, 1)


def test_threads_and_pod_resources_values_are_whole_threads() -> None:
    from bench.config.bounds import RESOURCE_VALUE

    bound = RESOURCE_VALUE["ThreadsAndPodResources"]
    assert bound.problem(2) is None
    assert bound.problem(1.5) == "must be a whole number"
    assert bound.problem(0) is not None


# --------------------------------------------------------------------------- embedded


def experiment(spark_conf: dict[str, str] | None = None, **sut_spec: Any) -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="exp1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict, spark_conf=spark_conf or {}),
        objects=[
            sut(**sut_spec),
            {"kind": "BenchGenerator", "metadata": {"name": "generator"}, "spec": {"replicas": 1, "sensors": 10}},
        ],
        topics=[TopicSpec("input", "input-exp1", 4)],
        params={},
        load=10,
        resources=2,
    )


def test_local_mode_cores_become_task_slots_and_memory_the_driver_heap() -> None:
    shape = InstanceShape.of({"coresPerInstance": 2, "memoryPerInstanceMb": 768}, 3)
    payload = spark_payload({"spark_conf": {"spark.driver.memory": "4g", "spark.x": "1"}}, experiment(), shape, None)
    assert payload["instances"] == 6, "local[6], 6 shuffle partitions, 6 Kafka read tasks"
    assert (payload["executors"], payload["cores_per_instance"], payload["memory_per_instance_mb"]) == (3, 2, 768)
    assert payload["spark_master"] is None
    # one JVM holds all three instances; the resource value wins over --conf
    assert payload["conf"] == {"spark.driver.memory": "2304m", "spark.x": "1"}


def test_the_use_cases_own_spark_settings_yield_to_conf_and_the_shape() -> None:
    shape = InstanceShape.of({"memoryPerInstanceMb": 512}, 2)
    own = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1", "spark.x": "own", "spark.driver.memory": "8g"}
    payload = spark_payload({"spark_conf": {"spark.x": "given"}}, experiment(spark_conf=own), shape, None)
    assert payload["conf"] == {
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",  # kept: nobody overrides it
        "spark.x": "given",  # --conf wins over the use case
        "spark.driver.memory": "1024m",  # the resource shape wins over both
    }


def test_standalone_master_gets_executors_of_the_instance_shape() -> None:
    shape = InstanceShape.of({"coresPerInstance": 2, "memoryPerInstanceMb": 1024}, 2)
    payload = spark_payload({}, experiment(), shape, "spark://127.0.0.1:7077")
    assert payload["instances"] == 4
    assert payload["conf"] == {
        "spark.executor.cores": "2",
        "spark.executor.memory": "1024m",
        "spark.cores.max": "4",
    }
    assert shape.worker_memory == "1024m"


def test_default_shape_changes_nothing_in_local_mode() -> None:
    shape = InstanceShape.of({"replicas": 2}, 2)
    assert (shape.slots, shape.cores, shape.memory_mb, shape.worker_memory) == (2, 1, None, "1g")
    assert spark_payload({}, experiment(), shape, None)["conf"] == {}


async def test_start_spark_starts_workers_of_the_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """standalone mode: one worker per instance, each with the instance's cores and memory."""
    from bench.platforms import embedded, local

    started: list[tuple[int, str, int]] = []

    class FakeCluster:
        master_url = "spark://127.0.0.1:1"

        def __init__(self, workers: int, memory: str, cores: int) -> None:
            started.append((workers, memory, cores))

        async def start(self) -> None:
            return None

    captured: dict[str, Any] = {}

    async def fake_child(self: Any, run: Any, name: str, module: str, payload: Any) -> Any:
        captured.update(payload)
        return object()

    async def fake_wait(self: Any, children: Any, timeout: float, what: str) -> None:
        return None

    monkeypatch.setattr(local, "SparkCluster", FakeCluster)
    monkeypatch.setattr(embedded.EmbeddedPlatform, "_start_child", fake_child)
    monkeypatch.setattr(embedded.EmbeddedPlatform, "_wait_started", fake_wait)
    platform = embedded.EmbeddedPlatform({"spark_mode": "standalone", "bootstrap_servers": "127.0.0.1:9"})
    spec = experiment(coresPerInstance=2, memoryPerInstanceMb=512)
    run = platform._run(spec)
    try:
        await platform._start_spark(run, spec, 2, {}, 1.0)
    finally:
        import shutil

        shutil.rmtree(run.dir, ignore_errors=True)
    assert started == [(2, "512m", 2)]
    assert captured["spark_master"] == "spark://127.0.0.1:1"
    assert captured["conf"]["spark.executor.memory"] == "512m"
    assert captured["instances"] == 4


# --------------------------------------------------------------------------- kubernetes


def driver_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    config = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-spec"))
    loaded: dict[str, Any] = json.loads(config["data"]["spec.json"])
    return loaded


def test_spark_application_executors_follow_the_instance_shape() -> None:
    objects = render_manifests(experiment(coresPerInstance=3, memoryPerInstanceMb=2048))
    app = next(o for o in objects if o["kind"] == "SparkApplication")
    executor = app["spec"]["executor"]
    assert (executor["instances"], executor["cores"], executor["memory"]) == (2, 3, "2048m")
    assert app["spec"]["sparkConf"]["spark.sql.shuffle.partitions"] == "6"
    assert driver_spec(objects)["instances"] == 6


def test_spark_application_defaults_come_from_the_options() -> None:
    objects = render_manifests(experiment(), {"executor_cores": 2, "executor_memory": "3g"})
    executor = next(o for o in objects if o["kind"] == "SparkApplication")["spec"]["executor"]
    assert (executor["cores"], executor["memory"]) == (2, "3g")


def test_standalone_workers_and_driver_follow_the_instance_shape() -> None:
    objects = render_manifests(experiment(coresPerInstance=2, memoryPerInstanceMb=1024), {"sut_mode": "standalone"})
    worker_dep = next(o for o in objects if o["metadata"]["name"].endswith("-worker"))
    command = worker_dep["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--cores") + 1] == "2"
    assert command[command.index("--memory") + 1] == "1024m"
    assert worker_dep["spec"]["replicas"] == 2
    spec = driver_spec(objects)
    assert spec["conf"] == {"spark.executor.cores": "2", "spark.executor.memory": "1024m", "spark.cores.max": "4"}
    assert spec["instances"] == 4


def test_calibrated_instances_scale_with_their_cores() -> None:
    """Vertical scaling has a known demand too: an instance of C cores takes C x capacity."""
    from bench.config.model import parse_benchmark, parse_execution
    from bench.execution.deployment import build_objects
    from bench.plugins import load_plugins
    from bench.runtime.calibrated_sut import instance_capacity

    assert instance_capacity({"params": {"capacity": 500}, "cores": 3}) == 1500
    assert instance_capacity({"params": {"capacity": 500}}) == 500
    registry = load_plugins()
    bench = parse_benchmark(registry.use_cases["calibrated"].default_benchmark())
    ex = parse_execution({"name": "e", "benchmark": bench.name,
                          "load": {"loadType": bench.loadTypes[0].typeName, "loadValues": [1000]},
                          "resources": {"resourceType": "CoresPerInstance", "resourceValues": [3]}})
    (sut,) = [o for o in build_objects(registry, bench, ex, {}, 1000, 3) if o.get("kind") == "BenchSut"]
    assert sut["spec"]["coresPerInstance"] == 3
