"""CPU limits per SUT instance on one machine, the way Kubernetes limits a pod: a cgroup quota.

Why: on one machine every "instance" (a Spark task slot, a calibrated process) can
use every core, so adding instances adds nothing once the SUT's threads and Python
workers already spread over the cores, and a demand search finds 1 for every load.
A Kubernetes deployment of the same SUT gives each executor a CPU limit. The embedded
platform does the same when the SUT object says ``cpuPerInstance: C`` (cores): the
SUT's process tree (driver JVM, Python workers) runs in a CPU cgroup whose quota is
``instances x C`` cores. Children inherit the cgroup, so everything the SUT starts
counts against it.

Needs a writable CPU controller (root, or a delegated cgroup): cgroup v2's
``cpu.max`` or v1's ``cpu.cfs_quota_us``. Where there is none, :func:`create` says so
in its error and the platform records that the limit did not apply.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runtime.host import proctree

PERIOD_US = 100_000
V1_ROOT = Path("/sys/fs/cgroup/cpu")
V2_ROOT = Path("/sys/fs/cgroup")
PREFIX = "bench-"


class CpuLimitUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class CpuLimit:
    path: Path
    cores: float
    version: int

    def add(self, pid: int) -> None:
        """Move ``pid`` into the cgroup; the processes it starts afterwards inherit it."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def add_tree(self, root: int) -> int:
        """Move ``root``, every process of its process group and every descendant of
        either; returns how many moved. Processes forked later by a moved one inherit
        the cgroup.

        Why descendants and not only the group: PySpark's worker daemon puts itself in
        a process group of its own (``os.setpgid(0, 0)``), so a move by process group
        left every Python worker of a SUT that had started before the move (the
        warm-up's) outside the limit, unlimited: UC3's and UC4's Python operators and
        the Kafka sinks' ``mapInArrow`` ran on free CPU.
        """
        moved: set[int] = set()
        for _ in range(3):  # again: a process forked by one not yet moved during a pass
            chosen = proctree.members([root], proctree.processes()) - moved
            if not chosen:
                break
            for pid in sorted(chosen):
                try:
                    self.add(pid)
                except OSError:
                    continue  # gone meanwhile
                moved.add(pid)
        return len(moved)

    def members(self) -> set[int]:
        """The processes in the cgroup now."""
        try:
            return {int(pid) for pid in (self.path / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    def usage_seconds(self) -> float | None:
        """CPU seconds used by everything in the cgroup so far (None if unreadable)."""
        try:
            if self.version == 2:
                for line in (self.path / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
                return None
            usage = Path(str(self.path).replace("/cpu/", "/cpuacct/"), "cpuacct.usage")
            return int(usage.read_text()) / 1e9 if usage.exists() else None
        except (OSError, ValueError):
            return None

    def lift(self) -> None:
        """No quota from now on. The SUT's shutdown after its last sample measures
        nothing, and under its quota a Spark driver took 4.0-6.4 s to stop, against
        1.1-1.6 s without (UC1-UC4 at a quarter core): seconds every
        experiment waited for. Start-up runs unlimited for the same reason."""
        try:
            if self.version == 2:
                (self.path / "cpu.max").write_text(f"max {PERIOD_US}")
            else:
                (self.path / "cpu.cfs_quota_us").write_text("-1")
        except OSError:
            return  # gone already, or not writable: the stop just takes longer

    def remove(self, timeout: float = 5.0) -> None:
        """Remove the cgroup once its processes are gone (a cgroup with members cannot go)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.1)


def _root() -> tuple[Path, int]:
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return V2_ROOT, 2
    if (V1_ROOT / "cpu.cfs_quota_us").exists():
        return V1_ROOT, 1
    raise CpuLimitUnavailable("no cgroup CPU controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us) on this machine")


def _path(root: Path, name: str) -> Path:
    return root / f"{PREFIX}{os.getpid()}-{name}"


def members_of(name: str) -> set[int]:
    """The processes now in this process's cgroup ``name`` (made by :func:`create`); empty
    where there is none. For a measurement beside the platform (benchmarks/observer_effect.py
    reads where each SUT's CPU goes) that holds the experiment's id, not its platform's run."""
    try:
        root, version = _root()
    except CpuLimitUnavailable:
        return set()
    return CpuLimit(_path(root, name), 0.0, version).members()


def create(name: str, cores: float) -> CpuLimit:
    """A fresh cgroup ``bench-<pid>-<name>`` limited to ``cores`` CPUs."""
    if cores <= 0:
        raise ValueError(f"cpu limit must be positive, got {cores}")
    root, version = _root()
    path = _path(root, name)
    quota = max(1000, int(round(cores * PERIOD_US)))
    try:
        path.mkdir(exist_ok=True)
        if version == 2:
            (path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (path / "cpu.cfs_quota_us").write_text(str(quota))
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise CpuLimitUnavailable(f"cannot create a CPU cgroup under {root}: {exc.strerror or exc}") from None
    return CpuLimit(path, cores, version)


def sweep_stale() -> int:
    """Remove the cgroups of bench processes that are gone (a killed run); returns how many."""
    try:
        root, _ = _root()
    except CpuLimitUnavailable:
        return 0
    removed = 0
    for path in root.glob(f"{PREFIX}*"):
        owner = path.name[len(PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                path.rmdir()
                removed += 1
    return removed


def unlimitable(options: Mapping[str, Any], spark_mode: str, spark: bool) -> str | None:
    """Why a CPU limit per instance cannot hold on this SUT, None when it can: a Spark SUT's
    executors live in a cluster's workers (``--spark-mode standalone``, ``--spark-master``),
    where a limit on the driver alone would measure the driver."""
    if not spark:
        return None
    if options.get("spark_master"):
        return "--spark-master: the executors run on that cluster's workers, which bench cannot limit"
    if spark_mode != "local":
        return f"--spark-mode {spark_mode}: the executors run in the workers' JVMs, which bench does not limit"
    return None


def refuse_unlimited_cpu(options: Mapping[str, Any], use_case: Any,
                         objects: Sequence[Mapping[str, Any]], given: bool = True) -> None:
    """``cpuPerInstance`` given by the user where bench cannot limit the Spark executors
    (``unlimitable``): the run would measure whole cores while the user asked for a share.
    Refused. The use case's default limit (``given`` False) is not refused: it is not
    applied there, the environment file records it as not applied, and the cost counts
    whole cores (``bench.analysis.scaling``), so a cluster run needs no extra setting."""
    from bench.errors import UserError

    if not given:
        return
    for obj in objects:
        if obj.get("kind") == "BenchSut" and float((obj.get("spec") or {}).get("cpuPerInstance") or 0) > 0:
            why = unlimitable(options, str(options.get("spark_mode") or "local"), use_case.topology is not None)
            if why:
                raise UserError(f"cpuPerInstance {obj['spec']['cpuPerInstance']}: {why}; drop the limit "
                              "or run with local[N] Spark (--spark-mode local, no --spark-master)")
