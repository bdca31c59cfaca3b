"""A configMap resource set read from a Kubernetes API (kmock's emulator) when a
``--platform kubernetes`` run is prepared: the manifest in the ConfigMap is validated,
patched and rendered like one read from disk; a missing key stops the run before anything
is created."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import kmock
import pytest
import yaml
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.execution.deployment import build_objects
from bench.platforms.kubernetes.client import KubeClient
from bench.plugins import load_plugins
from kubernetes_asyncio.client import ApiClient, Configuration

pytestmark = pytest.mark.e2e

NS = "bench-cm"
REGISTRY = load_plugins()
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "uc1-helper"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "helper"}},
             "template": {"metadata": {"labels": {"app": "helper"}},
                          "spec": {"containers": [{"name": "helper", "image": "busybox"}]}}},
}


@pytest.fixture()
async def cluster(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Any, KubeClient]]:
    async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator) as srv:
        url = str(srv.url).rstrip("/")
        monkeypatch.setenv("BENCH_K8S_API_URL", url)
        api = ApiClient(Configuration(host=url))
        try:
            yield emulator, KubeClient(api, NS)
        finally:
            await api.close()


def benchmark_file(tmp_path: Path, files: list[str]) -> Path:
    doc = REGISTRY.use_cases["uc1"].default_benchmark()
    doc["sut"] = {"resources": [*doc["sut"]["resources"],
                                {"configMap": {"name": "uc1-helper-resources", "files": files}}]}
    instances = next(t for t in doc["resourceTypes"] if t["typeName"] == "Instances")
    instances["patchers"].append({"type": "ReplicaPatcher", "resource": "helper-deployment.yaml"})
    path = tmp_path / "benchmark.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def stored_kinds(emulator: Any) -> list[str]:
    return sorted(emulator.objects[key].raw["kind"] for key in list(emulator.objects)
                  if not emulator.objects[key].deleted)


async def test_the_config_map_is_read_patched_and_rendered(cluster: tuple[Any, KubeClient], tmp_path: Path) -> None:
    emulator, client = cluster
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "uc1-helper-resources"},
                         "data": {"helper-deployment.yaml": yaml.safe_dump(DEPLOYMENT)}})
    opts = {"plugin": "uc1", "benchmark_file": str(benchmark_file(tmp_path, ["helper-deployment.yaml"])),
            "platform_name": "kubernetes", "namespace": NS, "loads": "1000", "resources": "3"}
    # prepared outside the test's event loop, which serves the emulator
    prepared = await asyncio.to_thread(resolve_run, REGISTRY, opts)
    read = [o for o in prepared.benchmark.sut.resources if o["kind"] == "Deployment"]
    assert [o["metadata"]["name"] for o in read] == ["uc1-helper"]
    assert read[0]["metadata"]["annotations"]["bench/source"] == "helper-deployment.yaml"
    objects = build_objects(REGISTRY, prepared.benchmark, prepared.execution, prepared.params, 1000, 3)
    assert next(o for o in objects if o["kind"] == "Deployment")["spec"]["replicas"] == 3
    render = REGISTRY.platforms["kubernetes"].render
    assert render is not None
    from bench.api import ExperimentSpec

    spec = ExperimentSpec(experiment_id="exp1", use_case=prepared.use_case, objects=objects, topics=[], params={},
                          load=1000, resources=3)
    rendered = next(m for m in render(spec, prepared.platform_options) if m["kind"] == "Deployment")
    assert rendered["spec"]["replicas"] == 3 and rendered["metadata"]["namespace"] == NS
    assert stored_kinds(emulator) == ["ConfigMap"]  # reading created nothing


async def test_a_missing_key_stops_the_run_before_anything_is_created(cluster: tuple[Any, KubeClient],
                                                                     tmp_path: Path) -> None:
    emulator, client = cluster
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "uc1-helper-resources"},
                         "data": {"other.yaml": yaml.safe_dump(DEPLOYMENT)}})
    opts = {"plugin": "uc1", "benchmark_file": str(benchmark_file(tmp_path, ["helper-deployment.yaml"])),
            "platform_name": "kubernetes", "namespace": NS}
    with pytest.raises(ConfigError) as info:
        await asyncio.to_thread(resolve_run, REGISTRY, opts)
    message = str(info.value)
    assert "ConfigMap 'uc1-helper-resources'" in message and "'helper-deployment.yaml'" in message
    assert f"namespace '{NS}'" in message and "\n" not in message
    other = {**opts, "namespace": "elsewhere"}
    with pytest.raises(ConfigError, match="'uc1-helper-resources' .*does not exist in namespace 'elsewhere'"):
        await asyncio.to_thread(resolve_run, REGISTRY, other)
    assert stored_kinds(emulator) == ["ConfigMap"]
