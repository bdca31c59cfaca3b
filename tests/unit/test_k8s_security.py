"""Every pod bench renders for Kubernetes runs with the restricted profile, and SUT and
generator pods carry no service-account token (issue 15, item 6).

Pure rendering, no cluster: the manifests are walked for pod templates, so a new kind
of pod that forgets the profile fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.platforms.kubernetes.manifests import render_manifests

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def experiment() -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="exp1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict),
        objects=[
            {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 2, "params": {}}},
            {
                "kind": "BenchGenerator",
                "metadata": {"name": "generator"},
                "spec": {"replicas": 1, "sensors": 100, "periodMs": 1000, "params": {}},
            },
        ],
        topics=[TopicSpec("input", "input-exp1", 4)],
        params={},
        load=100,
        resources=2,
    )


def pod_specs(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, pod spec) of every pod an object creates; SparkApplication gives its
    driver and executor specs (the operator's own shape)."""
    kind = obj.get("kind")
    name = f"{kind}/{obj['metadata']['name']}"
    if kind in ("Deployment", "StatefulSet", "Job", "DaemonSet", "ReplicaSet"):
        yield name, obj["spec"]["template"]["spec"]
    elif kind == "SparkApplication":
        for role in ("driver", "executor"):
            yield f"{name}.{role}", obj["spec"][role]


def check_restricted(where: str, pod: dict[str, Any], containers: list[dict[str, Any]], pod_ctx_key: str) -> None:
    pod_ctx = pod[pod_ctx_key]
    assert pod_ctx["runAsNonRoot"] is True, where
    assert pod_ctx["seccompProfile"] == {"type": "RuntimeDefault"}, where
    assert containers, where
    for container in containers:
        ctx = container["securityContext"]
        assert ctx["allowPrivilegeEscalation"] is False, where
        assert ctx["capabilities"] == {"drop": ["ALL"]}, where
        assert ctx["runAsNonRoot"] is True, where
        assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}, where


@pytest.mark.parametrize("mode", ["spark-operator", "standalone"])
def test_rendered_pods_are_restricted_and_tokenless(mode: str) -> None:
    objects = render_manifests(experiment(), {"sut_mode": mode})
    pods = [(where, pod) for obj in objects for where, pod in pod_specs(obj)]
    assert len(pods) >= (3 if mode == "spark-operator" else 4)  # the walk found them
    for where, pod in pods:
        if "SparkApplication" in where:
            check_restricted(where, pod, [pod], "podSecurityContext")
            continue
        check_restricted(where, pod, pod["containers"], "securityContext")
        # Only the operator's driver talks to the API server (it creates executors).
        assert pod["automountServiceAccountToken"] is False, where


def test_run_as_user_follows_the_option() -> None:
    objects = render_manifests(experiment(), {"sut_mode": "standalone", "run_as_user": 1000})
    users = {pod["securityContext"]["runAsUser"] for obj in objects for _, pod in pod_specs(obj)}
    assert users == {1000}


def test_deploy_files_are_restricted() -> None:
    """The checked-in manifests (generated, and the runner Job) carry the same profile."""
    files = sorted(p for p in DEPLOY.glob("*/*.yaml") if p.name != "kustomization.yaml")  # ucN/, the runner
    assert DEPLOY / "kustomize" / "runner-job.yaml" in files
    seen = 0
    for path in files:
        for obj in yaml.safe_load_all(path.read_text()):
            for where, pod in pod_specs(obj or {}):
                seen += 1
                key = "podSecurityContext" if obj["kind"] == "SparkApplication" else "securityContext"
                containers = [pod] if obj["kind"] == "SparkApplication" else pod["containers"]
                check_restricted(f"{path.name}: {where}", pod, containers, key)
    assert seen >= 12 * 1 + 1
