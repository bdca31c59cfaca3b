"""What every benchmark script shares: medians, load notes, CPU clocks, output format.

Figures are medians of several runs because this 2-core machine is shared: the
load average printed next to them says how noisy the run was, and ratios measured
in the same run (interleaved) are what count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def load_note() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def load_averages(runs: Sequence[Any]) -> str:
    """Each run's load averages before / after it (its ``before`` and ``after`` notes of
    :func:`load_note`), for a table's last column."""
    def bare(note: str) -> str:
        return note.split(" on ")[0].removeprefix("load average ")

    return "; ".join(f"{bare(r.before)} / {bare(r.after)}" for r in runs)


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


#: where broker data goes unless ``--broker-on-disk``: a RAM file system
TMPFS = "/dev/shm"


def add_broker_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker-on-disk", action="store_true",
                        help=f"keep the embedded broker's data on disk (default: {TMPFS} when it exists)")


def place_broker_data(on_disk: bool) -> str:
    """Put the embedded broker's data directory on a RAM file system; say where it went.

    noida-db writes every record to its data directory. At a million records/s that is
    ~100 MB/s of write-back on the shared disk, and the I/O stalls it causes (pressure
    "full" 7-13 % in /proc/pressure/io) moved the generator's measured maximum between
    0.66M and 1.5M records/s from one 10-s run to the next. On a tmpfs that noise is
    gone; both sides of every ratio share the broker, so a ratio is not flattered.
    It sets the process's temporary directory, so the script's own temporary files
    (specs, Spark checkpoints) go there too, for both sides alike.
    """
    if on_disk or not os.path.isdir(TMPFS) or not os.access(TMPFS, os.W_OK):
        return f"broker data on disk ({tempfile.gettempdir()})"
    tempfile.tempdir = TMPFS  # running_broker's mkdtemp follows it
    return f"broker data on tmpfs ({TMPFS})"


def commit() -> str:
    """The short commit of the checkout measured (figures are labelled with it), "+dirty"
    when files differ from it."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


USE_CASES = ("calibrated", "uc1", "uc2", "uc3", "uc4")


def grid(registry: Any, plugin: str, quick: bool) -> tuple[list[float], list[float]]:
    """The loads and resources a script measures: the use case's own default execution
    (what ``bench run --plugin NAME`` measures, chosen so that one instance keeps up with
    the lowest load and not with the highest, docs/performance.md), so the scripts and
    the defaults cannot drift apart. Quick: the highest load only, every resource value."""
    from bench.cli.launch import prepare_run

    execution = prepare_run(registry, {"plugin": plugin}).execution
    loads = [float(x) for x in execution.load.loadValues]
    resources = [float(x) for x in execution.resources.resourceValues]
    return (loads[-1:] if quick else loads), resources


def experiment_defaults(args: argparse.Namespace) -> None:
    """The experiment shape the timing scripts share: laptop-scale full runs, or --quick."""
    args.duration = args.duration or (60.0 if args.quick else 300.0)
    args.warmup = args.warmup if args.warmup is not None else (15.0 if args.quick else 60.0)
    args.interval = args.interval or (2.0 if args.quick else 5.0)
    args.repetitions = args.repetitions or (1 if args.quick else 3)
