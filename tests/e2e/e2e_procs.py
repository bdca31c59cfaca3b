"""The processes of the e2e tests: ``bench run`` as a user starts it, its demand table,
and finding the processes a test started by a marker in their environment.

Not a test module; the e2e tests import it by name. Every child inherits its parent's
environment, so a marker set on the CLI's command reaches the broker, the Spark JVM and
every Python worker it started.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench_run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``bench run`` with ``args`` in a process of its own, from the repository's root."""
    return subprocess.run([sys.executable, "-m", "bench.cli.commands", "run", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def demand_rows(results: Path) -> list[dict[str, str]]:
    """The rows of a finished run's demand table (``exp0_demand.csv``), as written."""
    with open(results / "exp0_demand.csv") as fh:
        return list(csv.DictReader(fh))


def marked(mark: str, token: str) -> dict[int, str]:
    """pid -> command line of every live, non-zombie process whose environment has ``mark=token``."""
    found: dict[int, str] = {}
    needle = f"{mark}={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            found[int(entry.name)] = cmd
    return found
