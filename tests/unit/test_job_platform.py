"""The embedded platform's side of ``--job`` and ``--conf``: a script's error ends the
run in one line (a ConfigError to the engine, not a fault to retry), conf is recorded."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest
from bench.execution.experiments import NOT_FAULTS
from bench.platforms.embedded import Child, EmbeddedPlatform, JobError, PlatformError


def _child(last: dict[str, Any], started: bool = False) -> Child:
    child = Child("spark-driver", types.SimpleNamespace(returncode=1, pid=0), "/nonexistent")  # type: ignore[arg-type]
    child.last = last
    child.error = (last.get("error") or {}).get("message")
    child.finished.set()
    child.started.set()
    return child


def test_a_job_error_line_becomes_one_line_job_error_that_is_not_retried() -> None:
    platform = EmbeddedPlatform({})
    child = _child({"error": {"event": "error", "message": "the script failed: ValueError: x (j.py, line 3)",
                              "job": True}})
    with pytest.raises(JobError) as info:
        asyncio.run(platform._wait_started([child], 5, "Spark driver"))
    assert str(info.value) == "--job: the script failed: ValueError: x (j.py, line 3)"
    assert isinstance(info.value, NOT_FAULTS) and isinstance(info.value, PlatformError)


def test_other_driver_errors_stay_faults_with_their_stderr() -> None:
    platform = EmbeddedPlatform({})
    child = _child({"error": {"event": "error", "message": "query sink failed: OOM", "job": False}})
    with pytest.raises(PlatformError) as info:
        asyncio.run(platform._wait_started([child], 5, "Spark driver"))
    assert not isinstance(info.value, JobError) and "stderr tail" in str(info.value)


def test_conf_is_described_for_the_environment_file() -> None:
    platform = EmbeddedPlatform({"spark_conf": {"spark.sql.shuffle.partitions": "8"}, "bootstrap_servers": "h:1"})
    assert platform.describe()["spark"]["conf"] == {"spark.sql.shuffle.partitions": "8"}
    assert EmbeddedPlatform({"bootstrap_servers": "h:1"}).describe()["spark"]["conf"] == {}
