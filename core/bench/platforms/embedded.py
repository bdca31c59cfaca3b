"""The ``embedded`` and ``external`` platforms: everything as local child processes.

``embedded`` starts a broker (``bench.runtime.kafka.broker``: Apache Kafka when installed,
one KRaft node or ``brokers`` nodes) unless ``bootstrap_servers`` is given, and runs
the SUT with local Spark; ``external`` is the same class pointed at an existing Kafka (and optionally Spark) cluster.

Every SUT and generator instance is a separate process (``python -m ...``) speaking
JSON lines on stdout, so that they use real cores in parallel, cannot block the
engine's event loop, and can be killed as whole process groups. Nothing outlives a
run: children are killed on stop, ``close()``, errors, Ctrl-C (the engine's
``finally`` blocks), at exit (``procs``' atexit hook) and even when this process is
SIGKILLed (``PR_SET_PDEATHSIG``).

Options (a mapping; unknown keys are ignored so the CLI can pass more):
``bootstrap_servers`` (None: start the embedded broker), ``broker`` (kafka|noida|tansu;
default kafka when installed), ``brokers`` (nodes of the embedded Kafka cluster, 1 or 3),
``spark_master`` (None: decided by ``spark_mode``), ``spark_mode`` (local|standalone),
``trigger_seconds``, ``sample_interval``, ``metrics_port``, ``max_records_per_trigger``,
``connector`` (native|python; default native when Spark's connector is installed),
``sut_start_timeout``.

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

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import metrics
from bench.api import GeneratorReport, GeneratorSpec, GeneratorType, sensor_keys, split_keys
from bench.errors import UserError
from bench.model import ConfigError
from bench.patching import find_kind
from bench.platforms.base import ExperimentSpec, Sample
from bench.runtime.host import procs
from bench.runtime.host.jars import connector_description, default_connector
from bench.runtime.info_sampler import InfoSampler
from bench.runtime.kafka.admin import create_experiment_topics
from bench.runtime.kafka.broker import (
    DEFAULT_KIND,
    END_OFFSETS_BY_KIND,
    broker_description,
    fallback_note,
    start_broker,
)
from bench.runtime.spark import cpu_limit

if TYPE_CHECKING:
    from bench.runtime.kafka.broker import Broker
from bench.runtime.kafka.lag import LagSampler, delete_topics
from bench.runtime.spark.cluster import InstanceShape, SparkCluster

if TYPE_CHECKING:
    from bench.plugins import Registry

log = logging.getLogger(__name__)

SUT_START_TIMEOUT_S = 240.0  # first Spark micro-batch alone takes 14-21 s here
GENERATOR_STOP_TIMEOUT_S = 20.0
#: A generator reports progress every second (generator.PROGRESS_EVERY); this long without
#: a line means it stalls (SIGSTOP, a hung producer). Five periods: a loaded 2-core machine
#: delays a line by a second or two, and a false alarm costs a repetition.
GENERATOR_STALL_S = 5.0
#: a lag sample that takes longer than this (and at least two sample intervals) is a fault
SAMPLE_TIMEOUT_S = 15.0
#: logical topics the SUT writes; everything else is input it consumes (lag counts it)
OUTPUT_TOPICS = frozenset({"output"})
_exporter_started = False


class PlatformError(UserError, RuntimeError):
    pass


class JobError(PlatformError, ConfigError):
    """The user's own script (``bench run --job``) failed before it read any input: it
    raised, started no query, or never read. The same in every experiment, so it ends
    the run (a ConfigError to the engine) in one line instead of being retried."""


def _job_failure(child: Child) -> JobError | None:
    """The driver marks an error of the user's script with ``"job": true``."""
    event = child.last.get("error") or {}
    return JobError(f"--job: {event.get('message')}") if event.get("job") else None


@dataclass
class Child:
    """One child process that reports through JSON lines on stdout."""

    name: str
    proc: asyncio.subprocess.Process
    stderr_path: str
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    last: dict[str, dict[str, Any]] = field(default_factory=dict)  # event name -> last event
    error: str | None = None
    reader: asyncio.Task[None] | None = None
    target_rate: float = 0.0  # generators: records/s this instance was asked for
    last_event_at: float = field(default_factory=time.monotonic)  # when its last JSON line came

    def stderr_tail(self, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(Path(self.stderr_path).read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    break
                if not line.startswith(b'{"event"'):
                    continue  # anything else on stdout (a SUT logging records) is not for us
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                kind = str(event.get("event"))
                self.last[kind] = event
                self.last_event_at = time.monotonic()
                if kind == "started":
                    self.started.set()
                elif kind == "error":
                    self.error = str(event.get("message"))
        finally:
            self.finished.set()
            self.started.set()  # wake waiters; they check for errors


@dataclass
class _Run:
    """What is running for the current experiment."""

    dir: str
    sut: list[Child] = field(default_factory=list)
    generators: list[Child] = field(default_factory=list)
    cluster: SparkCluster | None = None
    sampler: LagSampler | None = None
    spark: bool = False
    info: InfoSampler | None = None  # latency, processed rate, CPU and memory (informational)
    cpu_limit: cpu_limit.CpuLimit | None = None  # the SUT's cgroup (cpuPerInstance)


class EmbeddedPlatform:
    name = "embedded"

    def __init__(self, options: Mapping[str, Any], registry: Registry | None = None) -> None:
        self.options = dict(options)
        self.name = str(options.get("platform") or ("external" if options.get("bootstrap_servers") else "embedded"))
        self.bootstrap_servers: str | None = options.get("bootstrap_servers") or None
        self.broker: Broker | None = None
        self.spark_mode = str(options.get("spark_mode") or "local")
        if self.spark_mode not in ("local", "standalone"):
            raise ValueError(f"spark_mode must be 'local' or 'standalone', got {self.spark_mode!r}")
        self._runs: dict[str, _Run] = {}
        #: whether the SUT's cpuPerInstance limit applied (for the environment record)
        self.cpu_limit_record: dict[str, Any] = {}
        #: how often a dead embedded broker was replaced
        self.broker_restarts = 0
        # The runner hands over the registry it built; loading the plugins again here
        # would see a different set when a plugin was added with ``extra``.
        self._registry: Registry | None = registry

    # ---------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        procs.install_sigterm_handler()
        for stale in procs.sweep_stale_tempdirs():
            log.info("removed %s, left by a run that was killed", stale)
        cpu_limit.sweep_stale()
        if self.bootstrap_servers is None:
            kind = str(self.options.get("broker") or DEFAULT_KIND)
            note = fallback_note(kind)
            if note:
                log.warning(note)
            await self._start_broker(kind)
        port = self.options.get("metrics_port")
        global _exporter_started
        if port and not _exporter_started:
            metrics.start_exporter(int(port))
            _exporter_started = True

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
            for exp_id in list(self._runs):
                await self._teardown(exp_id)
        finally:
            if self.broker is not None:
                await self.broker.stop()
                self.broker = None
                self.bootstrap_servers = self.options.get("bootstrap_servers") or None

    def describe(self) -> dict[str, Any]:
        """What runs, for ``exp<id>-environment.json`` (call after :meth:`open`)."""
        broker: dict[str, Any]
        if self.broker is None:
            broker = {"implementation": "external", "embedded": False, "bootstrapServers": self.bootstrap_servers}
        else:
            broker = {"embedded": True, **broker_description(self.broker)}
        return {
            "platform": self.name,
            "broker": broker,
            "connector": connector_description(self.connector),
            "spark": {"mode": self.spark_mode, "master": self.options.get("spark_master") or None,
                      "conf": dict(self.options.get("spark_conf") or {})},
            "cpuLimit": dict(self.cpu_limit_record) or None,
        }

    @property
    def connector(self) -> str:
        """Spark's Kafka I/O: ``native`` whenever its JARs are installed, unless the user chose."""
        return str(self.options.get("connector") or default_connector())

    @property
    def servers(self) -> str:
        if self.bootstrap_servers is None:
            raise PlatformError("platform not opened: call open() first")
        return self.bootstrap_servers

    def _run(self, spec: ExperimentSpec) -> _Run:
        run = self._runs.get(spec.experiment_id)
        if run is None:
            folder = tempfile.mkdtemp(prefix=f"bench-{spec.experiment_id}-", dir=procs.owned_tempdir())
            run = self._runs[spec.experiment_id] = _Run(folder)
        return run

    def _registry_(self) -> Registry:
        if self._registry is None:  # constructed directly (tests, scripts): no runner
            from bench.plugins import load_plugins

            self._registry = load_plugins()
        return self._registry

    # ---------------------------------------------------------------- topics

    async def reset_topics(self, spec: ExperimentSpec) -> None:
        await self._ensure_broker()  # the first step of every repetition, a retried one too
        names = [t.name for t in spec.topics]
        await delete_topics(self.servers, names)
        await create_experiment_topics(self.servers, spec.topics)

    async def delete_topics(self, spec: ExperimentSpec) -> None:
        await self._teardown(spec.experiment_id)
        if self._broker_failure() is not None:
            return  # the broker that had them is replaced before the next repetition
        with contextlib.suppress(Exception):
            await delete_topics(self.servers, [t.name for t in spec.topics])

    # ---------------------------------------------------------------- children

    async def _start_child(self, run: _Run, name: str, module: str, payload: Mapping[str, Any]) -> Child:
        spec_path = os.path.join(run.dir, f"{name}.json")
        with open(spec_path, "w") as fh:
            json.dump(payload, fh)
        stderr_path = os.path.join(run.dir, f"{name}.stderr")
        with open(stderr_path, "wb") as err:
            proc = await procs.spawn(
                [sys.executable, "-m", module, spec_path],
                what=name,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                stdin=asyncio.subprocess.DEVNULL,
                env=procs.child_env(),
                limit=1 << 20,
            )
        child = Child(name, proc, stderr_path)
        child.reader = asyncio.ensure_future(child.read())
        return child

    async def _wait_started(self, children: Sequence[Child], timeout: float, what: str) -> None:
        async def one(child: Child) -> None:
            await child.started.wait()
            if (job := _job_failure(child)) is not None:
                raise job
            if child.error or child.finished.is_set() and "started" not in child.last:
                raise PlatformError(
                    f"{what} {child.name} failed to start: {child.error or 'exited'} "
                    f"(exit code {child.proc.returncode})\n--- stderr tail ---\n{child.stderr_tail()}"
                )

        try:
            await asyncio.wait_for(asyncio.gather(*(one(c) for c in children)), timeout)
        except TimeoutError:
            late = [c for c in children if not c.started.is_set()]
            tails = "\n".join(f"--- {c.name} stderr tail ---\n{c.stderr_tail()}" for c in late)
            raise PlatformError(
                f"{what} not started after {timeout:.0f} s: {[c.name for c in late]}\n{tails}"
            ) from None

    async def _stop_children(self, children: list[Child], grace: float) -> None:
        await asyncio.gather(*(procs.terminate(c.proc, grace=grace) for c in children), return_exceptions=True)
        for child in children:
            if child.reader is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(child.reader, 2)
        children.clear()

    # ---------------------------------------------------------------- SUT

    async def start_sut(self, spec: ExperimentSpec) -> None:
        run = self._run(spec)
        sut = find_kind(spec.objects, "BenchSut") or {}
        sut_spec = sut.get("spec") or {}
        replicas = max(1, int(sut_spec.get("replicas", spec.resources or 1)))
        params = {**spec.use_case.default_params, **spec.params, **(sut_spec.get("params") or {})}
        timeout = float(self.options.get("sut_start_timeout") or SUT_START_TIMEOUT_S)
        self._limit_cpu(run, spec, sut_spec, replicas)
        try:
            if spec.use_case.topology is not None:
                await self._start_spark(run, spec, replicas, params, timeout)
            elif spec.use_case.sut_process:
                for i in range(replicas):
                    payload = {
                        "use_case": spec.use_case.name,
                        "bootstrap_servers": self.servers,
                        "topics": spec.topic_map(),
                        "group_id": spec.group_id,
                        "params": params,
                        "instance": i,
                        "instances": replicas,
                        "cores": max(1, int(sut_spec.get("coresPerInstance") or 1)),
                    }
                    run.sut.append(await self._start_child(run, f"sut-{i}", spec.use_case.sut_process, payload))
                await self._wait_started(run.sut, timeout, "SUT process")
                self._join_limit(run)
            else:
                raise PlatformError(f"use case {spec.use_case.name!r} has neither a topology nor a sut_process")
        except BaseException:
            await self._teardown(spec.experiment_id)
            raise

    async def _start_spark(
        self, run: _Run, spec: ExperimentSpec, replicas: int, params: Mapping[str, Any], timeout: float
    ) -> None:
        master = self.options.get("spark_master")
        sut = find_kind(spec.objects, "BenchSut") or {}
        shape = InstanceShape.of(sut.get("spec") or {}, replicas)
        if not master and self.spark_mode == "standalone":
            with procs.tempdir_in(procs.owned_tempdir()):
                run.cluster = SparkCluster(replicas, shape.worker_memory, shape.cores)
                await run.cluster.start()
            master = run.cluster.master_url
        payload = {
            **spark_payload(self.options, spec, shape, master),
            "bootstrap_servers": self.servers,
            "params": dict(params),
            "checkpoint_dir": os.path.join(run.dir, "checkpoint"),
            "connector": self.connector,
        }
        run.spark = True
        run.sut.append(await self._start_child(run, "spark-driver", "bench.runtime.spark.driver", payload))
        await self._wait_started(run.sut, timeout, "Spark driver")
        self._join_limit(run)

    def _limit_cpu(self, run: _Run, spec: ExperimentSpec, sut_spec: Mapping[str, Any], replicas: int) -> None:
        """The SUT's cgroup: ``cpuPerInstance`` cores per task slot (instances x cores per instance)."""
        per_instance = float(sut_spec.get("cpuPerInstance") or 0)
        if per_instance <= 0 or run.cpu_limit is not None:
            return
        if spec.use_case.topology is not None and (self.options.get("spark_master") or self.spark_mode != "local"):
            # executors live in other processes (a cluster's workers): a limit on the driver
            # alone would measure the driver
            self.cpu_limit_record = {"applied": False, "cpuPerInstance": per_instance,
                                     "reason": "applies to local[N] Spark and SUT processes only"}
            return
        slots = replicas * max(1, int(sut_spec.get("coresPerInstance") or 1))
        try:
            run.cpu_limit = cpu_limit.create(spec.experiment_id, per_instance * slots)
            self.cpu_limit_record = {"applied": True, "cpuPerInstance": per_instance,
                                     "cgroupVersion": run.cpu_limit.version}
        except cpu_limit.CpuLimitUnavailable as exc:
            if self.cpu_limit_record.get("applied") is not False:
                log.warning("cpuPerInstance %s: %s; the SUT runs without a CPU limit", per_instance, exc)
            self.cpu_limit_record = {"applied": False, "cpuPerInstance": per_instance, "reason": str(exc)}

    def _join_limit(self, run: _Run) -> None:
        """Once the SUT reported "started": its start-up and warm-up (JVM start, code
        generation) run unlimited, as they are not what is measured and took 80 s instead
        of 30 s at a quarter core; the limit holds for the measurement. Each SUT child is
        its own process group, which covers its JVM and Python workers."""
        if run.cpu_limit is not None:
            for child in run.sut:
                run.cpu_limit.add_group(child.proc.pid)

    async def stop_sut(self, spec: ExperimentSpec) -> None:
        run = self._runs.get(spec.experiment_id)
        if run is None:
            return
        await self._stop_children(run.sut, grace=15.0 if run.spark else 5.0)
        if run.cluster is not None:
            await run.cluster.stop()
            run.cluster = None

    # ---------------------------------------------------------------- generators

    async def start_generators(self, spec: ExperimentSpec) -> None:
        run = self._run(spec)
        gen_obj = find_kind(spec.objects, "BenchGenerator") or {}
        gen_spec = gen_obj.get("spec") or {}
        registry = self._registry_()
        name = spec.use_case.generator
        if name not in registry.generators:
            raise PlatformError(f"generator {name!r} of use case {spec.use_case.name!r} is not registered")
        gtype: GeneratorType = registry.generators[name]
        sensors = int(gen_spec.get("sensors", spec.load))
        period_ms = float(gen_spec.get("periodMs", 1000.0))
        replicas = max(1, int(gen_spec.get("replicas", 1)))
        params = {**spec.params, **(gen_spec.get("params") or {})}
        keys = (gtype.keys or sensor_keys)(sensors, params)
        topics = spec.topic_map()
        input_topic = topics.get("input") or spec.topics[0].name
        if gtype.prepare is not None:
            await gtype.prepare(GeneratorSpec(self.servers, input_topic, keys, period_ms, None, params, topics))
        offset = 0
        try:
            for i, part in enumerate(split_keys(keys, replicas)):
                payload = {
                    "generator": name,
                    "bootstrap_servers": self.servers,
                    "topic": input_topic,
                    "keys": part,
                    "period_ms": period_ms,
                    "duration_s": None,
                    "params": {**params, "keyOffset": offset},
                    "topics": topics,
                }
                offset += len(part)
                child = await self._start_child(run, f"generator-{i}", "bench.runtime.load.generator_main", payload)
                child.target_rate = len(part) * 1000.0 / period_ms if period_ms > 0 else 0.0
                run.generators.append(child)
            await self._wait_started(run.generators, 60.0, "generator")
        except BaseException:
            await self._stop_children(run.generators, grace=1.0)
            raise
        target = len(keys) * 1000.0 / period_ms if period_ms > 0 else 0.0
        metrics.GENERATOR_TARGET.labels(spec.experiment_id).set(target)

    async def stop_generators(self, spec: ExperimentSpec) -> Sequence[GeneratorReport]:
        run = self._runs.get(spec.experiment_id)
        if run is None:
            return []
        self._check_generators(run)  # one that died before the end left no true report
        for child in run.generators:
            procs.kill_group(child.proc.pid, 15)  # SIGTERM: stop and report
        reports: list[GeneratorReport] = []
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(c.finished.wait() for c in run.generators)), GENERATOR_STOP_TIMEOUT_S
            )
        for child in run.generators:
            reports.append(_report_of(child))
            if child.error:
                log.warning("generator %s: %s", child.name, child.error)
        await self._stop_children(run.generators, grace=1.0)
        return reports

    # ---------------------------------------------------------------- sampling

    def _check_generators(self, run: _Run) -> None:
        for child in run.generators:
            if child.finished.is_set():
                raise PlatformError(
                    f"generator {child.name} exited during the experiment "
                    f"({child.error or f'exit code {child.proc.returncode}'})"
                    f"\n--- stderr tail ---\n{child.stderr_tail()}"
                )
            silent = time.monotonic() - child.last_event_at
            if silent > GENERATOR_STALL_S:
                raise PlatformError(f"generator {child.name} stalled: no progress for {silent:.0f} s")

    async def sample(self, spec: ExperimentSpec) -> Sample:
        """One sample of every SLI, after checking that everything of the experiment still runs.

        A died SUT or generator, a stalled generator (no progress line for
        :data:`GENERATOR_STALL_S`), a died broker node and a failed or hung lag query
        raise :class:`PlatformError`, so each is noticed at the next sample.
        """
        run = self._run(spec)
        for child in run.sut:
            if child.finished.is_set():
                if (job := _job_failure(child)) is not None:
                    raise job
                raise PlatformError(
                    f"SUT {child.name} exited during the experiment ({child.error or child.proc.returncode})"
                    f"\n--- stderr tail ---\n{child.stderr_tail()}"
                )
        why = self._broker_failure()
        if why is not None:
            raise PlatformError(f"{why} during the experiment")
        self._check_generators(run)
        interval = float(self.options.get("sample_interval") or 5.0)
        timeout = max(SAMPLE_TIMEOUT_S, 2 * interval)
        try:
            if run.sampler is None:
                consumed = [t.name for t in spec.topics if t.logical not in OUTPUT_TOPICS]
                input_names = {t.name for t in spec.topics if t.logical == "input"}
                method = END_OFFSETS_BY_KIND.get(self.broker.kind, "listoffsets") if self.broker else "listoffsets"
                run.sampler = LagSampler(
                    self.servers, spec.group_id, consumed, always=input_names or None, end_offsets=method
                )
                await asyncio.wait_for(run.sampler.start(), timeout)
            lag = await asyncio.wait_for(run.sampler.sample(), timeout)
        except TimeoutError:
            raise PlatformError(f"lag sampling got no answer from Kafka within {timeout:.0f} s") from None
        except PlatformError:
            raise
        except Exception as exc:  # noqa: BLE001 - any client error: the sample is lost
            raise PlatformError(f"lag sampling failed: {type(exc).__name__}: {exc}") from exc
        now = time.time()
        values: dict[str, float] = {"lag": lag}
        if run.info is None:
            outputs = [t.name for t in spec.topics if t.logical in OUTPUT_TOPICS]
            run.info = InfoSampler(self.servers, outputs, lambda: [c.proc.pid for c in run.sut])
        values.update(await run.info.sample(sum(run.sampler.last_committed.values())))
        exp = spec.experiment_id
        metrics.CONSUMER_LAG.labels(exp, spec.group_id).set(lag)
        gen = [c.last.get("progress") for c in run.generators]
        done = [c.last.get("report") for c in run.generators]
        records = sum(int((r or p or {}).get("records", 0)) for p, r in zip(gen, done, strict=True))
        rate = sum(float((p or {}).get("rate", 0.0)) for p in gen)
        values["generated-records"] = float(records)
        values["generator-rate"] = rate
        metrics.GENERATOR_RATE.labels(exp).set(rate)
        if run.spark and run.sut:
            progress = run.sut[0].last.get("progress")
            if progress is None:
                # No micro-batch finished yet, so nothing was dropped: sampling 0 from the start keeps
                # this cumulative series as long as the lag series (its warm-up counts from the first
                # sample; a first batch of minutes on a busy machine otherwise left no usable sample).
                values["dropped-records"] = 0.0
            else:
                values["dropped-records"] = float(progress.get("droppedByWatermark") or 0)
                values["malformed-records"] = float(progress.get("malformed") or 0)
                values["input-rate"] = float(progress.get("inputRowsPerSecond") or 0.0)
                values["batch-duration"] = float(progress.get("batchDurationMs") or 0.0) / 1000.0
                values["spark-processed-rate"] = float(progress.get("processedRowsPerSecond") or 0.0)
                metrics.SPARK_DROPPED.labels(exp).set(values["dropped-records"])
                metrics.MALFORMED.labels(exp).set(values["malformed-records"])
                metrics.SPARK_INPUT_RATE.labels(exp).set(values["input-rate"])
                metrics.SPARK_PROCESSED_RATE.labels(exp).set(float(progress.get("processedRowsPerSecond") or 0.0))
                metrics.SPARK_BATCH_DURATION.labels(exp).set(values["batch-duration"])
        return Sample(now, values)

    # ---------------------------------------------------------------- teardown

    async def _teardown(self, exp_id: str) -> None:
        run = self._runs.pop(exp_id, None)
        if run is None:
            return
        try:
            await self._stop_children(run.generators, grace=1.0)
            await self._stop_children(run.sut, grace=10.0 if run.spark else 3.0)
            if run.cluster is not None:
                await run.cluster.stop()
            if run.sampler is not None:
                await run.sampler.close()
            if run.info is not None:
                await run.info.close()
        finally:
            shutil.rmtree(run.dir, ignore_errors=True)
            if run.cpu_limit is not None:
                await asyncio.to_thread(run.cpu_limit.remove)


def spark_payload(
    options: Mapping[str, Any], spec: ExperimentSpec, shape: InstanceShape, master: str | None
) -> dict[str, Any]:
    """The Spark driver's spec for one experiment's resources (without broker and paths).

    ``instances`` is the task slots (instances x cores per instance, see
    :class:`InstanceShape`); ``executors``, ``cores_per_instance`` and
    ``memory_per_instance_mb`` record the shape itself. The shape's Spark settings
    override the same keys of ``--conf``: the resource value is what the experiment
    measures, so a stray ``spark.executor.cores`` must not silently replace it.
    """
    return {
        "use_case": spec.use_case.name,
        "topics": spec.topic_map(),
        "group_id": spec.group_id,
        "instances": shape.slots,
        "executors": shape.instances,
        "cores_per_instance": shape.cores,
        "memory_per_instance_mb": shape.memory_mb,
        "spark_master": master or None,
        "trigger_seconds": options.get("trigger_seconds"),
        "max_records_per_trigger": options.get("max_records_per_trigger"),
        "conf": {**dict(options.get("spark_conf") or {}), **shape.conf(master)},
    }


def _report_of(child: Child) -> GeneratorReport:
    """The generator's own report; if it died without one, what its progress showed."""
    report = child.last.get("report")
    if report is not None:
        return GeneratorReport(
            target_rate=float(report["target_rate"]),
            achieved_rate=float(report["achieved_rate"]),
            records=int(report["records"]),
            seconds=float(report["seconds"]),
        )
    progress = child.last.get("progress") or {}
    return GeneratorReport(
        target_rate=child.target_rate,
        achieved_rate=float(progress.get("rate", 0.0)),
        records=int(progress.get("records", 0)),
        seconds=float(progress.get("seconds", 0.0)),
    )
