"""A Spark use case's sizing on the real parts (issue 67): UC1 on Apache Kafka and local
Spark, its two instances limited by a CPU cgroup.

Where bench sizes the loads of a Spark use case, its first probe runs at half the use
case's CPU limit: at the full limit two instances kept up with the probe's whole load on
every 2-core machine measured, a lower bound that cost a second probe. The test stops the
run (Ctrl-C) once the sizing is written, before the experiments: the sizing file holds
what the probe measured at the lowered limit and why, and the interrupted run keeps it.
About a minute and a half: one probe of 40 s after the SUT's start.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_procs import ROOT

pytestmark = pytest.mark.e2e


def test_a_spark_use_cases_first_probe_runs_at_half_its_cpu_limit(kafka_bootstrap: str, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.cli.commands", "run", "--plugin", "uc1", "--bootstrap-servers",
           kafka_bootstrap, "--results", str(tmp_path), "--duration", "40", "--warmup", "10"]
    child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    written = tmp_path / "exp0-sizing.json"
    try:
        deadline = time.monotonic() + 300
        while not written.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert written.exists(), "no sizing written"
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    sizing = json.loads(written.read_text())
    first = sizing["probes"][0]
    # probed at an eighth of a core, UC1's quarter core lowered before the probe, not after it
    assert first["cpu"] == 0.125 and first["instances"] == 2 and first["per_instance_rate"] > 0, sizing
    assert sizing["cpuPerInstance"] == 0.125 and sizing["cpuLoweredFrom"] == 0.25, sizing
    assert sizing["reason"].startswith("a Spark use case's first probe runs at half its CPU limit (0.125 core)")
    assert len(sizing["probes"]) == 1 or sizing["probes"][1]["cpu"] <= 0.125, sizing
    assert len(sizing["loads"]) >= 2, sizing
    assert "sizing: probing 2 instances at 40,000 records/s (0.125 core)" in out, out[-3000:]
    assert child.returncode == 130, out[-3000:]
    assert "bench: interrupted; every finished experiment is in the results folder" in out, out[-3000:]
