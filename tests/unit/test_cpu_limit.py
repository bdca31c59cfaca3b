"""CPU limits per instance through a cgroup quota (skipped where no CPU controller is writable)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.runtime.spark import cpu_limit


def _limit_or_skip(name: str, cores: float) -> cpu_limit.CpuLimit:
    try:
        return cpu_limit.create(name, cores)
    except cpu_limit.CpuLimitUnavailable as exc:
        pytest.skip(str(exc))


def test_a_quarter_core_holds_a_busy_loop_to_a_quarter_core() -> None:
    limit = _limit_or_skip(f"test-{os.getpid()}", 0.25)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        limit.add(busy.pid)
        assert str(busy.pid) in (limit.path / "cgroup.procs").read_text().split()
        start_cpu, start = _cpu_seconds(busy.pid), time.monotonic()
        time.sleep(2.0)
        share = (_cpu_seconds(busy.pid) - start_cpu) / (time.monotonic() - start)
        assert share < 0.4, share  # unlimited, a busy loop takes a whole core (1.0)
    finally:
        busy.kill()
        busy.wait()
        limit.remove()
    assert not limit.path.exists()


def test_stale_cgroups_of_dead_runs_are_swept() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        root, _ = cpu_limit._root()
    except cpu_limit.CpuLimitUnavailable as exc:
        pytest.skip(str(exc))
    stale = root / f"{cpu_limit.PREFIX}{dead.pid}-e0"
    try:
        stale.mkdir()
    except OSError as exc:
        pytest.skip(f"cgroups not writable: {exc}")
    mine = _limit_or_skip(f"live-{os.getpid()}", 1.0)
    try:
        assert cpu_limit.sweep_stale() >= 1
        assert not stale.exists() and mine.path.exists()  # a live run's cgroup stays
    finally:
        mine.remove()


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        cpu_limit.create("x", 0)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
