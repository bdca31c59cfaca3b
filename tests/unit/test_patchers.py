"""Every built-in patcher, one by one: exact expected objects, input never mutated."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from bench.builtin.patchers import PATCHERS, bench_register_patchers
from bench.patchers.common import PatcherError

P = {p.name: p.patch for p in PATCHERS}


def deployment(name: str = "sut", replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "bench:old",
                            "env": [{"name": "NUM_SENSORS", "value": "1"}],
                        },
                        {"name": "sidecar", "image": "side:1"},
                    ]
                },
            },
        },
    }


def run(name: str, objs: list[dict[str, Any]], value: Any, props: dict[str, Any] | None = None) -> list[dict]:
    before = copy.deepcopy(objs)
    out = P[name](objs, value, props or {})
    assert objs == before, f"{name} mutated its input"
    return out


def test_registration_lists_every_reference_patcher() -> None:
    found: list[Any] = []
    bench_register_patchers(register=found.append)
    names = {p.name for p in found}
    assert {
        "ReplicaPatcher",
        "NumSensorsLoadGeneratorReplicaPatcher",
        "NumNestedGroupsLoadGeneratorReplicaPatcher",
        "DataVolumeLoadGeneratorReplicaPatcher",
        "EnvVarPatcher",
        "ResourceLimitPatcher",
        "ResourceRequestPatcher",
        "ConfigMapYamlPatcher",
        "ConfigMapPropertiesPatcher",
        "LabelPatcher",
        "MatchLabelPatcher",
        "TemplateLabelPatcher",
        "ImagePatcher",
        "NodeSelectorPatcher",
        "SchedulerNamePatcher",
        "GenericResourcePatcher",
        "GeneratorLoadPatcher",
        "ParamPatcher",
    } <= names


def test_plugin_loader_finds_builtin_patchers() -> None:
    from bench.plugins import load_plugins

    registry = load_plugins(entry_points_=[])
    assert "ReplicaPatcher" in registry.patchers


@pytest.mark.parametrize("value", [3, 3.0, "3"])
def test_replica_patcher(value: Any) -> None:
    out = run("ReplicaPatcher", [deployment()], value)
    expected = deployment()
    expected["spec"]["replicas"] = 3
    assert out == [expected]


def test_replica_patcher_bench_sut_and_spark_application() -> None:
    sut = {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 1}}
    app = {"kind": "SparkApplication", "metadata": {"name": "a"}, "spec": {"executor": {"instances": 1}}}
    out = run("ReplicaPatcher", [sut, app], 4)
    assert out[0]["spec"] == {"replicas": 4}
    assert out[1]["spec"] == {"executor": {"instances": 4}}


def test_replica_patcher_rejects_fractions() -> None:
    with pytest.raises(PatcherError, match="whole number"):
        P["ReplicaPatcher"]([deployment()], 1.5, {})


@pytest.mark.parametrize(
    ("load", "props", "replicas"),
    [
        (1, {}, 1),
        (150_000, {}, 1),
        (150_001, {}, 2),
        (450_000, {}, 3),
        (25_000, {"loadGenMaxRecords": 10_000}, 3),
        (25_000, {"loadGenMaxRecords": "10000"}, 3),
    ],
)
def test_num_sensors_patcher(load: int, props: dict[str, Any], replicas: int) -> None:
    out = run("NumSensorsLoadGeneratorReplicaPatcher", [deployment("gen")], load, props)
    assert out[0]["spec"]["replicas"] == replicas


@pytest.mark.parametrize(
    ("levels", "props", "replicas"),
    [(2, {}, 1), (8, {}, 1), (9, {}, 2), (10, {}, 7), (3, {"loadGenMaxRecords": 10}, 7)],
)
def test_num_nested_groups_patcher(levels: int, props: dict[str, Any], replicas: int) -> None:
    # 4^8 = 65,536 -> 1; 4^9 = 262,144 -> 2; 4^10 = 1,048,576 -> 7; 4^3 = 64 / 10 -> 7
    out = run("NumNestedGroupsLoadGeneratorReplicaPatcher", [deployment("gen")], levels, props)
    assert out[0]["spec"]["replicas"] == replicas


def test_data_volume_patcher() -> None:
    props = {"maxVolume": 100, "container": "app", "variableName": "NUM_SENSORS"}
    out = run("DataVolumeLoadGeneratorReplicaPatcher", [deployment("gen")], 250, props)
    assert out[0]["spec"]["replicas"] == 3
    containers = out[0]["spec"]["template"]["spec"]["containers"]
    assert containers[0]["env"] == [{"name": "NUM_SENSORS", "value": "83"}]
    assert "env" not in containers[1]


def test_data_volume_patcher_needs_properties() -> None:
    with pytest.raises(PatcherError, match="maxVolume"):
        P["DataVolumeLoadGeneratorReplicaPatcher"]([deployment()], 10, {})


def test_env_var_patcher_replaces_and_adds() -> None:
    out = run("EnvVarPatcher", [deployment()], 7, {"container": "app", "variableName": "NUM_SENSORS"})
    env = out[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "NUM_SENSORS", "value": "7"}]
    out = run("EnvVarPatcher", out, 1.0, {"container": "app", "variableName": "NEW"})
    env = out[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "NUM_SENSORS", "value": "7"}, {"name": "NEW", "value": "1"}]
    assert "env" not in out[0]["spec"]["template"]["spec"]["containers"][1]


def test_env_var_patcher_prefix_suffix_factor() -> None:
    props = {"container": "app", "variableName": "MEM", "prefix": "-Xmx", "suffix": "m", "factor": 512}
    out = run("EnvVarPatcher", [deployment()], 2, props)
    env = out[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MEM", "value": "-Xmx1024m"} in env


def test_env_var_patcher_on_bench_objects_and_statefulset() -> None:
    gen = {"kind": "BenchGenerator", "metadata": {"name": "g"}, "spec": {}}
    sts = deployment()
    sts["kind"] = "StatefulSet"
    out = run("EnvVarPatcher", [gen, sts], "x", {"container": "app", "variableName": "V"})
    assert out[0]["spec"]["env"] == {"V": "x"}
    assert {"name": "V", "value": "x"} in out[1]["spec"]["template"]["spec"]["containers"][0]["env"]


@pytest.mark.parametrize(
    ("name", "section", "key"),
    [
        ("ResourceLimitPatcher", "limits", "limitedResource"),
        ("ResourceRequestPatcher", "requests", "requestedResource"),
    ],
)
@pytest.mark.parametrize(
    ("value", "resource", "extra", "expected"),
    [
        ("500m", "cpu", {}, "500m"),
        (2, "cpu", {"format": "m", "factor": 1000}, "2000m"),
        (4, "memory", {"format": "Gi"}, "4Gi"),
        ("1Gi", "memory", {"format": "Gi", "factor": 2}, "1Gi"),
        (1.0, "cpu", {}, "1"),
    ],
)
def test_resource_patchers(
    name: str, section: str, key: str, value: Any, resource: str, extra: dict[str, Any], expected: str
) -> None:
    props = {"container": "app", key: resource, **extra}
    out = run(name, [deployment()], value, props)
    containers = out[0]["spec"]["template"]["spec"]["containers"]
    assert containers[0]["resources"] == {section: {resource: expected}}
    assert "resources" not in containers[1]


def test_resource_patcher_keeps_other_resources_and_rejects_unknown() -> None:
    dep = deployment()
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"memory": "1Gi"},
        "requests": {"cpu": "1"},
    }
    out = run("ResourceLimitPatcher", [dep], "2", {"container": "app", "limitedResource": "cpu"})
    assert out[0]["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "1Gi", "cpu": "2"},
        "requests": {"cpu": "1"},
    }
    with pytest.raises(PatcherError, match="cpu, memory"):
        P["ResourceLimitPatcher"]([dep], 1, {"container": "app", "limitedResource": "gpu"})


def test_resource_patchers_on_spark_application() -> None:
    app = {"kind": "SparkApplication", "metadata": {"name": "a"}, "spec": {"executor": {"cores": 1}}}
    out = run("ResourceRequestPatcher", [app], 2, {"container": "executor", "requestedResource": "cpu"})
    assert out[0]["spec"]["executor"]["cores"] == 2
    out = run(
        "ResourceLimitPatcher", out, 2, {"container": "executor", "limitedResource": "memory", "format": "g"}
    )
    assert out[0]["spec"]["executor"]["memory"] == "2g"
    assert "memory" not in out[0]["spec"].get("driver", {})


def configmap(data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": data}


def test_config_map_yaml_patcher() -> None:
    cm = configmap({"app.yaml": "window: 60\nname: uc2\n", "other": "x"})
    out = run("ConfigMapYamlPatcher", [cm], 300.0, {"fileName": "app.yaml", "variableName": "window"})
    assert yaml.safe_load(out[0]["data"]["app.yaml"]) == {"window": 300, "name": "uc2"}
    assert out[0]["data"]["other"] == "x"
    out = run("ConfigMapYamlPatcher", [configmap({})], "a", {"fileName": "n.yaml", "variableName": "k"})
    assert yaml.safe_load(out[0]["data"]["n.yaml"]) == {"k": "a"}


def test_config_map_properties_patcher() -> None:
    content = "# comment\nnum.threads=1\nwindow.size = 60\nname: x\n"
    cm = configmap({"app.properties": content})
    props = {"fileName": "app.properties", "variableName": "window.size"}
    out = run("ConfigMapPropertiesPatcher", [cm], 300, props)
    assert out[0]["data"]["app.properties"] == "# comment\nnum.threads=1\nwindow.size = 300\nname: x\n"
    props = {"fileName": "app.properties", "variableName": "new.key"}
    out = run("ConfigMapPropertiesPatcher", out, "v", props)
    assert out[0]["data"]["app.properties"].endswith("name: x\nnew.key=v\n")


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("LabelPatcher", ("metadata", "labels")),
        ("MatchLabelPatcher", ("spec", "selector", "matchLabels")),
        ("TemplateLabelPatcher", ("spec", "template", "metadata", "labels")),
    ],
)
def test_label_patchers(name: str, path: tuple[str, ...]) -> None:
    out = run(name, [deployment()], "theodolite-sut", {"variableName": "app"})
    node: Any = out[0]
    for key in path:
        node = node[key]
    assert node == {"app": "theodolite-sut"}
    expected = deployment()
    node = expected
    for key in path:
        node = node[key]
    node["app"] = "theodolite-sut"
    assert out == [expected]


def test_label_patcher_creates_missing_labels() -> None:
    out = run("LabelPatcher", [{"kind": "Service", "metadata": {"name": "s"}}], 5, {"variableName": "n"})
    assert out[0]["metadata"]["labels"] == {"n": "5"}


def test_image_patcher() -> None:
    out = run("ImagePatcher", [deployment()], "bench:new", {"container": "app"})
    containers = out[0]["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["bench:new", "side:1"]
    app = {"kind": "SparkApplication", "metadata": {"name": "a"}, "spec": {"image": "old"}}
    assert run("ImagePatcher", [app], "new", {})[0]["spec"]["image"] == "new"


def test_node_selector_and_scheduler_name() -> None:
    out = run("NodeSelectorPatcher", [deployment()], "prod", {"variableName": "env"})
    assert out[0]["spec"]["template"]["spec"]["nodeSelector"] == {"env": "prod"}
    out = run("SchedulerNamePatcher", out, "random-scheduler", {})
    assert out[0]["spec"]["template"]["spec"]["schedulerName"] == "random-scheduler"
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    assert run("SchedulerNamePatcher", [pod], "s", {})[0]["spec"]["schedulerName"] == "s"


@pytest.mark.parametrize(
    ("path", "type_", "value", "expected"),
    [
        ("spec/template/spec/containers/0/image", "string", "img:2", "img:2"),
        ("spec.template.spec.containers.0.image", None, "img:3", "img:3"),
        (["spec", "template", "spec", "containers", "1", "image"], "string", 7, "7"),
    ],
)
def test_generic_resource_patcher_paths(path: Any, type_: str | None, value: Any, expected: Any) -> None:
    props = {"path": path} | ({"type": type_} if type_ else {})
    out = run("GenericResourcePatcher", [deployment()], value, props)
    index = 1 if isinstance(path, list) else 0
    assert out[0]["spec"]["template"]["spec"]["containers"][index]["image"] == expected


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        ("int", "5", 5),
        ("integer", 5.0, 5),
        ("float", "2.5", 2.5),
        ("number", 3, 3.0),
        ("boolean", "true", True),
    ],
)
def test_generic_resource_patcher_types(type_: str, value: Any, expected: Any) -> None:
    out = run("GenericResourcePatcher", [deployment()], value, {"path": "spec/x/y", "type": type_})
    assert out[0]["spec"]["x"] == {"y": expected}
    assert type(out[0]["spec"]["x"]["y"]) is type(expected)


def test_generic_resource_patcher_errors() -> None:
    with pytest.raises(PatcherError, match="no list element 9"):
        P["GenericResourcePatcher"]([deployment()], "x", {"path": "spec/template/spec/containers/9/image"})
    with pytest.raises(PatcherError, match="unknown type"):
        P["GenericResourcePatcher"]([deployment()], "x", {"path": "spec/a", "type": "date"})
    with pytest.raises(PatcherError, match="not a whole number"):
        P["GenericResourcePatcher"]([deployment()], "1.5", {"path": "spec/a", "type": "int"})
    with pytest.raises(PatcherError, match="path"):
        P["GenericResourcePatcher"]([deployment()], "x", {})


def test_generator_load_patcher() -> None:
    gen = {"kind": "BenchGenerator", "metadata": {"name": "g"}, "spec": {"maxPerInstance": 1000}}
    out = run("GeneratorLoadPatcher", [gen], 2500.0, {})
    assert out[0]["spec"] == {"maxPerInstance": 1000, "sensors": 2500, "replicas": 3}
    out = run("GeneratorLoadPatcher", [gen], 2500, {"maxPerInstance": 5000})
    assert out[0]["spec"]["replicas"] == 1
    plain = {"kind": "BenchGenerator", "metadata": {"name": "g"}, "spec": {"replicas": 2}}
    assert run("GeneratorLoadPatcher", [plain], 10, {})[0]["spec"] == {"replicas": 2, "sensors": 10}


def test_param_patcher() -> None:
    sut = {"kind": "BenchSut", "metadata": {"name": "s"}, "spec": {"params": {"a": 1}}}
    out = run("ParamPatcher", [sut], 60.0, {"key": "windowSeconds"})
    assert out[0]["spec"]["params"] == {"a": 1, "windowSeconds": 60}
    out = run("ParamPatcher", [sut], "7", {"key": "b", "type": "float"})
    assert out[0]["spec"]["params"]["b"] == 7.0
    other = {"kind": "Deployment", "metadata": {"name": "d"}}
    assert run("ParamPatcher", [other], "x", {"key": "k"})[0]["spec"] == {"params": {"k": "x"}}


def test_patchers_return_copies_not_aliases() -> None:
    objs = [deployment()]
    for name, props in [
        ("ReplicaPatcher", {}),
        ("LabelPatcher", {"variableName": "a"}),
        ("EnvVarPatcher", {"container": "app", "variableName": "X"}),
    ]:
        out = P[name](objs, 2, props)
        out[0]["spec"]["template"]["spec"]["containers"][0]["image"] = "changed"
        assert objs[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "bench:old"
