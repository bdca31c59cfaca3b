"""Where a SUT's CPU goes, by part, read from ``/proc`` thread by thread.

Why: the SUT's throughput is what the observer effect is about, but two like
quarter-core SUTs on this machine read within about ±3 % of each other (an A/A run of
four pairs) and one third apart at worst, so four or eight pairs cannot
tell a 2 % effect from none. Inside its CPU limit a SUT at its quota can only lose to
bench's instrumentation the CPU the instrumentation itself spends there, which is read
directly and with no such spread: the offset commits are the one part of it that runs
in the SUT's processes (the Kafka client of ``OffsetCommitter`` in the Python driver,
whose threads librdkafka names ``rdk:...``, and the driver's calls into it). What bench
spends outside the SUT's cgroup (samplers, the broker) reaches the SUT only through a
machine with no spare CPU; the pairs with the samplers alone switched off measure that.

Parts: ``jvm`` (Spark), ``driver`` (the Python driver process but its Kafka client),
``kafka-client`` (librdkafka's threads in the driver), ``workers`` (Python workers;
one that exits inside a window takes its CPU with it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from bench.runtime.host.stats import parse_pid_stat

PARTS = ("jvm", "driver", "kafka-client", "workers")
DRIVER_MODULE = b"bench.runtime.spark.driver"
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def part_of(cmdline: bytes) -> str:
    """Which part a SUT process is, from its ``/proc/<pid>/cmdline`` (NUL-separated)."""
    args = cmdline.split(b"\0")
    if args and os.path.basename(args[0]) == b"java":
        return "jvm"
    return "driver" if DRIVER_MODULE in args else "workers"


def _thread_seconds(stat: str) -> float:
    return parse_pid_stat(stat)[1] / TICKS  # a thread's stat line has a process's fields


def snapshot(pids: Iterable[int], proc: str = "/proc") -> dict[str, float]:
    """CPU seconds used so far by each part of the processes ``pids`` (a SUT's cgroup)."""
    totals = dict.fromkeys(PARTS, 0.0)
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/cmdline", "rb") as fh:
                part = part_of(fh.read())
            tasks = os.listdir(f"{proc}/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in tasks:
            try:
                with open(f"{proc}/{pid}/task/{tid}/comm", encoding="utf-8", errors="replace") as fh:
                    name = fh.read().strip()
                with open(f"{proc}/{pid}/task/{tid}/stat", encoding="utf-8", errors="replace") as fh:
                    seconds = _thread_seconds(fh.read())
            except (OSError, ValueError, IndexError):
                continue
            totals["kafka-client" if part == "driver" and name.startswith("rdk:") else part] += seconds
    return totals


def cores(before: Mapping[str, float], after: Mapping[str, float], seconds: float) -> dict[str, float]:
    """Each part's CPU between two snapshots, in cores (NaN without a window)."""
    if seconds <= 0:
        return {part: float("nan") for part in PARTS}
    return {part: max(0.0, after.get(part, 0.0) - before.get(part, 0.0)) / seconds for part in PARTS}


def instrumentation_share(instrumented: Mapping[str, float], bare: Mapping[str, float], quota: float) -> float:
    """The share of a SUT's CPU quota its instrumentation took: what the instrumented
    side's driver and Kafka client used beyond the bare side's, over the quota. Both
    sides' drivers also handle Spark's progress (bare included), so that part cancels."""
    extra = (instrumented["driver"] + instrumented["kafka-client"]) - (bare["driver"] + bare["kafka-client"])
    return extra / quota if quota > 0 else float("nan")


def split_ratio(rate: float, cpu: Mapping[str, float], other_rate: float,
                other_cpu: Mapping[str, float]) -> tuple[float, float] | None:
    """A pair's throughput ratio as two factors: the CPU the two SUTs got (all parts) and
    the records each read per CPU-second of it; their product is the ratio. None without
    figures. Why: a side can read less because it got less of its quota (waiting, or a
    machine with no spare CPU) or because the same CPU bought fewer records (its JIT
    compiling, its collector), and the instrumentation inside the quota is neither."""
    mine, theirs = sum(cpu.get(p, 0.0) for p in PARTS), sum(other_cpu.get(p, 0.0) for p in PARTS)
    if not (mine > 0 and theirs > 0 and rate > 0 and other_rate > 0):
        return None
    return mine / theirs, (rate / mine) / (other_rate / theirs)
