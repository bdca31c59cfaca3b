"""Patcher properties no other test showed: each changes what the patcher writes.

Why: a property a patcher reads but that changes nothing would be accepted and ignored
(tests/unit/test_no_inert_setting.py).
"""

from __future__ import annotations

from typing import Any

from bench.builtin.patchers import PATCHERS

P = {p.name: p.patch for p in PATCHERS}


def _worker_with_a_sidecar() -> dict[str, Any]:
    command = ["spark-class", "org.apache.spark.deploy.worker.Worker", "--cores", "1", "--memory", "1g", "spark://m"]
    return {"kind": "Deployment", "metadata": {"name": "worker"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "sidecar", "command": list(command)},
                {"name": "worker", "command": list(command)}]}}}}


def test_executor_container_names_the_container_the_cores_go_to() -> None:
    (out,) = P["ExecutorCoresPatcher"]([_worker_with_a_sidecar()], 3, {"container": "worker"})
    sidecar, worker = out["spec"]["template"]["spec"]["containers"]
    assert worker["command"][2:4] == ["--cores", "3"]
    assert sidecar["command"][2:4] == ["--cores", "1"], "the container not named keeps its cores"
