"""The soak run's quick mode (benchmarks/soak.py --quick): four short experiments of the
calibrated use case in one ``bench run``, a SUT or generator process killed or the broker
paused in two of them. The oracle: every experiment run is in the result file, and no
process, topic, temporary file or cgroup of the run is left behind. Memory growth and
set-up time need the full run's hundreds of experiments; they are printed, not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_procs import ROOT

pytestmark = pytest.mark.e2e


def test_quick_soak_leaves_nothing_and_loses_nothing(tmp_path: Path) -> None:
    figures = tmp_path / "soak.json"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--quick", "--json", str(figures)],
                         capture_output=True, text=True, timeout=150, cwd=ROOT)
    assert figures.exists(), out.stdout + out.stderr[-3000:]
    report = json.loads(figures.read_text())
    assert report["exit_code"] == 0, out.stderr[-3000:]
    assert report["experiments_run"] and report["experiments_recorded"] == report["experiments_run"], out.stdout
    assert report["lost"] == 0, out.stdout
    # the search may infer a pair instead of running it, so a planned fault can find its experiment gone
    assert 1 <= len(report["faults_injected"]) <= 2, out.stdout
    for kind in ("processes_left", "topics_left", "temp_left", "cgroups_left"):
        assert report[kind] == [], (kind, out.stdout)
    assert report["goals"]["nothing left behind"] and report["goals"]["nothing lost"], out.stdout
