"""The reference's patchers with the properties its documentation and factory define.

Each case states what the reference's patcher does with a property (labelName,
nodeLabelName, pullPolicy, isInitContainer, prefix/suffix/factor, volumeName) and
checks bench's patcher does the same; the sensor-count patchers also drive bench's
own generator object, so a reference load type changes what bench generates.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from bench.plugins import load_plugins

REGISTRY = load_plugins()


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "labels": {}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {}}, "template": {
            "metadata": {"labels": {}},
            "spec": {"containers": [{"name": "main", "image": "old:1", "env": []}],
                     "initContainers": [{"name": "init", "image": "init:1", "env": []}],
                     "volumes": [{"name": "conf", "configMap": {"name": "app-config"}},
                                 {"name": "other", "configMap": {"name": "keep"}}]}}},
    }


def patch(kind: str, value: Any, obj: dict[str, Any] | None = None, **props: Any) -> dict[str, Any]:
    (out,) = REGISTRY.patchers[kind].patch([obj or deployment()], value, props)
    return out


@pytest.mark.parametrize(
    ("kind", "where"),
    [("LabelPatcher", ("metadata", "labels")), ("MatchLabelPatcher", ("spec", "selector", "matchLabels")),
     ("TemplateLabelPatcher", ("spec", "template", "metadata", "labels"))],
)
def test_label_patchers_take_label_name(kind: str, where: tuple[str, ...]) -> None:
    for props in ({"labelName": "app"}, {"variableName": "app"}):
        node: Any = patch(kind, "sut", **props)
        for key in where:
            node = node[key]
        assert node == {"app": "sut"}


def test_service_selector_takes_label_name() -> None:
    service = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {}}}
    assert patch("ServiceSelectorPatcher", "x", service, labelName="app")["spec"]["selector"] == {"app": "x"}


def test_node_selector_takes_node_label_name() -> None:
    out = patch("NodeSelectorPatcher", "prod", nodeLabelName="env")
    assert out["spec"]["template"]["spec"]["nodeSelector"] == {"env": "prod"}


def test_image_patcher_sets_the_pull_policy_of_the_named_container() -> None:
    out = patch("ImagePatcher", "new:2", container="main", pullPolicy="Always")
    (main,) = out["spec"]["template"]["spec"]["containers"]
    assert main["image"] == "new:2" and main["imagePullPolicy"] == "Always"
    assert out["spec"]["template"]["spec"]["initContainers"][0]["image"] == "init:1"


def test_env_var_patcher_init_containers() -> None:
    out = patch("EnvVarPatcher", 5, container="init", variableName="N", isInitContainer="true")
    spec = out["spec"]["template"]["spec"]
    assert spec["initContainers"][0]["env"] == [{"name": "N", "value": "5"}]
    assert spec["containers"][0]["env"] == []


@pytest.mark.parametrize(
    ("props", "value", "expected"),
    [({}, 7, 7), ({"factor": 3}, 7, 21), ({"prefix": "v", "suffix": "s"}, 7, "v7s"),
     ({"prefix": "", "suffix": "m", "factor": 250}, 2, "500m"), ({"type": "integer", "factor": 2}, "4", 8),
     ({"type": "string"}, 3, "3"), ({"type": "boolean"}, "true", True), ({"type": "number"}, "1.5", 1.5)],
)
def test_generic_resource_patcher_decorates_then_converts(props: dict[str, Any], value: Any, expected: Any) -> None:
    out = patch("GenericResourcePatcher", value, path="/spec/template/spec/containers/0/args", **props)
    assert out["spec"]["template"]["spec"]["containers"][0]["args"] == expected


def test_config_map_patchers_decorate() -> None:
    config_map = {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"app.properties": "a=1\n"}}
    out = patch("ConfigMapPropertiesPatcher", 2, config_map, fileName="app.properties", variableName="a",
                factor=1000, suffix="ms")
    assert out["data"]["app.properties"] == "a=2000ms\n"


def test_volumes_config_map_patcher() -> None:
    out = patch("VolumesConfigMapPatcher", "app-config-large", volumeName="app-config")
    volumes = out["spec"]["template"]["spec"]["volumes"]
    assert [v["configMap"]["name"] for v in volumes] == ["app-config-large", "keep"]


def generator() -> dict[str, Any]:
    return {"kind": "BenchGenerator", "metadata": {"name": "generator"},
            "spec": {"replicas": 1, "sensors": 100, "periodMs": 1000, "params": {}}}


def test_the_reference_sensor_patchers_change_bench_generator() -> None:
    out = patch("NumSensorsLoadGeneratorReplicaPatcher", 300_000, generator(), loadGenMaxRecords="150000")
    assert out["spec"]["sensors"] == 300_000 and out["spec"]["replicas"] == 2
    out = patch("EnvVarPatcher", 25_000, generator(), container="workload-generator", variableName="NUM_SENSORS")
    assert out["spec"]["sensors"] == 25_000
    out = patch("NumNestedGroupsLoadGeneratorReplicaPatcher", 3, generator(), loadGenMaxRecords="150000",
                numSensors="4")
    assert out["spec"]["sensors"] == 64 and out["spec"]["replicas"] == 1
    # the reference's Deployment keeps its own meaning: only replicas
    dep = patch("NumSensorsLoadGeneratorReplicaPatcher", 300_001, deployment(), loadGenMaxRecords=150_000)
    assert dep["spec"]["replicas"] == 3 and "sensors" not in dep["spec"]


def test_patchers_do_not_touch_their_input() -> None:
    obj = deployment()
    before = copy.deepcopy(obj)
    patch("VolumesConfigMapPatcher", "x", obj, volumeName="app-config")
    patch("ImagePatcher", "x", obj, container="main", pullPolicy="Never")
    assert obj == before


def test_uc3_takes_the_reference_load_type_in_days() -> None:
    from bench.config.model import parse_benchmark

    bench = parse_benchmark(REGISTRY.use_cases["uc3"].default_benchmark())
    (days,) = [t for t in bench.loadTypes if t.typeName == "AggregationDurationDays"]
    (ref,) = days.patchers
    sut = {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"params": {}}}
    out = REGISTRY.patchers[ref.type].patch([sut], 3, ref.properties)[0]
    assert out["spec"]["params"]["windowSizeMs"] == 3 * 86_400_000
