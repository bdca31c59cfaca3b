"""When an object bench applied is ready, by kind, and when it failed for good."""

from __future__ import annotations

from bench.api import Manifest
from bench.errors import UserError


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
