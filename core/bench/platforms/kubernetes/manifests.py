"""Default Kubernetes manifests for the embedded platform's kinds.

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
- Generator: a StatefulSet (replicas = instances) running ``bench.platforms.kubernetes.generator_entry``.
  A StatefulSet rather than a Deployment because each instance must know its ordinal
  to take its own contiguous key range, as the reference's instances do.

Kafka client security reaches every pod from a Secret and an own job's script from a
ConfigMap (:mod:`bench.platforms.kubernetes.secrets`). Generator pods serve their records and rates on
port ``metrics`` (option generator_metrics_port, 9405), as the driver serves its
counters, so that Prometheus gives their achieved rate back to the shortfall check.

Everything else in a benchmark is applied as written. Every object gets the labels
``app.kubernetes.io/managed-by: bench`` and ``bench/experiment`` and an annotation
``bench/role`` (sut|generator) that decides when it is started and stopped.

Every pod runs with the restricted profile (:mod:`bench.platforms.kubernetes.pods`). SUT and generator
pods get no service-account token (``automountServiceAccountToken: false``): they never
call the API server, so a token would only be something to steal. The one exception is
the Spark operator's driver: it creates its executor pods through the API, with
``spark_service_account``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.api import ExperimentSpec, Manifest
from bench.platforms.kubernetes.options import DEFAULTS, option
from bench.platforms.kubernetes.pods import (
    METRICS_LABEL,
    container,
    container_security_context,
    cpu_limit,
    env_list,
    metrics_annotations,
    metrics_port,
    pod_security_context,
    pod_spec,
    resources_of,
    worker_resources,
)
from bench.platforms.kubernetes.readiness import ObjectFailed, is_ready
from bench.platforms.kubernetes.secrets import JOB_DIR, job_config_map, kafka_env, kafka_volume

__all__ = ["DEFAULTS", "ObjectFailed", "is_ready", "option", "render_manifests"]

ROLE = "bench/role"
EXPERIMENT_LABEL = "bench/experiment"
MANAGED = {"app.kubernetes.io/managed-by": "bench"}
SPEC_DIR = "/etc/bench"
SPARK_DRIVER_FILE = "local:///opt/bench/spark_driver.py"


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
    params = {**dict(spec.params), **(body.get("params") or {})}
    extra: list[Manifest] = []
    volumes: list[dict[str, Any]] = [{"name": "spec", "configMap": {"name": f"{base}-spec"}}]
    mounts: list[dict[str, Any]] = [{"name": "spec", "mountPath": SPEC_DIR}]
    if params.get("job"):  # an own script: it travels as a ConfigMap, the driver runs the copy
        job_map, params["job"] = job_config_map(f"{base}-job", str(params["job"]))
        extra, volumes, mounts = [job_map], [*volumes, {"name": "job", "configMap": {"name": f"{base}-job"}}], \
            [*mounts, {"name": "job", "mountPath": JOB_DIR}]
    secret_volumes, secret_mounts = kafka_volume(options)
    user_conf = spec.spark_conf(options or {})
    payload = {
        "use_case": spec.use_case.name,
        "bootstrap_servers": str(option(options, "kafka_bootstrap")),
        "topics": spec.topic_map(),
        "group_id": spec.group_id,
        "params": params,
        "instances": replicas * cores,  # task slots, as on the embedded platform
        "executors": replicas,
        "cores_per_instance": cores,
        "memory_per_instance_mb": int(body["memoryPerInstanceMb"]) if body.get("memoryPerInstanceMb") else None,
        "spark_master": master,
        "trigger_seconds": None if (trigger := option(options, "trigger_seconds")) is None else float(trigger),
        "max_records_per_trigger": None,
        "checkpoint_dir": "/tmp/bench-checkpoint",
        "connector": option(options, "connector"),
        # the driver serves dropped/malformed records for Prometheus (bench.metrics.exporting)
        "experiment": spec.experiment_id,
        "metrics_port": int(option(options, "sut_metrics_port")),
    }
    # the use case's own, --conf, then the shape: the resource value is what is measured (as spark_payload)
    payload["conf"] = dict(user_conf)
    if standalone:  # the driver asks the master for executors of the workers' size
        payload["conf"].update({"spark.executor.cores": str(cores), "spark.executor.memory": memory,
                                "spark.cores.max": str(replicas * cores)})
    config = _spec_config_map(f"{base}-spec", payload)
    parts = _SutParts(
        base=base,
        image=image,
        replicas=replicas,
        cores=cores,
        memory=memory,
        env=env_list(body.get("env")) + kafka_env(options),
        mounts=mounts + secret_mounts,
        volumes=volumes + secret_volumes,
        body=body,
        options=options,
        conf=user_conf,
    )
    if not standalone:
        return [config, *extra, _spark_application(parts)]
    return [config, *extra, *_standalone(parts, master or "")]


@dataclass(frozen=True)
class _SutParts:
    """What both SUT variants (SparkApplication, standalone cluster) are built from."""

    base: str
    image: str
    replicas: int
    cores: int
    memory: str
    env: list[dict[str, Any]]
    mounts: list[dict[str, Any]]
    volumes: list[dict[str, Any]]
    body: Mapping[str, Any]
    options: Mapping[str, Any] | None
    conf: Mapping[str, str]


def _kafka_mounts(sut: _SutParts) -> dict[str, Any]:
    """The Secret's mount alone, for pods that read Kafka but not the spec (executors, workers)."""
    mounts = [m for m in copy.deepcopy(sut.mounts) if m["name"] == "kafka-client"]
    return {"volumeMounts": mounts} if mounts else {}


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
            "sparkConf": {"spark.sql.shuffle.partitions": str(max(1, sut.replicas * cores)), **sut.conf},
            "restartPolicy": {"type": "Never"},
            "volumes": copy.deepcopy(sut.volumes),
            "driver": {
                "cores": 1,
                "memory": str(option(sut.options, "driver_memory")),
                "serviceAccount": str(option(sut.options, "spark_service_account")),
                "labels": {**_labels(sut.base, "driver"), **METRICS_LABEL},
                "annotations": metrics_annotations(sut.options),
                "ports": [metrics_port(sut.options)],
                "env": copy.deepcopy(sut.env),
                "volumeMounts": copy.deepcopy(sut.mounts),
                "securityContext": container_security_context(sut.options),
                "podSecurityContext": pod_security_context(sut.options),
            },
            "executor": {
                "instances": sut.replicas,
                "cores": cores,
                **({"coreRequest": limit, "coreLimit": limit} if (limit := cpu_limit(sut.body, cores)) else {}),
                "memory": sut.memory,
                "labels": _labels(sut.base, "executor"),
                "env": copy.deepcopy(sut.env),
                **_kafka_mounts(sut),
                "securityContext": container_security_context(sut.options),
                "podSecurityContext": pod_security_context(sut.options),
            },
        },
    }


def _deployment(
    base: str, component: str, replicas: int, container: dict[str, Any], options: Mapping[str, Any] | None,
    volumes: list[dict[str, Any]] | None = None,
) -> Manifest:
    labels = _labels(base, component)
    extra = {"volumes": volumes} if volumes else {}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{base}-{component}", "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec(options, [container], **extra)},
        },
    }


def _standalone(sut: _SutParts, master: str) -> list[Manifest]:
    cores, memory = str(sut.cores), sut.memory
    master_container = container(
        "master",
        sut.image,
        ["spark-class", "org.apache.spark.deploy.master.Master", "--host", "0.0.0.0", "--port", "7077"],
        sut.env,
        ports=[{"containerPort": 7077, "name": "spark"}, {"containerPort": 8080, "name": "ui"}],
        readinessProbe={"tcpSocket": {"port": 7077}, "periodSeconds": 2},
    )
    worker_container = container(
        "worker",
        sut.image,
        ["spark-class", "org.apache.spark.deploy.worker.Worker", "--cores", cores, "--memory", memory, master],
        sut.env,
        resources=worker_resources(sut.body, sut.cores),
        **_kafka_mounts(sut),
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
                "spec": pod_spec(
                    sut.options,
                    [
                        container(
                            "driver",
                            sut.image,
                            ["python", "-m", "bench.runtime.spark.driver", f"{SPEC_DIR}/spec.json"],
                            sut.env,
                            volumeMounts=copy.deepcopy(sut.mounts),
                            ports=[metrics_port(sut.options)],
                        )
                    ],
                    restartPolicy="Never",
                    volumes=copy.deepcopy(sut.volumes),
                ),
            },
        },
    }
    return [
        _deployment(sut.base, "master", 1, master_container, sut.options),
        service,
        _deployment(sut.base, "worker", sut.replicas, worker_container, sut.options,
                    [v for v in copy.deepcopy(sut.volumes) if v["name"] == "kafka-client"]),
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
        # what the pod serves for Prometheus, labelled with the repetition's group
        "BENCH_METRICS_PORT": str(int(option(options, "generator_metrics_port"))),
        "BENCH_GROUP": spec.group_id,
        **{str(k): str(v) for k, v in (body.get("env") or {}).items()},
    }
    labels = _labels(base, "generator")
    port = int(option(options, "generator_metrics_port"))
    volumes, mounts = kafka_volume(options)
    generator = container(
        "workload-generator",
        image,
        ["python", "-m", "bench.platforms.kubernetes.generator_entry"],
        env_list(env) + kafka_env(options),
        resources=resources_of(body),
        ports=[{"name": "metrics", "containerPort": port, "protocol": "TCP"}],
        **({"volumeMounts": mounts} if mounts else {}),
    )
    pod_labels = {**labels, **METRICS_LABEL}
    annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
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
                "template": {"metadata": {"labels": pod_labels, "annotations": annotations},
                             "spec": pod_spec(options, [generator], **({"volumes": volumes} if volumes else {}))},
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
