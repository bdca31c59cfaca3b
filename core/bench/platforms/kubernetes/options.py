"""The Kubernetes platform's options and their defaults (each also read from
``BENCH_K8S_<OPTION>`` in the environment, so the CLI needs no flag per option)."""

from __future__ import annotations

import difflib
import os
import re
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


#: every option read through :func:`option`, by the kind of value it takes: a bad
#: ``BENCH_K8S_<OPTION>`` reached every manifest (a namespace) or ended in a traceback
#: (a port of text), and a misspelt one was silently the default
_PORT = (1, 65535)
ENVIRONMENT: dict[str, Any] = {
    "namespace": "namespace", "image": str, "image_pull_policy": ("Always", "IfNotPresent", "Never"),
    "sut_mode": ("spark-operator", "standalone"), "kafka_bootstrap": str, "kafka_cluster": str,
    "spark_version": str, "spark_service_account": str, "executor_cores": (1, 256), "executor_memory": "memory",
    "driver_memory": "memory", "trigger_seconds": float, "connector": ("native", "python"),
    "run_as_user": (0, 2**31 - 1), "sut_metrics_port": _PORT, "generator_metrics_port": _PORT,
    "kafka_secret": str, "api_url": str, "context": str, "kubeconfig": str, "in_cluster": str, "lag_query": str,
    "sut_query": str, "prometheus_url": str, "topics": ("kafka", "strimzi"), "topic_replicas": (1, 16),
    "ready_timeout": float,
}
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_MEMORY = re.compile(r"^[1-9][0-9]*[kmgtKMGT]?$")


def environment_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """What is wrong with the ``BENCH_K8S_*`` variables of the environment, or None: an
    unknown name (with the nearest known one), or a value of the wrong kind."""
    environ = os.environ if environ is None else environ
    for name in sorted(environ):
        if not name.startswith("BENCH_K8S_"):
            continue
        key, raw = name.removeprefix("BENCH_K8S_").lower(), environ[name]
        kind = ENVIRONMENT.get(key)
        if kind is None:
            close = difflib.get_close_matches(key, ENVIRONMENT, n=1)
            hint = f"; did you mean BENCH_K8S_{close[0].upper()}?" if close else ""
            return f"{name}: not an option of the kubernetes platform{hint}"
        value = raw.strip()
        if kind == "namespace" and not _NAMESPACE.match(value):
            return (f"{name}={raw!r}: not a Kubernetes namespace (at most 63 lower-case letters, digits and '-', "
                    "starting and ending with a letter or digit)")
        if kind == "memory" and not _MEMORY.match(value):
            return f"{name}={raw!r}: not an amount of memory (e.g. 1g, 512m)"
        if isinstance(kind, tuple) and isinstance(kind[0], str) and value not in kind:
            close = difflib.get_close_matches(value, kind, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            return f"{name}={raw!r}: not one of {', '.join(kind)}{hint}"
        if isinstance(kind, tuple) and isinstance(kind[0], int):
            if not re.fullmatch(r"[0-9]+", value) or not kind[0] <= int(value) <= kind[1]:
                return f"{name}={raw!r}: must be a whole number from {kind[0]} to {kind[1]}"
        if kind is float:
            try:
                number = float(value)
            except ValueError:
                number = -1.0
            if not 0 <= number < float("inf"):
                return f"{name}={raw!r}: must be a non-negative number of seconds"
    return None


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
