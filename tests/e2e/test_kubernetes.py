"""The kubernetes platform against kmock, a real HTTP server emulating the Kubernetes API.

kmock stores objects and serves create/get/list/patch/delete/watch, but schedules
nothing: no pod ever runs. A small fake controller in these tests writes the status
fields a real controller would (readyReplicas, the SparkApplication's state, a
KafkaTopic's Ready condition), through the API, so that readiness arrives as watch
events. What is tested is what the framework sends and how it reacts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import kmock
import pytest
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.platforms.kubernetes.client import ForbiddenError, KubeClient, ReadinessTimeout
from bench.platforms.kubernetes.manifests import ObjectFailed, render_manifests
from bench.platforms.kubernetes.platform import KubernetesPlatform
from kubernetes_asyncio.client import ApiClient, Configuration

pytestmark = pytest.mark.e2e

NS = "bench-test"
USE_CASE = UseCase(name="uc1", description="test", default_benchmark=lambda: {})


def experiment(replicas: int = 2, sensors: int = 1000, extra: list[dict[str, Any]] | None = None) -> ExperimentSpec:
    objects = [
        {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": replicas, "params": {}}},
        {
            "kind": "BenchGenerator",
            "metadata": {"name": "generator"},
            "spec": {"replicas": 1, "sensors": sensors, "periodMs": 1000, "params": {}},
        },
        *(extra or []),
    ]
    return ExperimentSpec(
        experiment_id=f"exp1-{replicas}",
        use_case=USE_CASE,
        objects=objects,
        topics=[TopicSpec("input", "input-exp1", 4), TopicSpec("output", "output-exp1", 4)],
        params={"windowSizeMs": 60000},
        load=sensors,
        resources=replicas,
    )


@pytest.fixture()
async def server() -> AsyncIterator[tuple[Any, str]]:
    async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator) as srv:
        yield emulator, str(srv.url).rstrip("/")


@pytest.fixture()
async def client(server: tuple[Any, str]) -> AsyncIterator[KubeClient]:
    api = ApiClient(Configuration(host=server[1]))
    yield KubeClient(api, NS)
    await api.close()


def status_for(obj: dict[str, Any]) -> dict[str, Any] | None:
    """What a real controller would eventually report for a healthy object."""
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind in ("Deployment", "StatefulSet"):
        return {"readyReplicas": spec.get("replicas", 1)}
    if kind == "Job":
        return {"active": 1}
    if kind == "SparkApplication":
        return {"applicationState": {"state": "RUNNING"}}
    if kind == "KafkaTopic":
        return {"conditions": [{"type": "Ready", "status": "True"}]}
    return None


@contextlib.asynccontextmanager
async def fake_controller(emulator: Any, client: KubeClient, delay: float = 0.3) -> AsyncIterator[list[str]]:
    """Marks every stored object ready after ``delay``; yields the names it touched."""
    touched: list[str] = []

    async def loop() -> None:
        while True:
            await asyncio.sleep(delay)
            for key in list(emulator.objects):
                obj = emulator.objects[key]
                if obj.deleted:
                    continue
                raw = obj.raw
                status = status_for(raw)
                if status is None or raw.get("status") == status:
                    continue
                await client.patch(
                    {
                        "apiVersion": raw["apiVersion"],
                        "kind": raw["kind"],
                        "metadata": {"name": raw["metadata"]["name"], "namespace": raw["metadata"]["namespace"]},
                        "status": status,
                    }
                )
                touched.append(f"{raw['kind']}/{raw['metadata']['name']}")

    task = asyncio.create_task(loop())
    try:
        yield touched
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def stored(emulator: Any) -> dict[str, dict[str, Any]]:
    return {
        f"{o.raw['kind']}/{o.raw['metadata']['name']}": o.raw
        for key in list(emulator.objects)
        for o in [emulator.objects[key]]
        if not o.deleted
    }


@pytest.fixture()
async def platform(server: tuple[Any, str]) -> AsyncIterator[KubernetesPlatform]:
    p = KubernetesPlatform({"namespace": NS, "api_url": server[1], "ready_timeout": 10, "teardown_timeout": 10})
    await p.open()
    yield p
    await p.close()


# ------------------------------------------------------------------ rendering (pure)


def test_render_spark_application_executors_follow_replicas() -> None:
    objs = render_manifests(experiment(replicas=3), {"namespace": NS, "image": "bench:1"})
    kinds = [(o["kind"], o["metadata"]["annotations"]["bench/role"]) for o in objs]
    assert kinds == [
        ("ConfigMap", "sut"),
        ("SparkApplication", "sut"),
        ("Service", "generator"),
        ("StatefulSet", "generator"),
    ]
    app = objs[1]
    assert app["spec"]["executor"]["instances"] == 3
    assert app["spec"]["image"] == "bench:1"
    assert all(o["metadata"]["namespace"] == NS for o in objs)
    assert all(o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "bench" for o in objs)
    gen = objs[3]
    env = {e["name"]: e["value"] for e in gen["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["BENCH_SENSORS"] == "1000"
    assert env["BENCH_TOPIC"] == "input-exp1"


def test_render_standalone_variant_and_passthrough() -> None:
    raw = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "uc1-load-generator-config"},
        "data": {"a": "b"},
    }
    objs = render_manifests(experiment(replicas=4, extra=[raw]), {"sut_mode": "standalone"})
    names = [(o["kind"], o["metadata"]["name"]) for o in objs]
    assert names[:5] == [
        ("ConfigMap", "bench-uc1-sut-spec"),
        ("Deployment", "bench-uc1-sut-master"),
        ("Service", "bench-uc1-sut-master"),
        ("Deployment", "bench-uc1-sut-worker"),
        ("Job", "bench-uc1-sut-driver"),
    ]
    assert objs[3]["spec"]["replicas"] == 4
    assert ("ConfigMap", "uc1-load-generator-config") in names[5:]  # a generator object by its name
    assert objs[0]["data"]["spec.json"].count('"spark_master": "spark://bench-uc1-sut-master:7077"') == 1


def test_render_is_pure() -> None:
    spec = experiment()
    before = repr(spec.objects)
    assert render_manifests(spec) == render_manifests(spec)
    assert repr(spec.objects) == before


# ------------------------------------------------------------------ against kmock


async def test_deploy_waits_for_readiness_by_watch(
    server: tuple[Any, str], platform: KubernetesPlatform, client: KubeClient
) -> None:
    emulator, _ = server
    spec = experiment(replicas=2)
    async with fake_controller(emulator, client) as touched:
        await platform.start_sut(spec)
        assert "SparkApplication/bench-uc1-sut" in touched
        objs = stored(emulator)
        assert objs["SparkApplication/bench-uc1-sut"]["spec"]["executor"]["instances"] == 2
        assert objs["SparkApplication/bench-uc1-sut"]["status"]["applicationState"]["state"] == "RUNNING"
        assert "StatefulSet/bench-uc1-generator" not in objs  # generators come later
        await platform.start_generators(spec)
        assert stored(emulator)["StatefulSet/bench-uc1-generator"]["status"] == {"readyReplicas": 1}
    watches = [r for r in emulator if r.params.get("watch") == "true"]
    assert watches, "readiness must be awaited through watch requests"


async def test_readiness_timeout_names_the_object(server: tuple[Any, str]) -> None:
    _, url = server
    p = KubernetesPlatform({"namespace": NS, "api_url": url, "ready_timeout": 0.5})
    await p.open()
    try:
        with pytest.raises(ReadinessTimeout, match=r"SparkApplication/bench-uc1-sut in namespace 'bench-test'"):
            await p.start_sut(experiment())
    finally:
        await p.close()


async def test_failed_spark_application_stops_the_wait(
    server: tuple[Any, str], platform: KubernetesPlatform, client: KubeClient
) -> None:
    async def fail_soon() -> None:
        await asyncio.sleep(0.3)
        await client.patch(
            {
                "apiVersion": "sparkoperator.k8s.io/v1beta2",
                "kind": "SparkApplication",
                "metadata": {"name": "bench-uc1-sut"},
                "status": {"applicationState": {"state": "FAILED", "errorMessage": "driver OOM"}},
            }
        )

    task = asyncio.create_task(fail_soon())
    with pytest.raises(ObjectFailed, match="driver OOM"):
        await platform.start_sut(experiment())
    await task


async def test_existing_object_is_patched_on_conflict(
    server: tuple[Any, str], platform: KubernetesPlatform, client: KubeClient
) -> None:
    emulator, _ = server
    leftover = render_manifests(experiment(replicas=1), {"namespace": NS})[1]
    await client.create(leftover)
    async with fake_controller(emulator, client):
        await platform.start_sut(experiment(replicas=5))  # scale: 1 -> 5 through 409 + patch
    assert stored(emulator)["SparkApplication/bench-uc1-sut"]["spec"]["executor"]["instances"] == 5
    posts = [r for r in emulator if str(r.method.value) == "POST" and "sparkapplications" in r.url.path]
    patches = [r for r in emulator if str(r.method.value) == "PATCH" and r.url.path.endswith("/bench-uc1-sut")]
    assert len(posts) == 2 and patches
    assert patches[0].headers.get("Content-Type", "").startswith("application/merge-patch+json")


async def test_teardown_reverse_order_and_waits_until_gone(
    server: tuple[Any, str], platform: KubernetesPlatform, client: KubeClient
) -> None:
    emulator, _ = server
    spec = experiment()
    async with fake_controller(emulator, client):
        await platform.start_sut(spec)
        await platform.start_generators(spec)
    # a finalizer keeps the StatefulSet around until "its controller" releases it
    await client.patch(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "bench-uc1-generator", "finalizers": ["test/hold"]},
        }
    )
    released = asyncio.Event()

    async def release() -> None:
        while "deletionTimestamp" not in stored(emulator)["StatefulSet/bench-uc1-generator"]["metadata"]:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        released.set()
        await client.patch(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "bench-uc1-generator", "finalizers": []},
            }
        )

    task = asyncio.create_task(release())
    reports = await platform.stop_generators(spec)
    assert released.is_set(), "stop_generators returned before the object was gone"
    await task
    assert list(reports) == []
    assert "StatefulSet/bench-uc1-generator" not in stored(emulator)
    await platform.stop_sut(spec)
    assert stored(emulator) == {}
    deletes = [r.url.path.rsplit("/", 1)[1] for r in emulator if str(r.method.value) == "DELETE"]
    assert deletes == ["bench-uc1-generator", "bench-uc1-generator", "bench-uc1-sut", "bench-uc1-sut-spec"]
    # objects already gone (404 on delete) are fine
    await platform.stop_sut(spec)


async def test_forbidden_names_verb_and_object(server: tuple[Any, str], platform: KubernetesPlatform) -> None:
    emulator, _ = server
    emulator["post", kmock.resource("sparkoperator.k8s.io", "v1beta2", "sparkapplications")] << kmock.KubernetesError(
        status=403, reason="Forbidden", message="sparkapplications is forbidden for the service account"
    )
    with pytest.raises(ForbiddenError) as info:
        await platform.start_sut(experiment())
    text = str(info.value)
    assert "may not create SparkApplication/bench-uc1-sut in namespace 'bench-test'" in text
    assert "sparkapplications is forbidden" in text
    assert info.value.status == 403


async def test_strimzi_topics_reset(server: tuple[Any, str], client: KubeClient) -> None:
    emulator, url = server
    p = KubernetesPlatform(
        {
            "namespace": NS,
            "api_url": url,
            "topics": "strimzi",
            "kafka_cluster": "kc",
            "ready_timeout": 10,
            "teardown_timeout": 10,
        }
    )
    await p.open()
    try:
        spec = experiment()
        async with fake_controller(emulator, client):
            await p.reset_topics(spec)
            topics = {k: v for k, v in stored(emulator).items() if k.startswith("KafkaTopic/")}
            assert set(topics) == {"KafkaTopic/input-exp1", "KafkaTopic/output-exp1"}
            assert topics["KafkaTopic/input-exp1"]["spec"] == {
                "topicName": "input-exp1",
                "partitions": 4,
                "replicas": 1,
            }
            assert topics["KafkaTopic/input-exp1"]["metadata"]["labels"]["strimzi.io/cluster"] == "kc"
            await p.reset_topics(spec)  # again: deletes the leftovers first, then recreates
        await p.delete_topics(spec)
        assert not [k for k in stored(emulator) if k.startswith("KafkaTopic/")]
    finally:
        await p.close()


async def test_kafka_topics_need_bootstrap_servers(platform: KubernetesPlatform) -> None:
    with pytest.raises(ValueError, match="--bootstrap-servers"):
        await platform.reset_topics(experiment())


# ------------------------------------------------------------------ deploy/ files

DEPLOY = __import__("pathlib").Path(__file__).resolve().parents[2] / "deploy"


def test_deploy_files_parse_and_default_manifests_are_fresh() -> None:
    """Every YAML parses as Kubernetes objects (the kustomization included)."""
    import subprocess
    import sys

    import yaml

    for path in DEPLOY.rglob("*.yaml"):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        assert docs, path
        assert all("kind" in d and "apiVersion" in d for d in docs), path
    result = subprocess.run(
        [sys.executable, str(DEPLOY / "render_defaults.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_rbac_is_least_privilege_and_covers_what_the_platform_does() -> None:
    import yaml
    from bench.platforms.kubernetes.client import plural_of
    from bench.platforms.kubernetes.options import DEFAULTS

    docs = list(yaml.safe_load_all((DEPLOY / "kustomize" / "rbac.yaml").read_text()))
    assert not [d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    role = next(d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "bench")
    granted: dict[tuple[str, str], set[str]] = {}
    named: dict[tuple[str, str], tuple[set[str], list[str]]] = {}
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for res in rule["resources"]:
                assert "*" not in (group, res) and "*" not in rule["verbs"]
                if rule.get("resourceNames"):
                    named[(group, res)] = (set(rule["verbs"]), rule["resourceNames"])
                else:
                    granted[(group, res)] = set(rule["verbs"])
    assert "pods/exec" not in {k[1] for k in [*granted, *named]}
    # of Secrets: create (RBAC cannot name what is created) and the rest on bench's one Secret only
    assert granted[("", "secrets")] == {"create"}
    assert named[("", "secrets")] == ({"get", "patch", "delete"}, [DEFAULTS["kafka_secret"]])
    needed = {"create", "patch", "get", "list", "watch", "delete"}
    objs = render_manifests(experiment(), {}) + render_manifests(experiment(), {"sut_mode": "standalone"})
    objs += KubernetesPlatform({"topics": "strimzi"}).kafka_topics(experiment())
    for obj in objs:
        api = obj["apiVersion"]
        group = api.split("/")[0] if "/" in api else ""
        key = (group, plural_of(obj["kind"])[0])
        assert key in granted, f"rbac.yaml grants nothing on {key}"
        assert needed <= granted[key], f"rbac.yaml misses {needed - granted[key]} on {key}"


def test_grafana_dashboard_uses_existing_metrics() -> None:
    import json
    import re

    import bench.metrics  # noqa: F401 - registers the metrics
    from prometheus_client import REGISTRY

    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    # metric families (a counter is exposed as <name>_total); labelled ones have no samples yet
    exported = {n for m in REGISTRY.collect() for n in (m.name, f"{m.name}_total")}
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    used = {name for e in exprs for name in re.findall(r"\b(bench_[a-z_]+)", e)}
    assert used and used <= exported, used - exported


def test_generator_instances_take_contiguous_key_ranges() -> None:
    from bench.platforms.kubernetes.generator_entry import instance_index, instance_spec

    env = {
        "BENCH_BOOTSTRAP_SERVERS": "kafka:9092",
        "BENCH_SENSORS": "10",
        "BENCH_INSTANCES": "3",
        "BENCH_TOPIC": "input-x",
        "BENCH_PARAMS": '{"a": 1}',
    }
    shares = [instance_spec({**env, "HOSTNAME": f"bench-uc1-generator-{i}"})["keys"] for i in range(3)]
    assert shares == [["s_0", "s_1", "s_2", "s_3"], ["s_4", "s_5", "s_6", "s_7"], ["s_8", "s_9"]]
    assert instance_index({"BENCH_INSTANCE_INDEX": "2", "HOSTNAME": "x-0"}) == 2
    spec = instance_spec({**env, "HOSTNAME": "bench-uc1-generator-7"})
    assert spec["keys"] == [] and spec["topic"] == "input-x" and spec["params"] == {"a": 1, "keyOffset": 10}
    # where each share starts, as on the embedded platform (instance 0 does the one-off work)
    offsets = [instance_spec({**env, "HOSTNAME": f"g-{i}"})["params"]["keyOffset"] for i in range(3)]
    assert offsets == [0, 4, 8]


async def test_kafka_admin_topics_and_lag_on_the_shared_broker(kafka_bootstrap: str) -> None:
    """Without Strimzi, topics and lag go through the Kafka admin API (real broker)."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient

    p = KubernetesPlatform({"api_url": "http://127.0.0.1:1", "bootstrap_servers": kafka_bootstrap})
    await p.open()
    spec = experiment()
    spec.experiment_id = "k8s-kafka"
    spec.topics = [TopicSpec("input", "k8s-input-t1", 2), TopicSpec("output", "k8s-output-t1", 2)]
    spec.group_id = "k8s-group-t1"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await p.reset_topics(spec)
        described = {d["topic"]: len(d["partitions"]) for d in await admin.describe_topics(["k8s-input-t1"])}
        assert described == {"k8s-input-t1": 2}
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
        await producer.start()
        try:
            for i in range(50):
                await producer.send_and_wait("k8s-input-t1", f"v{i}".encode(), partition=i % 2)
        finally:
            await producer.stop()
        sample = await p.sample(spec)
        assert sample.values["lag"] == 50.0  # nobody consumed: lag = every record
        await p.delete_topics(spec)
    finally:
        await admin.close()
        await p.close()


# ------------------------------------------------------------------ issue 25: security, --job


async def test_kafka_security_secret_is_written_at_open_and_removed_at_close(
    server: tuple[Any, str], client: KubeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from bench.runtime.kafka import security

    emulator, url = server
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u",
                "sasl.password": "pw-never-in-a-manifest"}
    monkeypatch.setenv(security.ENV, json.dumps(settings))
    p = KubernetesPlatform({"namespace": NS, "api_url": url, "ready_timeout": 10, "teardown_timeout": 10})
    await p.open()
    try:
        secret = stored(emulator)["Secret/bench-kafka-client"]
        assert json.loads(secret["stringData"]["kafka-config.json"]) == settings
        async with fake_controller(emulator, client):
            await p.start_sut(experiment())
        objs = stored(emulator)
        app = objs["SparkApplication/bench-uc1-sut"]
        env = {e["name"]: e for e in app["spec"]["driver"]["env"]}
        assert env["BENCH_KAFKA_CONFIG"]["valueFrom"]["secretKeyRef"]["name"] == "bench-kafka-client"
        assert "pw-never-in-a-manifest" not in json.dumps([o for k, o in objs.items() if not k.startswith("Secret/")])
        await p.stop_sut(experiment())
    finally:
        await p.close()
    assert "Secret/bench-kafka-client" not in stored(emulator)


async def test_an_own_job_reaches_the_driver_as_a_config_map(
    server: tuple[Any, str], platform: KubernetesPlatform, client: KubeClient, tmp_path: Any
) -> None:
    import json

    emulator, _ = server
    script = tmp_path / "my_job.py"
    script.write_text("print('a job')\n")
    spec = experiment()
    spec.params = {"job": str(script), "jobArgs": "--in {input}"}
    async with fake_controller(emulator, client):
        await platform.start_sut(spec)
    objs = stored(emulator)
    assert objs["ConfigMap/bench-uc1-sut-job"]["data"] == {"my_job.py": "print('a job')\n"}
    payload = json.loads(objs["ConfigMap/bench-uc1-sut-spec"]["data"]["spec.json"])
    assert payload["params"]["job"] == "/etc/bench/job/my_job.py"
    await platform.stop_sut(spec)
    assert "ConfigMap/bench-uc1-sut-job" not in stored(emulator)
