"""A Spark standalone cluster from the pyspark wheel: one master, N workers.

The wheel has no sbin scripts, but ``spark-class`` runs the Master and Worker classes
directly. One worker is the local stand-in for one "instance" of the
SUT: one core by default, ``coresPerInstance`` cores and ``memoryPerInstanceMb`` MiB
for the vertical resource types (:class:`InstanceShape`). Every JVM is a child in its
own process group (procs), so it dies with the benchmark.

The same class starts a cluster as an *external* service (:meth:`SparkCluster.start_sync`,
for tests and ``python -m bench.runtime.spark.cluster``, :func:`main`): bench is handed only
its master URL (``--spark-master``), as with a real cluster, and
:meth:`SparkCluster.executors` tells on which worker each executor ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runtime.host import procs
from bench.runtime.host.ports import free_port

START_TIMEOUT_S = 90.0


class SparkClusterError(RuntimeError):
    pass


@dataclass(frozen=True)
class InstanceShape:
    """How many SUT instances, and how big each one is (the three resource types).

    ``slots`` (instances x cores) is what the Spark driver's spec calls ``instances``:
    it sizes ``local[N]``, the shuffle partitions and the Kafka read tasks, so that an
    instance with two cores gets two tasks' worth of parallelism, as a two-core
    executor would.

    On a standalone master (``spark://``) each instance is one executor with
    ``cores`` cores and ``memory_mb`` MiB of heap, and ``spark.cores.max`` keeps the
    application to exactly ``instances`` executors even on a larger cluster. In
    local mode there are no executors: the tasks run in the driver's JVM, so memory
    per instance becomes driver memory, ``memory_mb`` x instances (one JVM holds what
    the instances would hold together).
    """

    instances: int
    cores: int = 1
    memory_mb: int | None = None

    @classmethod
    def of(cls, sut_spec: Mapping[str, Any], instances: int) -> InstanceShape:
        """From a BenchSut spec (``coresPerInstance``, ``memoryPerInstanceMb``, as the
        ExecutorCoresPatcher / ExecutorMemoryPatcher write them)."""
        cores = int(sut_spec.get("coresPerInstance") or 1)
        memory = sut_spec.get("memoryPerInstanceMb")
        return cls(max(1, instances), max(1, cores), int(memory) if memory else None)

    @property
    def slots(self) -> int:
        return self.instances * self.cores

    @property
    def worker_memory(self) -> str:
        """What a standalone worker offers: exactly one executor's heap (Spark's default
        1g executor when no memory is given)."""
        return f"{self.memory_mb}m" if self.memory_mb else "1g"

    def conf(self, master: str | None) -> dict[str, str]:
        """Spark settings for this shape on ``master`` (None or ``local[...]``: local mode)."""
        if not master or master.startswith("local"):
            return {"spark.driver.memory": f"{self.memory_mb * self.instances}m"} if self.memory_mb else {}
        settings = {"spark.executor.cores": str(self.cores), "spark.cores.max": str(self.slots)}
        if self.memory_mb:
            settings["spark.executor.memory"] = f"{self.memory_mb}m"
        return settings


def spark_home() -> str:
    """The pyspark package directory: the wheel is a complete SPARK_HOME (bin, jars)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SparkClusterError("pyspark is not installed in this environment")
    return str(next(iter(spec.submodule_search_locations)))


def spark_class() -> str:
    found = Path(spark_home(), "bin", "spark-class")
    if not found.exists():
        raise SparkClusterError(f"{found} not found: is the pyspark installation complete?")
    return str(found)


class SparkCluster:
    def __init__(self, workers: int, worker_memory: str = "1g", cores_per_worker: int = 1) -> None:
        self.workers = workers
        self.worker_memory = worker_memory
        self.cores_per_worker = cores_per_worker
        self.dir = tempfile.mkdtemp(prefix="bench-spark-")
        self.port = 0
        self.ui_port = 0
        self._master: asyncio.subprocess.Process | None = None
        self._workers: list[asyncio.subprocess.Process] = []
        #: the JVMs of a cluster started with :meth:`start_sync` (a blocking caller's children)
        self._sync: list[subprocess.Popen[bytes]] = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        return procs.child_env(
            {
                "SPARK_LOG_DIR": self.dir,
                "SPARK_WORKER_DIR": os.path.join(self.dir, "work"),
                "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1",
                "SPARK_HOME": spark_home(),
                "PYSPARK_PYTHON": sys.executable,
            }
        )

    async def _spawn(self, args: list[str], name: str) -> asyncio.subprocess.Process:
        log = open(os.path.join(self.dir, f"{name}.log"), "wb")  # noqa: SIM115 - handed to the child
        try:
            return await procs.spawn(
                [spark_class(), *args],
                what=f"spark {name}",
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                env=self._env(),
            )
        finally:
            log.close()

    def log_tail(self, name: str, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            text = Path(self.dir, f"{name}.log").read_text(errors="replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""

    async def start(self) -> None:
        self.port, self.ui_port = free_port(), free_port()
        self._master = await self._spawn(self._master_args(), "master")
        await self._wait_workers(0, "master")
        await self.scale(self.workers)

    async def scale(self, workers: int) -> None:
        while len(self._workers) < workers:
            i = len(self._workers)
            proc = await self._spawn(self._worker_args(i), f"worker-{i}")
            self._workers.append(proc)
        while len(self._workers) > workers:
            await procs.terminate(self._workers.pop())
        self.workers = workers
        await self._wait_workers(workers, f"worker-{max(0, workers - 1)}")

    def _state(self) -> dict[str, object]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as resp:  # noqa: S310
            state: dict[str, object] = json.load(resp)
            return state

    async def _wait_workers(self, count: int, log_name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._master is None or self._master.returncode is not None:
                raise SparkClusterError(f"Spark master exited:\n{self.log_tail('master')}")
            try:
                state = await asyncio.to_thread(self._state)
                if int(str(state.get("aliveworkers", 0))) >= count:
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise SparkClusterError(
                    f"Spark cluster: {count} worker(s) not alive after {START_TIMEOUT_S:.0f} s:\n"
                    + self.log_tail(log_name)
                )
            await asyncio.sleep(0.3)

    async def stop(self) -> None:
        for proc in self._workers:
            await procs.terminate(proc, grace=3)
        self._workers.clear()
        if self._master is not None:
            await procs.terminate(self._master, grace=3)
            self._master = None
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------ an external service

    def _master_args(self) -> list[str]:
        return ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port),
                "--webui-port", str(self.ui_port)]

    def _worker_args(self, i: int) -> list[str]:
        return ["org.apache.spark.deploy.worker.Worker", "--cores", str(self.cores_per_worker),
                "--memory", self.worker_memory, "--webui-port", "0",
                "--work-dir", self.worker_dir(i), self.master_url]

    def worker_dir(self, i: int) -> str:
        """Where worker ``i`` keeps each executor's folder (``app-.../<executor id>``)."""
        return os.path.join(self.dir, f"work-{i}")

    def _popen(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        with open(os.path.join(self.dir, f"{name}.log"), "wb") as log:
            return procs.popen([spark_class(), *args], what=f"spark {name}", stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self._env())

    def start_sync(self) -> None:
        """Start master and workers from a blocking caller and wait until all are alive.

        Spawned from the calling thread (PR_SET_PDEATHSIG follows the thread that forks):
        call it from the thread that lives as long as the cluster, as a test fixture does.
        """
        self.port, self.ui_port = free_port(), free_port()
        try:
            self._sync.append(self._popen(self._master_args(), "master"))
            self._wait_sync(0, "master")
            for i in range(self.workers):
                self._sync.append(self._popen(self._worker_args(i), f"worker-{i}"))
            self._wait_sync(self.workers, f"worker-{max(0, self.workers - 1)}")
        except BaseException:
            self.stop_sync()
            raise

    def _wait_sync(self, count: int, log_name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            dead = [p for p in self._sync if p.poll() is not None]
            if dead:
                raise SparkClusterError(f"a Spark JVM exited ({dead[0].returncode}):\n{self.log_tail(log_name)}")
            with contextlib.suppress(OSError, ValueError):
                if int(str(self.state().get("aliveworkers", 0))) >= count:
                    return
            if time.monotonic() > deadline:
                raise SparkClusterError(f"Spark cluster: {count} worker(s) not alive after "
                                        f"{START_TIMEOUT_S:.0f} s:\n{self.log_tail(log_name)}")
            time.sleep(0.3)

    def alive(self) -> bool:
        """Every JVM of a cluster started with :meth:`start_sync` still runs."""
        return bool(self._sync) and all(p.poll() is None for p in self._sync)

    def stop_sync(self) -> None:
        for proc in reversed(self._sync):  # workers first: a master gone first makes them retry
            procs.terminate_group_sync(proc.pid, grace=3.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self._sync.clear()
        shutil.rmtree(self.dir, ignore_errors=True)

    def state(self) -> dict[str, Any]:
        """The master's JSON view (workers with their cores used, applications)."""
        return dict(self._state())

    def executors(self) -> dict[str, dict[int, list[str]]]:
        """Executors that ran, by application id, then worker index: the folders each
        worker made for them. They stay after the application ends, unlike the master's
        live view, so a test can ask after the run where the executors were placed."""
        placed: dict[str, dict[int, list[str]]] = {}
        for i in range(self.workers):
            root = Path(self.worker_dir(i))
            for app in sorted(root.glob("app-*")) if root.is_dir() else ():
                ids = sorted(e.name for e in app.iterdir() if e.is_dir())
                if ids:
                    placed.setdefault(app.name, {})[i] = ids
        return placed


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.runtime.spark.cluster --workers 2``: a local standalone cluster to
    rehearse ``--spark-master`` with (docs/scaling-out.md); prints the master URL and runs
    until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.runtime.spark.cluster")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores per worker")
    parser.add_argument("--memory", default="1g", help="memory per worker")
    args = parser.parse_args(argv)
    cluster = SparkCluster(args.workers, args.memory, args.cores)
    cluster.start_sync()
    print(f"{cluster.master_url}  (web UI http://127.0.0.1:{cluster.ui_port})", flush=True)
    try:
        while cluster.alive():
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop_sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
