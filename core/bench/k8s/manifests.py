"""Default Kubernetes manifests for the embedded platform's kinds, and readiness rules.

A benchmark written for the embedded platform describes its SUT as ``BenchSut``
(replicas = Spark instances, params) and its load as ``BenchGenerator`` (sensors,
replicas, periodMs, params). On Kubernetes these become:

- SUT, ``sut_mode: spark-operator`` (default): a SparkApplication of the Spark operator
  (executor instances = replicas) running ``bench.runtime.spark.driver``;
  ``sut_mode: standalone``: a Spark master Deployment + Service, a worker Deployment
  (replicas) and a driver Job, all from the pyspark wheel. Each executor (worker) has
  ``coresPerInstance`` cores and ``memoryPerInstanceMb`` MiB when the BenchSut has them
  (the CoresPerInstance and MemoryPerInstance resource types), else the options
  executor_cores (1) and executor_memory (1g). The driver pod serves its dropped and
  malformed records on port ``metrics`` (option sut_metrics_port, 9404) for Prometheus:
  label ``bench/metrics: "true"`` (deploy/podmonitor.yaml) and prometheus.io annotations.
- Generator: a StatefulSet (replicas = instances) running ``bench.k8s.generator_entry``.
  A StatefulSet rather than a Deployment because each instance must know its ordinal
  to take its own contiguous key range, as the reference's instances do.

Everything else in a benchmark is applied as written. Every object gets the labels
``app.kubernetes.io/managed-by: bench`` and ``bench/experiment`` and an annotation
``bench/role`` (sut|generator) that decides when it is started and stopped.

Every pod rendered here runs locked down (the Pod Security Standard "restricted"):
non-root (uid ``run_as_user``, the ``spark`` user of deploy/Dockerfile), no privilege
escalation, all capabilities dropped, the runtime's default seccomp profile. A benchmark
needs none of these privileges, and a cluster that enforces "restricted" must not
reject its pods. SUT and generator pods get no service-account token
(``automountServiceAccountToken: false``): they never call the API server, so a token
would only be something to steal. The one exception is the Spark operator's driver: it
creates its executor pods through the API, with ``spark_service_account``.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.api import Manifest
from bench.errors import UserError
from bench.platforms.base import ExperimentSpec

ROLE = "bench/role"
EXPERIMENT_LABEL = "bench/experiment"
MANAGED = {"app.kubernetes.io/managed-by": "bench"}
SPEC_DIR = "/etc/bench"
SPARK_DRIVER_FILE = "local:///opt/bench/spark_driver.py"

DEFAULTS: dict[str, Any] = {
    "namespace": "default",
    "image": "ghcr.io/example/bench:latest",
    "image_pull_policy": "IfNotPresent",
    "sut_mode": "spark-operator",
    "kafka_bootstrap": "my-cluster-kafka-bootstrap:9092",
    "spark_version": "4.0.1",
    "spark_service_account": "bench-spark",
    "executor_cores": 1,
    "executor_memory": "1g",
    "driver_memory": "1g",
    "trigger_seconds": None,
    "connector": "python",
    "run_as_user": 185,
    "sut_metrics_port": 9404,
}
#: what Prometheus scrapes: pods with this label, port ``metrics`` (deploy/podmonitor.yaml),
#: or the prometheus.io annotations of the kubernetes-pods scrape convention
METRICS_LABEL = {"bench/metrics": "true"}


def option(options: Mapping[str, Any] | None, key: str) -> Any:
    """A platform option: given options, else ``BENCH_K8S_<KEY>`` from the environment
    (so the CLI needs no flag per option), else the default."""
    value = (options or {}).get(key)
    if value is None and key == "kafka_bootstrap":
        value = (options or {}).get("bootstrap_servers")
    if value is None:
        value = os.environ.get(f"BENCH_K8S_{key.upper()}")
    return DEFAULTS.get(key) if value is None else value


def pod_security_context(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod-level half of the restricted profile (see the module docstring)."""
    return {
        "runAsNonRoot": True,
        "runAsUser": int(option(options, "run_as_user")),
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The container-level half; it repeats non-root and seccomp because the Spark
    operator copies only container contexts into executor pods on some versions."""
    return {
        "runAsNonRoot": True,
        "runAsUser": int(option(options, "run_as_user")),
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _pod_spec(options: Mapping[str, Any] | None, containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A pod template's spec with the restricted profile and no service-account token."""
    for container in containers:
        container["securityContext"] = container_security_context(options)
    return {
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(options),
        **extra,
        "containers": containers,
    }


def dns_name(*parts: str) -> str:
    """A DNS-1123 name (lowercase alphanumerics and '-', at most 63 characters)."""
    raw = "-".join(p for p in parts if p)
    name = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    return (name[:63].rstrip("-")) or "bench"


def role_of(obj: Manifest) -> str:
    """``generator`` or ``sut``: the annotation decides; else the kind; else the name."""
    meta = obj.get("metadata", {}) or {}
    annotated = (meta.get("annotations") or {}).get(ROLE)
    if annotated in ("sut", "generator"):
        return str(annotated)
    if obj.get("kind") == "BenchGenerator":
        return "generator"
    source = str((meta.get("annotations") or {}).get("bench/source", ""))
    if "generator" in str(meta.get("name", "")) or "generator" in source:
        return "generator"
    return "sut"


def _mark(obj: Manifest, role: str, experiment: str, namespace: str) -> Manifest:
    meta = obj.setdefault("metadata", {})
    meta.setdefault("namespace", namespace)
    meta["labels"] = {**(meta.get("labels") or {}), **MANAGED, EXPERIMENT_LABEL: dns_name(experiment)}
    meta["annotations"] = {**(meta.get("annotations") or {}), ROLE: role}
    return obj


def _labels(base: str, component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": base, "app.kubernetes.io/component": component}


def _spec_config_map(name: str, payload: Mapping[str, Any]) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"spec.json": json.dumps(payload, sort_keys=True)},
    }


def _env_list(env: Mapping[str, Any] | None) -> list[dict[str, str]]:
    return [{"name": str(k), "value": str(v)} for k, v in (env or {}).items()]


def _resources(spec: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(spec.get("resources") or {}))


def executor_shape(body: Mapping[str, Any], options: Mapping[str, Any] | None) -> tuple[int, str]:
    """Cores and memory of one SUT instance (executor): the BenchSut's
    ``coresPerInstance`` / ``memoryPerInstanceMb`` (the CoresPerInstance and
    MemoryPerInstance resource types) over the platform options executor_cores and
    executor_memory."""
    cores = int(body.get("coresPerInstance") or option(options, "executor_cores"))
    mb = body.get("memoryPerInstanceMb")
    return max(1, cores), (f"{int(mb)}m" if mb else str(option(options, "executor_memory")))


def sut_manifests(spec: ExperimentSpec, sut: Manifest, options: Mapping[str, Any] | None) -> list[Manifest]:
    body = sut.get("spec") or {}
    replicas = int(body.get("replicas", 1))
    base = dns_name("bench", spec.use_case.name, str(sut.get("metadata", {}).get("name", "sut")))
    image = str(body.get("image") or option(options, "image"))
    standalone = option(options, "sut_mode") == "standalone"
    master = f"spark://{base}-master:7077" if standalone else None
    cores, memory = executor_shape(body, options)
    payload = {
        "use_case": spec.use_case.name,
        "bootstrap_servers": str(option(options, "kafka_bootstrap")),
        "topics": spec.topic_map(),
        "group_id": spec.group_id,
        "params": {**dict(spec.params), **(body.get("params") or {})},
        "instances": replicas * cores,  # task slots, as on the embedded platform
        "executors": replicas,
        "cores_per_instance": cores,
        "memory_per_instance_mb": int(body["memoryPerInstanceMb"]) if body.get("memoryPerInstanceMb") else None,
        "spark_master": master,
        "trigger_seconds": option(options, "trigger_seconds"),
        "max_records_per_trigger": None,
        "checkpoint_dir": "/tmp/bench-checkpoint",
        "connector": option(options, "connector"),
        # the driver serves dropped/malformed records for Prometheus (bench.metrics.exporting)
        "experiment": spec.experiment_id,
        "metrics_port": int(option(options, "sut_metrics_port")),
    }
    if standalone:  # the driver asks the master for executors of the workers' size
        payload["conf"] = {
            "spark.executor.cores": str(cores),
            "spark.executor.memory": memory,
            "spark.cores.max": str(replicas * cores),
        }
    config = _spec_config_map(f"{base}-spec", payload)
    parts = _SutParts(
        base=base,
        image=image,
        replicas=replicas,
        cores=cores,
        memory=memory,
        env=_env_list(body.get("env")),
        mount={"name": "spec", "mountPath": SPEC_DIR},
        volume={"name": "spec", "configMap": {"name": f"{base}-spec"}},
        body=body,
        options=options,
    )
    if not standalone:
        return [config, _spark_application(parts)]
    return [config, *_standalone(parts, master or "")]


@dataclass(frozen=True)
class _SutParts:
    """What both SUT variants (SparkApplication, standalone cluster) are built from."""

    base: str
    image: str
    replicas: int
    cores: int
    memory: str
    env: list[dict[str, str]]
    mount: dict[str, str]
    volume: dict[str, Any]
    body: Mapping[str, Any]
    options: Mapping[str, Any] | None


def metrics_port(options: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"name": "metrics", "containerPort": int(option(options, "sut_metrics_port")), "protocol": "TCP"}


def metrics_annotations(options: Mapping[str, Any] | None) -> dict[str, str]:
    return {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(int(option(options, "sut_metrics_port"))),
        "prometheus.io/path": "/metrics",
    }


def _spark_application(sut: _SutParts) -> Manifest:
    cores = sut.cores
    return {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": sut.base},
        "spec": {
            "type": "Python",
            "pythonVersion": "3",
            "mode": "cluster",
            "image": sut.image,
            "imagePullPolicy": option(sut.options, "image_pull_policy"),
            "mainApplicationFile": SPARK_DRIVER_FILE,
            "arguments": [f"{SPEC_DIR}/spec.json"],
            "sparkVersion": str(option(sut.options, "spark_version")),
            "sparkConf": {"spark.sql.shuffle.partitions": str(max(1, sut.replicas * cores))},
            "restartPolicy": {"type": "Never"},
            "volumes": [sut.volume],
            "driver": {
                "cores": 1,
                "memory": str(option(sut.options, "driver_memory")),
                "serviceAccount": str(option(sut.options, "spark_service_account")),
                "labels": {**_labels(sut.base, "driver"), **METRICS_LABEL},
                "annotations": metrics_annotations(sut.options),
                "ports": [metrics_port(sut.options)],
                "env": copy.deepcopy(sut.env),
                "volumeMounts": [sut.mount],
                "securityContext": container_security_context(sut.options),
                "podSecurityContext": pod_security_context(sut.options),
            },
            "executor": {
                "instances": sut.replicas,
                "cores": cores,
                "memory": sut.memory,
                "labels": _labels(sut.base, "executor"),
                "env": copy.deepcopy(sut.env),
                "securityContext": container_security_context(sut.options),
                "podSecurityContext": pod_security_context(sut.options),
            },
        },
    }


def _container(name: str, image: str, command: list[str], env: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, "command": command, "env": copy.deepcopy(env), **extra}


def _deployment(
    base: str, component: str, replicas: int, container: dict[str, Any], options: Mapping[str, Any] | None
) -> Manifest:
    labels = _labels(base, component)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{base}-{component}", "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, "spec": _pod_spec(options, [container])},
        },
    }


def _standalone(sut: _SutParts, master: str) -> list[Manifest]:
    cores, memory = str(sut.cores), sut.memory
    master_container = _container(
        "master",
        sut.image,
        ["spark-class", "org.apache.spark.deploy.master.Master", "--host", "0.0.0.0", "--port", "7077"],
        sut.env,
        ports=[{"containerPort": 7077, "name": "spark"}, {"containerPort": 8080, "name": "ui"}],
        readinessProbe={"tcpSocket": {"port": 7077}, "periodSeconds": 2},
    )
    worker_container = _container(
        "worker",
        sut.image,
        ["spark-class", "org.apache.spark.deploy.worker.Worker", "--cores", cores, "--memory", memory, master],
        sut.env,
        resources=_resources(sut.body),
    )
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"{sut.base}-master"},
        "spec": {
            "selector": _labels(sut.base, "master"),
            "ports": [{"name": "spark", "port": 7077}, {"name": "ui", "port": 8080}],
        },
    }
    driver_labels = _labels(sut.base, "driver")
    driver = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{sut.base}-driver", "labels": dict(driver_labels)},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {
                    "labels": {**driver_labels, **METRICS_LABEL},
                    "annotations": metrics_annotations(sut.options),
                },
                "spec": _pod_spec(
                    sut.options,
                    [
                        _container(
                            "driver",
                            sut.image,
                            ["python", "-m", "bench.runtime.spark.driver", f"{SPEC_DIR}/spec.json"],
                            sut.env,
                            volumeMounts=[sut.mount],
                            ports=[metrics_port(sut.options)],
                        )
                    ],
                    restartPolicy="Never",
                    volumes=[sut.volume],
                ),
            },
        },
    }
    return [
        _deployment(sut.base, "master", 1, master_container, sut.options),
        service,
        _deployment(sut.base, "worker", sut.replicas, worker_container, sut.options),
        driver,
    ]


def generator_manifests(spec: ExperimentSpec, gen: Manifest, options: Mapping[str, Any] | None) -> list[Manifest]:
    body = gen.get("spec") or {}
    replicas = int(body.get("replicas", 1))
    base = dns_name("bench", spec.use_case.name, str(gen.get("metadata", {}).get("name", "generator")))
    image = str(body.get("image") or option(options, "image"))
    topics = spec.topic_map()
    env = {
        "BENCH_GENERATOR": spec.use_case.generator,
        "BENCH_BOOTSTRAP_SERVERS": str(option(options, "kafka_bootstrap")),
        "BENCH_TOPIC": topics.get("input", next(iter(topics.values()), "input")),
        "BENCH_TOPICS": json.dumps(topics, sort_keys=True),
        "BENCH_SENSORS": str(int(body.get("sensors", spec.load))),
        "BENCH_INSTANCES": str(replicas),
        "BENCH_PERIOD_MS": str(body.get("periodMs", 1000)),
        "BENCH_PARAMS": json.dumps({**dict(spec.params), **(body.get("params") or {})}, sort_keys=True),
        **{str(k): str(v) for k, v in (body.get("env") or {}).items()},
    }
    labels = _labels(base, "generator")
    container = _container(
        "workload-generator",
        image,
        ["python", "-m", "bench.k8s.generator_entry"],
        _env_list(env),
        resources=_resources(body),
    )
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": base},
            "spec": {"clusterIP": "None", "selector": dict(labels)},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": base, "labels": dict(labels)},
            "spec": {
                "replicas": replicas,
                "serviceName": base,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": dict(labels)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": _pod_spec(options, [container])},
            },
        },
    ]


def render_manifests(spec: ExperimentSpec, options: Mapping[str, Any] | None = None) -> list[Manifest]:
    """The manifests one repetition applies, in apply order (SUT first, then generators).

    Pure: no cluster is contacted, so ``bench run --platform kubernetes --dry-run``
    prints exactly what would be applied.
    """
    namespace = str(option(options, "namespace"))
    rendered: list[tuple[str, Manifest]] = []
    for original in spec.objects:
        obj = copy.deepcopy(original)
        kind = obj.get("kind")
        if kind == "BenchSut":
            rendered += [("sut", m) for m in sut_manifests(spec, obj, options)]
        elif kind == "BenchGenerator":
            rendered += [("generator", m) for m in generator_manifests(spec, obj, options)]
        else:
            rendered.append((role_of(obj), obj))
    ordered = [m for r, m in rendered if r == "sut"] + [m for r, m in rendered if r == "generator"]
    roles = {id(m): r for r, m in rendered}
    # deep copies: no list shared between objects (YAML would print anchors)
    return [_mark(copy.deepcopy(m), roles[id(m)], spec.experiment_id, namespace) for m in ordered]


# --------------------------------------------------------------------------- readiness


class ObjectFailed(UserError, RuntimeError):
    """The object reached a terminal failure state while we waited for it."""


def is_ready(obj: Manifest | None) -> bool:
    """Whether an object is ready to serve, by kind; kinds without a status are ready
    once they exist. Raises ObjectFailed on terminal failure, to stop waiting early."""
    if obj is None:
        return False
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        wanted = int(spec.get("replicas", 1))
        return int(status.get("readyReplicas", 0) or 0) >= wanted
    if kind == "DaemonSet":
        return int(status.get("numberReady", 0) or 0) >= int(status.get("desiredNumberScheduled", 1) or 1)
    if kind == "Job":
        for cond in status.get("conditions") or []:
            if cond.get("type") == "Failed" and cond.get("status") == "True":
                raise ObjectFailed(f"Job/{obj['metadata']['name']} failed: {cond.get('message', '')}")
        return int(status.get("active", 0) or 0) >= 1 or int(status.get("succeeded", 0) or 0) >= 1
    if kind == "Pod":
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    if kind == "SparkApplication":
        state = str((status.get("applicationState") or {}).get("state", ""))
        if state in ("FAILED", "SUBMISSION_FAILED", "FAILING"):
            detail = (status.get("applicationState") or {}).get("errorMessage", "")
            raise ObjectFailed(f"SparkApplication/{obj['metadata']['name']} is {state}: {detail}")
        return state == "RUNNING"
    if kind == "KafkaTopic":
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return True
