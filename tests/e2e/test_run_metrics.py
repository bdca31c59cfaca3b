"""The framework's own metrics during a real run: the verdict counter the Grafana panel
"experiments by verdict" reads (``bench_experiments_total``) counts the finished
experiment while ``bench run --metrics-port`` still serves (issue 22, item 1).

Any verdict counts, so the experiment is as short as the fault tests' (12 s, a sample
every second): the exporter serves the lag from the first sample on."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

VERDICT = re.compile(r'^bench_experiments_total\{verdict="(passed|failed|error)"\} ([0-9.e+]+)$', re.M)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            return str(response.read().decode())
    except (urllib.error.URLError, OSError):
        return None


def test_the_verdict_counter_counts_a_real_experiment(kafka_bootstrap: str, tmp_path: Path) -> None:
    port = free_port()
    cmd = [str(Path(sys.executable).parent / "bench"), "run", "--plugin", "calibrated", "--loads", "500",
           "--resources", "1", "--duration", "12", "--warmup", "4", "--sample-interval", "1", "--repetitions", "1",
           "--no-early-stop", "--metrics-port", str(port), "--results", str(tmp_path / "results"),
           "--bootstrap-servers", kafka_bootstrap]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    counted: dict[str, float] = {}
    lag_seen = False
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            text = scrape(port)
            if text is not None:
                lag_seen = lag_seen or "bench_consumer_lag{" in text
                counted.update({m.group(1): float(m.group(2)) for m in VERDICT.finditer(text)})
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
        out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out[-3000:]
    assert lag_seen, "the exporter served no lag while the experiment ran"
    assert sum(counted.values()) == 1.0, (counted, out[-2000:])
    assert set(counted) <= {"passed", "failed"}, counted
