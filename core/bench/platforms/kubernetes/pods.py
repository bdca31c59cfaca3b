"""Building blocks of every pod bench renders: the restricted security profile, no
service-account token, containers with their environment and resources.

Every pod runs locked down (the Pod Security Standard "restricted"): non-root (uid
``run_as_user``, the ``spark`` user of deploy/Dockerfile), no privilege escalation, all
capabilities dropped, the runtime's default seccomp profile. A benchmark needs none of
these privileges, and a cluster that enforces "restricted" must not reject its pods.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bench.platforms.kubernetes.options import option

#: what Prometheus scrapes: pods with this label, port ``metrics`` (deploy/podmonitor.yaml),
#: or the prometheus.io annotations of the kubernetes-pods scrape convention
METRICS_LABEL = {"bench/metrics": "true"}


def metrics_port(options: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"name": "metrics", "containerPort": int(option(options, "sut_metrics_port")), "protocol": "TCP"}


def metrics_annotations(options: Mapping[str, Any] | None) -> dict[str, str]:
    return {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(int(option(options, "sut_metrics_port"))),
        "prometheus.io/path": "/metrics",
    }


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


def pod_spec(options: Mapping[str, Any] | None, containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A pod template's spec with the restricted profile and no service-account token."""
    for container in containers:
        container["securityContext"] = container_security_context(options)
    return {
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(options),
        **extra,
        "containers": containers,
    }


def env_list(env: Mapping[str, Any] | None) -> list[dict[str, str]]:
    return [{"name": str(k), "value": str(v)} for k, v in (env or {}).items()]


def resources_of(spec: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(spec.get("resources") or {}))


def cpu_limit(body: Mapping[str, Any], cores: int) -> str | None:
    """The CPU one SUT instance (executor or worker) may use, in millicores: the BenchSut's
    ``cpuPerInstance`` per task slot times its ``cores`` slots, as the embedded platform's
    cgroup limits it and as cost counts it (``bench.execution.deployment.instance_cores``);
    None without one. Requested as much as limited: a request above the limit is invalid."""
    per_slot = float(body.get("cpuPerInstance") or 0)
    return f"{max(1, round(per_slot * cores * 1000))}m" if per_slot > 0 else None


def worker_resources(body: Mapping[str, Any], cores: int) -> dict[str, Any]:
    """The BenchSut's ``resources``, with the CPU limit per instance (``cpuPerInstance``)."""
    found = resources_of(body)
    limit = cpu_limit(body, cores)
    if limit is not None:
        for part in ("requests", "limits"):
            found[part] = {**(found.get(part) or {}), "cpu": limit}
    return found


def container(name: str, image: str, command: list[str], env: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, "command": command, "env": copy.deepcopy(env), **extra}
