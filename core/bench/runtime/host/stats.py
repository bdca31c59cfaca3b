"""CPU and memory of the SUT's processes and of the host, from /proc (Linux).

Recorded with every experiment as informational SLIs (never an SLO input): a demand
measured on a host that was busy with something else, or whose virtual CPUs were
stolen by the hypervisor, is not the SUT's demand, and the numbers that say so must
sit next to the result. /proc rather than psutil: the few fields needed are one line
each, and the runtime should not grow a compiled dependency for them.

SUT processes are found by process group and parent links: every child of bench is
started in its own session (:func:`bench.runtime.host.procs.spawn`), so the Spark
driver's JVM shares the driver's group; PySpark's Python workers leave it (their daemon
makes a group of its own) and are counted as the JVM's descendants
(:mod:`bench.runtime.host.proctree`; counting only the group missed them). RSS is summed over those
processes (shared pages count once per process: an upper bound). CPU is the growth of
utime + stime between two samples in cores (1.0 = one core busy); a process that ends
between samples takes its last ticks with it, so a sample never goes negative but may
miss them.

Names (no ``_``, as in every SLI file name): ``sut-cpu`` (cores), ``sut-rss`` (MiB),
``host-load1`` (1-minute load average), ``host-cpu`` (busy fraction of all CPUs),
``host-steal`` (fraction of CPU time stolen by the hypervisor).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bench.runtime.host.proctree import members, stat_fields

PROC = "/proc"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MIB = 1024.0 * 1024.0


@dataclass(frozen=True)
class CpuTimes:
    """The first line of /proc/stat, in ticks."""

    busy: int
    total: int
    steal: int


def parse_proc_stat(text: str) -> CpuTimes:
    """``cpu user nice system idle iowait irq softirq steal ...`` -> busy, total and steal ticks.

    Guest time is already part of user time, so it is not added again; idle and iowait
    are the not-busy part.
    """
    fields = text.splitlines()[0].split()
    if not fields or fields[0] != "cpu":
        raise ValueError("not a /proc/stat cpu line")
    ticks = [int(x) for x in fields[1:]]
    ticks += [0] * (8 - len(ticks))
    user, nice, system, idle, iowait, irq, softirq, steal = ticks[:8]
    total = user + nice + system + idle + iowait + irq + softirq + steal
    return CpuTimes(busy=total - idle - iowait, total=total, steal=steal)


def parse_pid_stat(text: str) -> tuple[int, int, int]:
    """(process group, utime + stime ticks, rss pages) of one /proc/<pid>/stat line.

    The command name (field 2) may hold spaces and parentheses; fields are counted
    after its last ``)``.
    """
    rest = stat_fields(text)
    ticks, pages = _usage(rest)
    return int(rest[2]), ticks, pages


def _usage(rest: list[str]) -> tuple[int, int]:
    """(utime + stime ticks, rss pages) from :func:`stat_fields`: rest[0] is field 3
    (state), so utime is field 14, stime 15, rss 24."""
    return int(rest[11]) + int(rest[12]), int(rest[21])


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def group_usage(groups: Iterable[int], proc: str = PROC) -> tuple[int, int]:
    """(CPU ticks, RSS bytes) summed over every live process in the given process groups
    and over their descendants."""
    wanted = set(groups)
    if not wanted:
        return 0, 0
    table: dict[int, tuple[int, int]] = {}
    usage: dict[int, tuple[int, int]] = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        text = _read(f"{proc}/{entry}/stat")
        if text is None:
            continue
        try:
            rest = stat_fields(text)
            table[int(entry)] = (int(rest[1]), int(rest[2]))
            usage[int(entry)] = _usage(rest)
        except (ValueError, IndexError):
            continue
    chosen = members(wanted, table)
    return sum(usage[pid][0] for pid in chosen), sum(usage[pid][1] for pid in chosen) * _PAGE


class HostStats:
    """Samples ``sut-cpu``, ``sut-rss``, ``host-load1``, ``host-cpu`` and ``host-steal``.

    Rates need two readings: the first sample has only the levels (RSS, load).
    """

    def __init__(self, groups: Callable[[], Iterable[int]] = tuple, proc: str = PROC,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.groups = groups
        self.proc = proc
        self.clock = clock
        self._host: CpuTimes | None = None
        self._sut: tuple[float, int] | None = None

    def sample(self) -> dict[str, float]:
        out: dict[str, float] = {}
        now = self.clock()
        with_groups = list(self.groups())
        if with_groups:
            ticks, rss = group_usage(with_groups, self.proc)
            out["sut-rss"] = rss / MIB
            if self._sut is not None and now > self._sut[0]:
                out["sut-cpu"] = max(0, ticks - self._sut[1]) / _TICKS / (now - self._sut[0])
            self._sut = (now, ticks)
        try:
            out["host-load1"] = float(os.getloadavg()[0])
        except OSError:
            pass
        text = _read(f"{self.proc}/stat")
        if text is not None:
            try:
                host = parse_proc_stat(text)
            except (ValueError, IndexError):
                return out
            if self._host is not None and host.total > self._host.total:
                total = host.total - self._host.total
                out["host-cpu"] = (host.busy - self._host.busy) / total
                out["host-steal"] = (host.steal - self._host.steal) / total
            self._host = host
        return out
