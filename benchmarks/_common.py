"""What every benchmark script shares: medians, load notes, CPU clocks, output format.

Figures are medians of several runs because this 2-core machine is shared: the
load average printed next to them says how noisy the run was, and ratios measured
in the same run (interleaved) are what count.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path


def load_note() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def spread(values: Sequence[float]) -> str:
    if not values:
        return "(no runs)"
    return f"median {median(values):,.1f}  min {min(values):,.1f}  max {max(values):,.1f}  n={len(values)}"


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of one process (and its reaped children) from /proc, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def banner(title: str) -> None:
    print(f"== {title}  ({time.strftime('%Y-%m-%d %H:%M:%S')}, {load_note()})", flush=True)
