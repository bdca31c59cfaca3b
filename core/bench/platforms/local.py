"""What the ``embedded`` and ``external`` platforms share: the SUT and the load
generators as child processes of this machine (:mod:`bench.platforms.children`), local
or standalone Spark, lag and informational SLIs sampled from Kafka. The two differ only
in where Kafka comes from: :mod:`bench.platforms.embedded` starts a broker,
:mod:`bench.platforms.external` is given one.

Every SUT and generator instance is a separate process (``python -m ...``) speaking
JSON lines on stdout, so that they use real cores in parallel, cannot block the
engine's event loop, and can be killed as whole process groups. Nothing outlives a
run: children are killed on stop, ``close()``, errors, Ctrl-C (the engine's
``finally`` blocks), at exit (``procs``' atexit hook) and even when this process is
SIGKILLed (``PR_SET_PDEATHSIG``).

Options (a mapping; unknown keys are ignored, the platform types declare what the
command line may set): ``bootstrap_servers``, ``spark_master`` (None: decided by
``spark_mode``), ``spark_mode`` (local|standalone), ``trigger_seconds``,
``sample_interval``, ``metrics_port``, ``max_records_per_trigger``, ``connector``
(native|python; default native when Spark's connector is installed), ``spark_conf``,
``spark_warmup`` (default true; false skips the query's warm-up), ``sut_start_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench import metrics
from bench.api import ExperimentSpec, GeneratorReport, GeneratorSpec, GeneratorType, Sample, sensor_keys, split_keys
from bench.patchers.apply import find_kind
from bench.platforms import children, local_sut
from bench.platforms.children import Child, PlatformError, job_failure, report_of
from bench.platforms.local_sut import spark_payload
from bench.runtime.host import procs
from bench.runtime.host.jars import connector_description, default_connector
from bench.runtime.info_sampler import InfoSampler
from bench.runtime.kafka.admin import create_experiment_topics
from bench.runtime.kafka.lag import LagSampler, delete_topics
from bench.runtime.spark import cpu_limit
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

class LocalPlatform:
    """The SUT and generators as children of this process; Kafka is given
    (``bootstrap_servers``) or provided by a subclass in :meth:`open`."""

    name = "local"

    def __init__(self, options: Mapping[str, Any], registry: Registry | None = None) -> None:
        self.options = dict(options)
        self.bootstrap_servers: str | None = options.get("bootstrap_servers") or None
        self.spark_mode = str(options.get("spark_mode") or "local")
        local_sut.check_options(self.options)
        self._runs: dict[str, _Run] = {}
        #: for the environment record: whether the SUT's CPU limit applied, the use case's Spark settings
        self.cpu_limit_record: dict[str, Any] = {}
        self.use_case_conf: dict[str, str] = {}
        # The runner hands over the registry it built; loading the plugins again here
        # would see a different set when a plugin was added with ``extra``.
        self._registry: Registry | None = registry

    # ---------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        procs.install_sigterm_handler()
        for stale in procs.sweep_stale_tempdirs():
            log.info("removed %s, left by a run that was killed", stale)
        cpu_limit.sweep_stale()
        await self._open_kafka()
        port = self.options.get("metrics_port")
        global _exporter_started
        if port and not _exporter_started:
            metrics.start_exporter(int(port))
            _exporter_started = True

    async def _open_kafka(self) -> None:
        """Make :attr:`bootstrap_servers` reachable; given ones need nothing."""

    def _broker_failure(self) -> str | None:
        """Why a broker this platform runs is not fully up, or None (none of its own)."""
        return None

    async def _ensure_broker(self) -> None:
        """Replace a broker this platform runs that died (none of its own here)."""

    def _end_offsets_method(self) -> str:
        """How the lag sampler reads end offsets from this Kafka."""
        return "listoffsets"

    def _describe_broker(self) -> dict[str, Any]:
        return {"implementation": "external", "embedded": False, "bootstrapServers": self.bootstrap_servers}

    async def close(self) -> None:
        for exp_id in list(self._runs):
            await self._teardown(exp_id)

    def describe(self) -> dict[str, Any]:
        """What runs, for ``exp<id>-environment.json`` (call after :meth:`open`)."""
        return {
            "platform": self.name,
            "broker": self._describe_broker(),
            "connector": connector_description(self.connector),
            "spark": {"mode": self.spark_mode, "master": self.options.get("spark_master") or None,
                      "conf": {**self.use_case_conf, **dict(self.options.get("spark_conf") or {})},
                      "warmup": local_sut.spark_warmup(self.options)},  # false: early lag is distorted
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
        return await children.spawn(run.dir, name, module, payload)

    async def _wait_started(self, started: Sequence[Child], timeout: float, what: str) -> None:
        await children.wait_started(started, timeout, what)

    async def _stop_children(self, running: list[Child], grace: float) -> None:
        await children.stop(running, grace)

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
                local_sut.join_limit(run.cpu_limit, run.sut)
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
        self.use_case_conf = dict(spec.use_case.spark_conf)
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
        local_sut.join_limit(run.cpu_limit, run.sut)

    def _limit_cpu(self, run: _Run, spec: ExperimentSpec, sut_spec: Mapping[str, Any], replicas: int) -> None:
        if run.cpu_limit is None:
            run.cpu_limit, self.cpu_limit_record = local_sut.limit_cpu(
                self.options, self.spark_mode, spec, sut_spec, replicas, self.cpu_limit_record
            )

    async def stop_sut(self, spec: ExperimentSpec) -> None:
        run = self._runs.get(spec.experiment_id)
        if run is None:
            return
        local_sut.lift_limit(run.cpu_limit)
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
        self._check_load_path(run)  # one that died before the end left no true report
        for child in run.generators:
            procs.kill_group(child.proc.pid, 15)  # SIGTERM: stop and report
        reports: list[GeneratorReport] = []
        with contextlib.suppress(TimeoutError):
            await children.gather_within([c.finished.wait() for c in run.generators], GENERATOR_STOP_TIMEOUT_S)
        for child in run.generators:
            reports.append(report_of(child))
            if child.error:
                log.warning("generator %s: %s", child.name, child.error)
        await self._stop_children(run.generators, grace=1.0)
        return reports

    # ---------------------------------------------------------------- sampling

    def _check_load_path(self, run: _Run) -> None:
        """The broker first: a dead node explains a generator that failed because of it."""
        if (why := self._broker_failure()) is not None:
            raise PlatformError(f"{why} during the experiment")
        for child in run.generators:
            if child.finished.is_set():
                raise PlatformError(
                    f"generator {child.name} exited during the experiment "
                    f"({child.error or f'exit code {child.proc.returncode}'})"
                    f"\n--- stderr tail ---\n{child.stderr_tail()}"
                )
            silent = time.monotonic() - child.last_event_at
            if silent > GENERATOR_STALL_S:
                raise PlatformError(f"generator {child.name} stalled: no progress for {silent:.0f} s (a generator "
                                    "reports through bench.api.generator_control() at least every second)")

    async def sample(self, spec: ExperimentSpec) -> Sample:
        """One sample of every SLI, after checking that everything of the experiment still runs.

        A died SUT or generator, a stalled generator (no progress line for
        :data:`GENERATOR_STALL_S`), a died broker node and a failed or hung lag query
        raise :class:`PlatformError`, so each is noticed at the next sample.
        """
        run = self._run(spec)
        for child in run.sut:
            if child.finished.is_set():
                if (job := job_failure(child)) is not None:
                    raise job
                raise PlatformError(
                    f"SUT {child.name} exited during the experiment ({child.error or child.proc.returncode})"
                    f"\n--- stderr tail ---\n{child.stderr_tail()}"
                )
        self._check_load_path(run)
        if bare := children.bare_sample(run.generators, run.sut if run.spark else [], spec.experiment_id):
            return bare  # bench's instrumentation is off (observer_effect.py): Spark's own progress only
        interval = float(self.options.get("sample_interval") or 5.0)
        timeout = max(SAMPLE_TIMEOUT_S, 2 * interval)
        try:
            if run.sampler is None:
                consumed = [t.name for t in spec.topics if t.logical not in OUTPUT_TOPICS]
                input_names = {t.name for t in spec.topics if t.logical == "input"}
                run.sampler = LagSampler(self.servers, spec.group_id, consumed, always=input_names or None,
                                         end_offsets=self._end_offsets_method())
                await asyncio.wait_for(run.sampler.start(), timeout)
            lag = await asyncio.wait_for(run.sampler.sample(), timeout)
        except PlatformError:
            raise
        except Exception as exc:  # noqa: BLE001 - any client error or a timeout: the sample is lost
            raise await children.lag_failure(exc, timeout, self._broker_failure) from exc
        now = time.time()
        values: dict[str, float] = {"lag": lag}
        if run.info is None:
            outputs = [t.name for t in spec.topics if t.logical in OUTPUT_TOPICS]
            run.info = InfoSampler(self.servers, outputs, lambda: [c.proc.pid for c in run.sut])
        values.update(await run.info.sample(sum(run.sampler.last_committed.values())))
        exp = spec.experiment_id
        metrics.CONSUMER_LAG.labels(exp, spec.group_id).set(lag)
        values.update(children.generator_slis(run.generators, exp))
        if run.spark and run.sut:
            values.update(children.driver_slis(run.sut[0], exp))
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
            metrics.forget_experiment(exp_id)
            shutil.rmtree(run.dir, ignore_errors=True)
            if run.cpu_limit is not None:
                await asyncio.to_thread(run.cpu_limit.remove)
