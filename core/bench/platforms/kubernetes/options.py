"""The Kubernetes platform's options and their defaults (each also read from
``BENCH_K8S_<OPTION>`` in the environment, so the CLI needs no flag per option)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

DEFAULTS: dict[str, Any] = {
    "namespace": "default",
    "image": "ghcr.io/example/bench:latest",
    "image_pull_policy": "IfNotPresent",
    "sut_mode": "spark-operator",
    "kafka_bootstrap": "my-cluster-kafka-bootstrap:9092",
    "spark_version": "4.2.0",
    "spark_service_account": "bench-spark",
    "executor_cores": 1,
    "executor_memory": "1g",
    "driver_memory": "1g",
    "trigger_seconds": None,
    "connector": "python",
    "run_as_user": 185,
    "sut_metrics_port": 9404,
    "generator_metrics_port": 9405,
    "kafka_secret": "bench-kafka-client",
}

def option(options: Mapping[str, Any] | None, key: str) -> Any:
    """A platform option: given options, else ``BENCH_K8S_<KEY>`` from the environment
    (so the CLI needs no flag per option), else the default."""
    value = (options or {}).get(key)
    if value is None and key == "kafka_bootstrap":
        value = (options or {}).get("bootstrap_servers")
    if value is None:
        value = os.environ.get(f"BENCH_K8S_{key.upper()}")
    return DEFAULTS.get(key) if value is None else value


#: the SLIs the cluster's pods serve for Prometheus to scrape: sampled only with ``prometheus_url``
PROMETHEUS_SLIS = frozenset({"dropped-records", "malformed-records", "generated-records", "generator-rate"})


def refuse_without_prometheus(options: Mapping[str, Any] | None, slis: Mapping[str, str]) -> None:
    """Raises ``ValueError`` (one line) when an SLO (name -> SLI) reads an SLI only
    Prometheus carries and no ``prometheus_url`` is set: every experiment would fail it
    for want of samples, after hours on the cluster."""
    if option(options, "prometheus_url"):
        return
    needing = [f"{name} ({sli})" for name, sli in slis.items() if sli in PROMETHEUS_SLIS]
    if needing:
        raise ValueError(f"--platform kubernetes: SLO {', '.join(needing)} needs Prometheus, which scrapes it from "
                         "the pods; set BENCH_K8S_PROMETHEUS_URL (deploy/podmonitor.yaml) or judge only the lag")
