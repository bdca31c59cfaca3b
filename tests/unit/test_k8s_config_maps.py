"""The reference's configMap resource sets: read from the cluster on ``--platform
kubernetes`` (here through a fake reader or a fake client), named as pending on
``--dry-run``, refused in one line elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.launch import dry_run, prepare_run, resolve_run
from bench.config.base import ConfigError
from bench.config.files import FileError
from bench.execution.deployment import build_objects
from bench.platforms.kubernetes.config_maps import read_sets
from bench.plugins import load_plugins

REGISTRY = load_plugins()
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "uc1-helper"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "helper"}},
             "template": {"metadata": {"labels": {"app": "helper"}},
                          "spec": {"containers": [{"name": "helper", "image": "busybox"}]}}},
}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "uc1-helper"},
           "spec": {"ports": [{"port": 80}]}}


def benchmark_file(tmp_path: Path, files: list[str] | None = None) -> Path:
    """uc1's benchmark with a configMap set between the BenchSut and nothing else, whose
    Deployment the Instances resource type scales by its key, as a reference file names it."""
    doc = REGISTRY.use_cases["uc1"].default_benchmark()
    cm: dict[str, Any] = {"name": "uc1-helper-resources"}
    if files is not None:
        cm["files"] = files
    doc["sut"] = {"resources": [*doc["sut"]["resources"], {"configMap": cm}]}
    instances = next(t for t in doc["resourceTypes"] if t["typeName"] == "Instances")
    instances["patchers"].append({"type": "ReplicaPatcher", "resource": "helper-deployment.yaml"})
    path = tmp_path / "benchmark.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def opts(path: Path, **more: Any) -> dict[str, Any]:
    return {"plugin": "uc1", "benchmark_file": str(path), "loads": "1000", "resources": "3", **more}


def fake_reader(texts: dict[str, str], seen: list[Any]) -> Any:
    def read(sets: Any, options: Any) -> list[list[tuple[str, str]]]:
        seen.append((list(sets), options.get("namespace")))
        return [[(k, texts[k]) for k in cm.get("files") or sorted(texts)] for cm in sets]

    return read


def test_kubernetes_reads_the_set_and_patchers_apply_to_its_manifests(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    texts = {"helper-deployment.yaml": yaml.safe_dump(DEPLOYMENT),
             "helper-service.yaml": yaml.safe_dump(SERVICE) + "---\n" + yaml.safe_dump({**SERVICE, "metadata": {
                 "name": "uc1-helper-2"}})}
    monkeypatch.setattr("bench.platforms.kubernetes.config_maps.read_config_maps", fake_reader(texts, seen))
    path = benchmark_file(tmp_path, ["helper-deployment.yaml", "helper-service.yaml"])
    prepared = resolve_run(REGISTRY, opts(path, platform_name="kubernetes", namespace="team-a"))
    assert seen[0][1] == "team-a" and seen[0][0][0]["name"] == "uc1-helper-resources"
    sut = prepared.benchmark.sut
    assert sut.configMaps == []
    assert [(o["kind"], o["metadata"]["name"]) for o in sut.resources] == [
        ("BenchSut", "sut"), ("Deployment", "uc1-helper"), ("Service", "uc1-helper"), ("Service", "uc1-helper-2")]
    assert sut.resources[1]["metadata"]["annotations"]["bench/source"] == "helper-deployment.yaml"
    objects = build_objects(REGISTRY, prepared.benchmark, prepared.execution, prepared.params, 1000, 3)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 3


def test_a_key_that_is_no_manifest_or_bad_yaml_is_one_line_naming_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = benchmark_file(tmp_path, ["helper-deployment.yaml"])
    for text, says in (("a: 1\na: 2\n", "key 'helper-deployment.yaml'"),
                       ("- just\n- a list\n", "does not hold a Kubernetes manifest")):
        monkeypatch.setattr("bench.platforms.kubernetes.config_maps.read_config_maps",
                            fake_reader({"helper-deployment.yaml": text}, []))
        with pytest.raises((ConfigError, FileError), match=says) as info:
            resolve_run(REGISTRY, opts(path, platform_name="kubernetes"))
        assert "configMap 'uc1-helper-resources'" in str(info.value) and "\n" not in str(info.value)


def test_dry_run_says_which_config_maps_it_would_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(*_: Any) -> Any:
        raise AssertionError("--dry-run read the cluster")

    monkeypatch.setattr("bench.platforms.kubernetes.config_maps.read_config_maps", unreachable)
    path = benchmark_file(tmp_path, ["helper-deployment.yaml"])
    options = opts(path, platform_name="kubernetes", namespace="team-a", dry_run=True)
    out = dry_run(REGISTRY, prepare_run(REGISTRY, options), options)
    assert ("# benchmark.sut.resources[1]: would read ConfigMap 'uc1-helper-resources' (helper-deployment.yaml) "
            "from namespace 'team-a'") in out
    assert "SparkApplication" in out  # the rest is rendered as always


@pytest.mark.parametrize("platform", ["embedded", "external"])
def test_other_platforms_refuse_the_set_in_one_line(tmp_path: Path, platform: str) -> None:
    path = benchmark_file(tmp_path, ["helper-deployment.yaml"])
    extra = {"bootstrap_servers": "localhost:9092"} if platform == "external" else {}
    with pytest.raises(ConfigError) as info:
        resolve_run(REGISTRY, opts(path, platform_name=platform, **extra))
    message = str(info.value)
    assert "benchmark.sut.resources[1].configMap 'uc1-helper-resources'" in message
    assert f"the {platform} platform" in message
    assert "--platform kubernetes" in message and "fileSystem" in message and "\n" not in message


class FakeClient:
    def __init__(self, stored: dict[str, dict[str, str]]) -> None:
        self.stored = stored

    async def get(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        data = self.stored.get(obj["metadata"]["name"])
        return None if data is None else {"kind": "ConfigMap", "data": data}


def read(stored: dict[str, dict[str, str]], sets: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    return asyncio.run(read_sets(FakeClient(stored), sets, "namespace 'team-a'"))  # type: ignore[arg-type]


def test_a_missing_config_map_or_key_names_the_config_map_the_key_and_the_namespace() -> None:
    with pytest.raises(ValueError, match=r"ConfigMap 'cm' \(keys a.yaml\) does not exist in namespace 'team-a'"):
        read({}, [{"name": "cm", "files": ["a.yaml"]}])
    with pytest.raises(ValueError, match=r"ConfigMap 'cm' in namespace 'team-a' has no key 'b.yaml' "
                                         r"\(its keys: a.yaml\)"):
        read({"cm": {"a.yaml": "kind: X"}}, [{"name": "cm", "files": ["a.yaml", "b.yaml"]}])


def test_without_files_every_yaml_key_is_read_in_name_order() -> None:
    stored = {"cm": {"b.yml": "kind: B", "a.yaml": "kind: A", "notes.txt": "hello"}}
    assert read(stored, [{"name": "cm"}]) == [[("a.yaml", "kind: A"), ("b.yml", "kind: B")]]
    with pytest.raises(ValueError, match="has no \\*.yaml key"):
        read({"cm": {"notes.txt": "x"}}, [{"name": "cm"}])


def test_without_a_kubeconfig_the_read_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.platforms.kubernetes.config_maps import read_config_maps

    for var in ("KUBERNETES_SERVICE_HOST", "BENCH_K8S_API_URL", "BENCH_K8S_IN_CLUSTER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    with pytest.raises(ValueError, match="configMap resource sets cannot be read: no kubeconfig"):
        read_config_maps([{"name": "cm"}], {})


def test_validation_without_a_platform_names_the_way_out() -> None:
    from bench.config.model import parse_benchmark, validate_benchmark

    doc = REGISTRY.use_cases["uc1"].default_benchmark()
    doc["loadGenerator"] = {"resources": [{"configMap": {"name": "gen", "files": ["g.yaml"]}}]}
    with pytest.raises(ConfigError, match=r"loadGenerator.resources\[0\].configMap 'gen': without --platform "
                                          r"kubernetes, bench reads no ConfigMap .*fileSystem resource set"):
        validate_benchmark(parse_benchmark(doc), REGISTRY)


def test_an_infrastructure_set_is_refused_without_reading_the_cluster(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(*_: Any) -> Any:
        raise AssertionError("the cluster was read for a set bench refuses")

    monkeypatch.setattr("bench.platforms.kubernetes.config_maps.read_config_maps", unreachable)
    doc = REGISTRY.use_cases["uc1"].default_benchmark()
    doc["infrastructure"] = {"resources": [{"configMap": {"name": "infra", "files": ["kafka.yaml"]}}]}
    path = tmp_path / "benchmark.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match="benchmark.infrastructure.resources: bench deploys no long-lived"):
        resolve_run(REGISTRY, opts(path, platform_name="kubernetes"))
