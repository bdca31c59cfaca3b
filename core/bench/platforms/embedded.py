"""The ``embedded`` platform: a Kafka broker of its own and the SUT with local Spark,
everything a child process of this machine (:mod:`bench.platforms.local`).

The broker (``bench.runtime.kafka.broker``: Apache Kafka when installed, one KRaft node
or ``brokers`` nodes) is started in :meth:`EmbeddedPlatform.open` unless
``bootstrap_servers`` is given, and replaced by a fresh one when it dies between
repetitions. Options besides :mod:`bench.platforms.local`'s: ``broker``
(kafka|noida|tansu; default kafka when installed), ``brokers`` (nodes of the embedded
Kafka cluster, 1 or 3).

Spark runs the same way on the ``external`` platform unless ``spark_master`` is given.
Default ``spark_mode`` is ``local`` (``local[N]`` inside the driver's JVM): on one
machine it gives N task slots like N one-core workers do, but without N + 1 extra
JVMs per experiment. Measured here (2 cores shared with other Spark jobs, load
average ~15): a standalone master + 2 workers took 79 s just to come up; UC1 on a
one-worker cluster needed 6 min until its first micro-batch with input reported,
while the local-mode driver reported "started" after ~2.3 min. ``standalone``
starts a master and N ``--cores 1`` workers from the pyspark wheel per experiment,
for when executor isolation matters more than start-up time.

Resource types (:mod:`bench.patchers.executor`): ``Instances`` is N;
``CoresPerInstance`` C gives standalone workers ``--cores C`` (and one C-core executor
each), in local mode ``local[N x C]``; ``MemoryPerInstance`` M MiB is each executor's
heap (``spark.executor.memory``, the workers offer exactly that) on a standalone
master, and in local mode, where every task runs in the driver's JVM, the driver's
heap N x M (:class:`bench.runtime.spark.cluster.InstanceShape`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.platforms.children import Child, JobError, PlatformError
from bench.platforms.local import GENERATOR_STALL_S, LocalPlatform, _Run, spark_payload
from bench.runtime.host import procs
from bench.runtime.kafka.broker import (
    DEFAULT_KIND,
    END_OFFSETS_BY_KIND,
    broker_description,
    fallback_note,
    start_broker,
)

if TYPE_CHECKING:
    from bench.plugins import Registry
    from bench.runtime.kafka.broker import Broker

#: the names tests and scripts reach through this module, the platform they construct
__all__ = ["GENERATOR_STALL_S", "Child", "EmbeddedPlatform", "JobError", "PlatformError", "_Run", "spark_payload"]

log = logging.getLogger(__name__)


class EmbeddedPlatform(LocalPlatform):
    name = "embedded"

    def __init__(self, options: Mapping[str, Any], registry: Registry | None = None) -> None:
        super().__init__(options, registry)
        self.broker: Broker | None = None
        #: how often a dead embedded broker was replaced
        self.broker_restarts = 0

    async def _open_kafka(self) -> None:
        if self.bootstrap_servers is None:
            kind = str(self.options.get("broker") or DEFAULT_KIND)
            note = fallback_note(kind)
            if note:
                log.warning(note)
            await self._start_broker(kind)

    async def _start_broker(self, kind: str) -> None:
        with procs.tempdir_in(procs.owned_tempdir()):  # its data dir too goes where a sweep finds it
            self.broker = await start_broker(kind, nodes=int(self.options.get("brokers") or 1))
        self.bootstrap_servers = self.broker.bootstrap_servers
        log.info("embedded broker %s at %s", self.broker.kind, self.bootstrap_servers)

    def _broker_failure(self) -> str | None:
        """Why the embedded broker is not fully up (a node died), or None."""
        broker = self.broker
        if broker is None or broker.alive():
            return None
        nodes = getattr(broker, "nodes", None)
        if nodes and len(nodes) > 1:
            dead = [str(n.node_id) for n in nodes if not n.alive()]
            return f"embedded broker node {', '.join(dead)} of {len(nodes)} died"
        return f"embedded broker ({broker.kind}) died"

    async def _ensure_broker(self) -> None:
        """Replace an embedded broker that died, so that the next repetition can run.

        A fresh broker (new ports, empty log) rather than a restarted node: each
        repetition creates its own topics anyway, and a fresh start cannot inherit a
        half-written log.
        """
        why = self._broker_failure()
        if why is None or self.broker is None:
            return
        kind = self.broker.kind
        log.warning("%s; starting a new one", why)
        with contextlib.suppress(Exception):
            await self.broker.stop()
        self.broker = None
        await self._start_broker(kind)
        self.broker_restarts += 1

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            if self.broker is not None:
                await self.broker.stop()
                self.broker = None
                self.bootstrap_servers = self.options.get("bootstrap_servers") or None

    def _end_offsets_method(self) -> str:
        return END_OFFSETS_BY_KIND.get(self.broker.kind, "listoffsets") if self.broker else "listoffsets"

    def _describe_broker(self) -> dict[str, Any]:
        if self.broker is None:
            return super()._describe_broker()
        return {"embedded": True, **broker_description(self.broker)}
