"""CPU and memory from /proc: parsing, process groups and rates, on a fake /proc tree and the real one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from bench.runtime.host import stats as host_stats
from bench.runtime.host.stats import HostStats, group_usage, parse_pid_stat, parse_proc_stat


def _pid_stat(pid: int, comm: str, pgrp: int, utime: int, stime: int, rss: int, ppid: int = 1) -> str:
    # fields 3..24: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    # cutime cstime priority nice threads itrealvalue starttime vsize rss
    return f"{pid} ({comm}) S {ppid} {pgrp} {pgrp} 0 -1 0 0 0 0 0 {utime} {stime} 0 0 20 0 1 0 100 1000 {rss} 0\n"


def _cpu(user: int, idle: int, steal: int) -> str:
    return f"cpu  {user} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3 4\n"


def test_proc_stat_line() -> None:
    times = parse_proc_stat("cpu  100 5 20 800 10 1 2 12 0 0\n")
    assert times.total == 950 and times.busy == 950 - 800 - 10 and times.steal == 12


def test_a_command_name_with_spaces_and_parentheses() -> None:
    assert parse_pid_stat(_pid_stat(7, "java (x) y", 42, 30, 12, 256)) == (42, 42, 256)


def _fake_proc(root: Path, processes: list[str], cpu: str) -> None:
    for line in processes:
        pid = line.split()[0]
        (root / pid).mkdir(exist_ok=True)
        (root / pid / "stat").write_text(line)
    (root / "stat").write_text(cpu)


def test_usage_is_summed_over_the_process_group_only(tmp_path: Path) -> None:
    _fake_proc(tmp_path, [_pid_stat(10, "python", 10, 5, 5, 100), _pid_stat(11, "java", 10, 50, 10, 1000),
                          _pid_stat(12, "other", 99, 500, 500, 7)], _cpu(0, 0, 0))
    ticks, rss = group_usage([10], str(tmp_path))
    assert ticks == 70
    assert rss == 1100 * host_stats._PAGE


def test_python_workers_that_left_the_group_count_with_their_parent(tmp_path: Path) -> None:
    """PySpark's worker daemon makes a process group of its own under the JVM."""
    _fake_proc(tmp_path, [_pid_stat(10, "python", 10, 5, 5, 100), _pid_stat(11, "java", 10, 50, 10, 1000),
                          _pid_stat(12, "python3", 12, 100, 0, 10, ppid=11),
                          _pid_stat(13, "python3", 12, 200, 0, 20, ppid=12),
                          _pid_stat(14, "other", 99, 500, 500, 7)], _cpu(0, 0, 0))
    ticks, rss = group_usage([10], str(tmp_path))
    assert ticks == 70 + 100 + 200
    assert rss == 1130 * host_stats._PAGE


def test_rates_come_from_two_samples(tmp_path: Path) -> None:
    now = [100.0]
    _fake_proc(tmp_path, [_pid_stat(10, "python", 10, 0, 0, 256)], _cpu(100, 900, 0))
    stats = HostStats(lambda: [10], str(tmp_path), clock=lambda: now[0])
    first = stats.sample()
    assert "sut-cpu" not in first and "host-cpu" not in first
    assert first["sut-rss"] == pytest.approx(256 * host_stats._PAGE / host_stats.MIB)
    now[0] += 2.0
    ticks = int(1.5 * 2.0 * host_stats._TICKS)  # 1.5 cores for 2 s
    _fake_proc(tmp_path, [_pid_stat(10, "python", 10, ticks, 0, 256)], _cpu(100 + 300, 900 + 600, 100))
    second = stats.sample()
    assert second["sut-cpu"] == pytest.approx(1.5)
    assert second["host-cpu"] == pytest.approx(400 / 1000)  # user 300 + steal 100 of 1000 ticks
    assert second["host-steal"] == pytest.approx(0.1)
    assert "host-load1" in second


def test_a_process_that_ended_never_makes_cpu_negative(tmp_path: Path) -> None:
    now = [0.0]
    _fake_proc(tmp_path, [_pid_stat(10, "a", 10, 500, 0, 1), _pid_stat(11, "b", 10, 0, 0, 1)], _cpu(1, 1, 0))
    stats = HostStats(lambda: [10], str(tmp_path), clock=lambda: now[0])
    stats.sample()
    (tmp_path / "10" / "stat").unlink()
    now[0] = 1.0
    assert stats.sample()["sut-cpu"] == 0.0


def test_the_real_proc_of_this_process() -> None:
    stats = HostStats(lambda: [os.getpgrp()])
    stats.sample()
    end = time.monotonic() + 0.1  # some CPU, over several of /proc/stat's 10-ms ticks
    while time.monotonic() < end:
        sum(i * i for i in range(10_000))
    values = stats.sample()
    assert values["sut-rss"] > 1.0  # MiB; this interpreter alone is more
    assert values["sut-cpu"] >= 0.0
    assert 0.0 <= values["host-cpu"] <= 1.0
