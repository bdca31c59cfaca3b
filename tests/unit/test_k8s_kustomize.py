"""The kustomize package (deploy/kustomize) renders with the real tool, and what it renders,
like every object bench itself renders for Kubernetes, fits the Kubernetes API schema
(the models of kubernetes-asyncio: every field known, of its type, required ones set).

The tool is ``kubectl kustomize`` (scripts/test installs Debian's kubernetes-client where
kubectl is missing) or a standalone ``kustomize``; without either the rendering test is
skipped with that reason, the schema checks of bench's own objects still run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.platforms.kubernetes.manifests import render_manifests
from kubernetes_asyncio import client as k8s

PACKAGE = Path(__file__).resolve().parents[2] / "deploy" / "kustomize"
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object, "datetime": str}


def kustomize_command() -> list[str] | None:
    if shutil.which("kubectl"):
        probe = subprocess.run(["kubectl", "kustomize", "--help"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0:
            return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


def schema_errors(value: Any, type_name: str, where: str) -> list[str]:
    """What in ``value`` the API type ``type_name`` (as kubernetes-asyncio spells it) does
    not allow: unknown fields, wrong types. Walked by hand because the client's own
    deserializer drops unknown fields silently."""
    if type_name.startswith("list["):
        if not isinstance(value, list):
            return [f"{where}: expected a list"]
        return [e for i, v in enumerate(value) for e in schema_errors(v, type_name[5:-1], f"{where}[{i}]")]
    if type_name.startswith("dict("):
        inner = re.match(r"dict\(str, (.*)\)$", type_name)
        if not isinstance(value, dict) or inner is None:
            return [f"{where}: expected a mapping"]
        return [e for k, v in value.items() for e in schema_errors(v, inner.group(1), f"{where}.{k}")]
    if type_name in PRIMITIVES:
        ok = isinstance(value, PRIMITIVES[type_name]) and not (type_name == "int" and isinstance(value, bool))
        return [] if ok else [f"{where}: expected {type_name}, got {type(value).__name__}"]
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        return [f"{where}: expected an object ({type_name})"]
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    errors = []
    for key, item in value.items():
        if key not in by_json:
            errors.append(f"{where}.{key}: not a field of {type_name}")
        else:
            errors += schema_errors(item, model.openapi_types[by_json[key]], f"{where}.{key}")
    return errors


def build(value: Any, type_name: str) -> Any:
    """The client's model objects for ``value``: their constructors refuse a required
    field that is missing (client-side validation)."""
    if type_name.startswith("list["):
        return [build(v, type_name[5:-1]) for v in value]
    if type_name.startswith("dict("):
        inner = type_name[len("dict(str, "):-1]
        return {k: build(v, inner) for k, v in value.items()}
    if type_name in PRIMITIVES:
        return value
    model = getattr(k8s, type_name)
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    return model(**{by_json[k]: build(v, model.openapi_types[by_json[k]]) for k, v in value.items()})


def check_object(obj: dict[str, Any]) -> None:
    """Unknown fields and types by walking, required fields by the client's models."""
    version = obj["apiVersion"].split("/")[-1]
    type_name = version[0].upper() + version[1:] + obj["kind"]
    name = f"{obj['kind']}/{obj['metadata']['name']}"
    assert hasattr(k8s, type_name), f"{name}: no API type {type_name}"
    errors = schema_errors(obj, type_name, name)
    assert not errors, errors
    build(obj, type_name)  # raises on a missing required field


def test_the_checker_finds_unknown_fields_wrong_types_and_missing_required_ones() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always"}]}}}}
    check_object(job)
    typo = {**job, "spec": {**job["spec"], "backofLimit": 1}}
    assert schema_errors(typo, "V1Job", "Job/j") == ["Job/j.spec.backofLimit: not a field of V1JobSpec"]
    assert schema_errors({**job, "spec": {**job["spec"], "parallelism": "2"}}, "V1Job", "Job/j") == [
        "Job/j.spec.parallelism: expected int, got str"]
    nameless = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"template": {"spec": {"containers": [{"image": "i"}]}}}}
    with pytest.raises(ValueError, match="name"):
        check_object(nameless)


def test_the_package_renders_with_kustomize_and_fits_the_api_schema() -> None:
    command = kustomize_command()
    if command is None:
        pytest.skip("neither `kubectl kustomize` nor `kustomize` is installed (scripts/test installs "
                    "Debian's kubernetes-client)")
    out = subprocess.run([*command, str(PACKAGE)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    objs = [d for d in yaml.safe_load_all(out.stdout) if d]
    kinds = sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objs)
    options = next(o for o in objs if o["kind"] == "ConfigMap")["metadata"]["name"]
    assert options.startswith("bench-runner-options-")  # generated, with its content hash
    assert kinds == sorted(["ServiceAccount/bench", "ServiceAccount/bench-spark", "Role/bench", "Role/bench-spark",
                            "RoleBinding/bench", "RoleBinding/bench-spark", "Job/bench-run",
                            f"ConfigMap/{options}"])
    for obj in objs:
        check_object(obj)
        assert obj["metadata"]["labels"]["app.kubernetes.io/part-of"] == "bench"
    runner = next(o for o in objs if o["kind"] == "Job")
    pod = runner["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "bench"
    assert pod["containers"][0]["envFrom"] == [{"configMapRef": {"name": options}}]  # the hashed name


def experiment() -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="exp1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict),
        objects=[
            {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 2, "params": {}}},
            {"kind": "BenchGenerator", "metadata": {"name": "generator"},
             "spec": {"replicas": 2, "sensors": 100, "periodMs": 1000, "params": {}}},
        ],
        topics=[TopicSpec("input", "input-exp1", 4)],
        params={},
        load=100,
        resources=2,
    )


@pytest.mark.parametrize("secured", [False, True])
def test_every_core_object_bench_renders_fits_the_api_schema(secured: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if secured:
        monkeypatch.setenv("BENCH_KAFKA_CONFIG", '{"security.protocol": "SASL_SSL"}')
    objs = render_manifests(experiment(), {"sut_mode": "standalone", "spark_conf": {"spark.x": "1"}})
    objs += [o for o in render_manifests(experiment(), {}) if o["kind"] != "SparkApplication"]  # a CRD
    assert {o["kind"] for o in objs} == {"ConfigMap", "Deployment", "Service", "Job", "StatefulSet"}
    for obj in objs:
        check_object(obj)
