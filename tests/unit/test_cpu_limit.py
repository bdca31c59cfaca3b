"""CPU limits per instance through a cgroup quota (skipped where no CPU controller is writable)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.runtime.host import proctree
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


#: a parent whose child leaves its process group, as PySpark's worker daemon does, and
#: forks a worker of its own; prints the two pids, then all three sleep
_DAEMON_LIKE = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    worker = os.fork()
    if worker == 0:
        time.sleep(60)
        os._exit(0)
    print(os.getpid(), worker, flush=True)
    time.sleep(60)
    os._exit(0)
time.sleep(60)
"""


def test_a_sut_moves_with_workers_that_left_its_process_group() -> None:
    limit = _limit_or_skip(f"tree-{os.getpid()}", 0.5)
    parent = subprocess.Popen([sys.executable, "-c", _DAEMON_LIKE], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    daemon = 0
    try:
        assert parent.stdout is not None
        daemon, worker = (int(x) for x in parent.stdout.readline().split())
        assert os.getpgid(daemon) != os.getpgid(parent.pid)  # what a move by process group missed
        assert limit.add_tree(parent.pid) == 3
        assert {parent.pid, daemon, worker} <= limit.members()
    finally:
        os.killpg(parent.pid, 9)
        if daemon:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(daemon, 9)
        parent.wait()
        limit.remove()


def test_the_tree_holds_the_group_and_every_descendant() -> None:
    # pid: (parent, group). 10 is the SUT child; 11 its JVM; 12 a daemon in a group of
    # its own, 13 its worker; 14 another member of group 10 whose parent is elsewhere;
    # 20 and 21 unrelated.
    table = {10: (1, 10), 11: (10, 10), 12: (11, 12), 13: (12, 12), 14: (1, 10), 20: (1, 20), 21: (20, 20)}
    assert proctree.members([10], table) == {10, 11, 12, 13, 14}


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        cpu_limit.create("x", 0)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_lifted_limit_lets_a_busy_loop_have_its_core() -> None:
    """The SUT's stop runs unlimited (``CpuLimit.lift``), as its start does."""
    limit = _limit_or_skip(f"test-lift-{os.getpid()}", 0.25)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        limit.add(busy.pid)
        limit.lift()
        start_cpu, start = _cpu_seconds(busy.pid), time.monotonic()
        time.sleep(2.0)
        share = (_cpu_seconds(busy.pid) - start_cpu) / (time.monotonic() - start)
        assert share > 0.5, share  # held, it got at most a quarter core
    finally:
        busy.kill()
        busy.wait()
        limit.remove()


@pytest.mark.parametrize(("version", "file", "written"), [(2, "cpu.max", "max 100000"), (1, "cpu.cfs_quota_us", "-1")])
def test_lift_writes_no_quota_in_either_cgroup_version(tmp_path: Path, version: int, file: str, written: str) -> None:
    (tmp_path / file).write_text("25000 100000" if version == 2 else "25000")
    cpu_limit.CpuLimit(tmp_path, 0.25, version).lift()
    assert (tmp_path / file).read_text() == written
    cpu_limit.CpuLimit(tmp_path / "gone", 0.25, version).lift()  # a removed cgroup: nothing to lift, no error
