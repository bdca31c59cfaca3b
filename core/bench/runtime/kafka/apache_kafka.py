"""Apache Kafka as the embedded broker: one KRaft node, or a cluster of them, on loopback.

Why Apache Kafka rather than a Kafka-protocol imitation: figures measured through a
substitute do not transfer to the Kafka clusters users run. The JARs come from Maven
(:mod:`bench.runtime.host.jars`); each node runs ``kafka.Kafka`` in combined mode (broker
and controller) as a child process (:mod:`bench.runtime.host.procs`: own process group,
killed with its parent), with storage formatted in a per-run temp dir that ``stop``
removes.

A three-node cluster (``nodes=3``) is the rehearsal for real clusters: every node is
a voter, benchmark topics get replication factor 3 (``default.replication.factor``),
and one node can be killed while the others go on. Start-up time and resident memory
are in docs/performance.md.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import UserError
from bench.runtime.host import procs
from bench.runtime.host.jars import INSTALL_HINT, KafkaJars, kafka_jars
from bench.runtime.host.ports import accepts, free_port
from bench.runtime.kafka.security import KafkaSecurity

#: The broker's JVM heap: enough for a benchmark's few topics, small enough to leave a
#: 2-core, 8-GB laptop to Spark (measured: docs/performance.md). BENCH_KAFKA_HEAP overrides.
DEFAULT_HEAP = "512m"
HEAP_ENV = "BENCH_KAFKA_HEAP"
START_TIMEOUT_S = 60.0
#: the SASL mechanism of a broker started with ``scram=(user, password)`` (secured-cluster tests)
SCRAM_MECHANISM = "SCRAM-SHA-256"

_LOG4J = """\
status = error
appender.err.type = Console
appender.err.name = err
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = err
"""


class KafkaStartError(UserError, RuntimeError):
    pass


@dataclass
class KafkaNode:
    node_id: int
    port: int
    controller_port: int
    dir: str
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    #: with SCRAM, brokers talk to each other on a PLAINTEXT listener of their own
    internal_port: int | None = None

    @property
    def log_path(self) -> str:
        return os.path.join(self.dir, "broker.log")

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else -1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = 9) -> None:
        """Kill this node only (fault tests); the rest of the cluster goes on."""
        if self.proc is not None:
            procs.kill_group(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)


def _listeners(node: KafkaNode, scram: bool) -> dict[str, object]:
    if not scram:
        return {
            "listeners": f"PLAINTEXT://127.0.0.1:{node.port},CONTROLLER://127.0.0.1:{node.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        }
    # Clients must authenticate (SASL/SCRAM on CLIENT); the brokers' own traffic stays on
    # a loopback PLAINTEXT listener, so no broker credentials are needed.
    client = f"CLIENT://127.0.0.1:{node.port},INTERNAL://127.0.0.1:{node.internal_port}"
    return {
        "listeners": f"{client},CONTROLLER://127.0.0.1:{node.controller_port}",
        "advertised.listeners": client,
        "inter.broker.listener.name": "INTERNAL",
        "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": SCRAM_MECHANISM,
        "listener.name.client.sasl.enabled.mechanisms": SCRAM_MECHANISM,
        "listener.name.client.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    }


def server_properties(node: KafkaNode, nodes: list[KafkaNode], scram: bool = False) -> str:
    replicas = min(3, len(nodes))
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in nodes)
    settings = {
        "process.roles": "broker,controller",
        "node.id": node.node_id,
        "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        **_listeners(node, scram),
        "log.dirs": os.path.join(node.dir, "data"),
        "num.partitions": 1,
        "default.replication.factor": replicas,
        "min.insync.replicas": 2 if replicas >= 3 else 1,
        "offsets.topic.replication.factor": replicas,
        # 50 partitions by default: their creation on the first group commit took seconds here
        "offsets.topic.num.partitions": 4,
        "transaction.state.log.replication.factor": replicas,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": replicas,
        "share.coordinator.state.topic.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
        # Benchmark data lives for one experiment, and UC3's generator writes event times
        # of long ago: time-based retention would delete them under the SUT's feet.
        "log.retention.ms": -1,
        "num.network.threads": 2,
        "num.io.threads": 2,
        "num.recovery.threads.per.data.dir": 1,
        "log.flush.interval.messages": 9223372036854775807,
    }
    return "".join(f"{k}={v}\n" for k, v in settings.items())


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    found = shutil.which("java")
    if found is None:
        raise KafkaStartError("Apache Kafka needs Java 17+: no java on PATH and no JAVA_HOME")
    return found


def heap_problem() -> str | None:
    """What is wrong with ``BENCH_KAFKA_HEAP``, or None: the JVM takes a size such as
    512m or 2g, and a heap of "lots" started a broker that died at once."""
    heap = os.environ.get(HEAP_ENV)
    if heap is None or re.fullmatch(r"[1-9][0-9]*[kKmMgG]?", heap.strip()):
        return None
    return f"{HEAP_ENV}={heap!r}: not a JVM heap size (e.g. 512m or 2g)"


def _jvm(jars: KafkaJars, logdir: str, heap: str | None = None) -> list[str]:
    heap = heap or os.environ.get(HEAP_ENV) or DEFAULT_HEAP
    return [
        _java(),
        f"-Xmx{heap}",
        f"-Xms{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={os.path.join(logdir, 'log4j2.properties')}",
        "-cp",
        jars.classpath,
    ]


@dataclass
class KafkaCluster:
    """Handle of a running embedded Apache Kafka (duck-compatible with BrokerHandle)."""

    nodes: list[KafkaNode]
    root: str
    version: str
    kind: str = "kafka"
    #: what clients need to connect (empty for PLAINTEXT); never printed unredacted
    security: KafkaSecurity = field(default_factory=KafkaSecurity)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    @property
    def port(self) -> int:
        return self.nodes[0].port

    @property
    def pid(self) -> int:
        return self.nodes[0].pid

    @property
    def data_dir(self) -> str:
        return self.root

    @property
    def log_path(self) -> str:
        return self.nodes[0].log_path

    def log_tail(self, lines: int = 20) -> str:
        tails = []
        for node in self.nodes:
            with contextlib.suppress(OSError):
                text = Path(node.log_path).read_text(errors="replace").splitlines()[-lines:]
                tails.append(f"--- node {node.node_id} ---\n" + "\n".join(text))
        return "\n".join(tails)

    def alive(self) -> bool:
        """True while every node runs (a killed node makes the cluster 'not alive')."""
        return all(n.alive() for n in self.nodes)

    def stop_sync(self) -> None:
        for node in self.nodes:
            if node.proc is not None:
                procs.kill_group(node.proc.pid, 15)
        for node in self.nodes:
            if node.proc is not None:
                procs.terminate_group_sync(node.proc.pid, grace=10.0)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.proc.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)

    async def stop(self) -> None:
        await asyncio.to_thread(self.stop_sync)


def _format(
    jars: KafkaJars, node: KafkaNode, cluster_id: str, logdir: str, scram: tuple[str, str] | None
) -> subprocess.Popen[bytes]:
    cmd = [*_jvm(jars, logdir, "256m"), "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}",
           "-c", os.path.join(node.dir, "server.properties"), "--ignore-formatted"]
    if scram:
        cmd += ["--add-scram", f"{SCRAM_MECHANISM}=[name={scram[0]},password={scram[1]}]"]
    with open(os.path.join(node.dir, "format.log"), "wb") as out:
        return procs.popen(cmd, what=f"kafka format {node.node_id}", stdout=out, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, env=procs.child_env())


def launch(nodes: int = 1, ports: list[int] | None = None, scram: tuple[str, str] | None = None) -> KafkaCluster:
    """Format and start ``nodes`` KRaft nodes; returns before they are ready (see :func:`ready`).

    ``scram=(user, password)``: clients must authenticate with SASL/SCRAM-SHA-256 as
    that user (the rehearsal of a secured cluster).

    Spawned from the calling thread: PR_SET_PDEATHSIG fires when the *thread* that
    forked exits, so never call this from a short-lived worker thread.
    """

    jars = kafka_jars()
    if jars is None:
        raise KafkaStartError(f"Apache Kafka is not installed: {INSTALL_HINT}")
    if nodes < 1:
        raise KafkaStartError(f"a Kafka cluster needs at least 1 node, got {nodes}")
    root = tempfile.mkdtemp(prefix="bench-kafka-")
    Path(root, "log4j2.properties").write_text(_LOG4J)
    members = []
    for i in range(nodes):
        port = ports[i] if ports and i < len(ports) else free_port()
        members.append(KafkaNode(i + 1, port, free_port(), os.path.join(root, f"node-{i + 1}"),
                                 internal_port=free_port() if scram else None))
    security = KafkaSecurity()
    if scram:
        security = KafkaSecurity({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": SCRAM_MECHANISM,
                                  "sasl.username": scram[0], "sasl.password": scram[1]})
    cluster = KafkaCluster(members, root, jars.version, security=security)
    try:
        cluster_id = _cluster_id()
        formats = []
        for node in members:
            os.makedirs(node.dir)
            Path(node.dir, "server.properties").write_text(server_properties(node, members, bool(scram)))
            formats.append(_format(jars, node, cluster_id, root, scram))
        for node, proc in zip(members, formats, strict=True):
            if proc.wait(timeout=120) != 0:
                log = Path(node.dir, "format.log").read_text(errors="replace")[-2000:]
                raise KafkaStartError(f"kafka storage format failed for node {node.node_id}:\n{log}")
            procs.forget(proc.pid)
        for node in members:
            cmd = [*_jvm(jars, root), "kafka.Kafka", os.path.join(node.dir, "server.properties")]
            with open(node.log_path, "wb") as log_file:
                node.proc = procs.popen(cmd, what=f"kafka node {node.node_id}", stdout=log_file,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=procs.child_env())
    except BaseException:
        cluster.stop_sync()
        raise
    return cluster


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (what `random-uuid` prints)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def ready(cluster: KafkaCluster, timeout: float = 2.0) -> bool:
    """True once every node is registered and serves metadata (an open port is not enough)."""
    import logging

    from confluent_kafka.admin import AdminClient

    if not all(accepts(n.port) for n in cluster.nodes):
        return False  # cheap check first: a librdkafka client retrying a closed port logs every second
    quiet = logging.getLogger("bench.kafka-ready")
    quiet.propagate = False
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, **cluster.security.confluent()},
                        logger=quiet)
    try:
        metadata = admin.list_topics(timeout=timeout)
    except Exception:  # noqa: BLE001 - not up yet
        return False
    return len(metadata.brokers) >= len(cluster.nodes)


def check(cluster: KafkaCluster, deadline: float) -> bool:
    """One readiness poll: True when ready; raises when a node died or time ran out."""
    dead = [n for n in cluster.nodes if n.proc is not None and n.proc.poll() is not None]
    if not dead and ready(cluster):
        return True
    if dead or time.monotonic() > deadline:
        tail = cluster.log_tail()
        cluster.stop_sync()
        why = f"node {dead[0].node_id} exited with {dead[0].proc.returncode if dead[0].proc else '?'}" if dead \
            else f"not ready after {START_TIMEOUT_S:.0f} s"
        cmd = shlex.join(["kafka.Kafka", "server.properties"])
        raise KafkaStartError(f"Apache Kafka {cluster.version} ({cmd}) {why}:\n{tail}")
    return False


def start_sync(nodes: int = 1, ports: list[int] | None = None, scram: tuple[str, str] | None = None) -> KafkaCluster:
    cluster = launch(nodes, ports, scram)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not check(cluster, deadline):
        time.sleep(0.2)
    return cluster


async def start(nodes: int = 1, ports: list[int] | None = None) -> KafkaCluster:
    cluster = launch(nodes, ports)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not await asyncio.to_thread(check, cluster, deadline):
        await asyncio.sleep(0.2)
    return cluster
