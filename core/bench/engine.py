"""The run loop: search strategy -> experiments -> repetitions -> SLO verdicts -> results.

The engine knows nothing about Spark, Kafka or Kubernetes: it drives a platform through
``bench.api.Platform`` and asks registered SLO types for verdicts. Every finished
repetition is written before the next starts, so a crash, kill or Ctrl-C keeps all that
was measured, and ``resume`` answers finished experiments and repetitions from disk.

Faults: a repetition whose platform raises (a SUT, generator or broker that died, a
generator that stalled, a failed Kafka call) or whose generators fell more than 1 %
behind their target is not measured: it is run again, up to ``retries`` times. If it
still fails, the experiment's outcome is ``error`` with the cause; the search treats it
as not passed and the run goes on, because one crashed JVM should not cost the hours
of experiments around it. Configuration errors (``ConfigError``, ``OptionError``: the
same in every experiment) and bugs (:data:`BUGS`) still end the run; a platform's own
error is a fault even where it is a ``UserError`` for the CLI (a broker the user runs).
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from bench import tables
from bench.analysis import confidence
from bench.api import (
    ExperimentSpec,
    Manifest,
    Platform,
    SearchProblem,
    Series,
    SloContext,
    SloVerdict,
    TopicSpec,
    UseCase,
)
from bench.environment import EnvironmentRecord
from bench.errors import OptionError
from bench.info import summarise, write_info
from bench.model import Benchmark, ConfigError, Execution, SloDef, effective_slos, load_intensity_order
from bench.patching import apply_all, find_kind, load_rate, select_indices
from bench.plugins import Registry
from bench.results import ExperimentRecord, Repetition, ResultStore, fmt_value

log = structlog.get_logger("bench.engine")

#: A generator that falls further behind its target than this makes a repetition a fault.
MAX_GENERATOR_SHORTFALL = 0.01

#: Exceptions that are bugs in bench or a plugin, not faults of an experiment: they keep
#: their traceback and end the run rather than being retried.
BUGS: tuple[type[BaseException], ...] = (NotImplementedError, TypeError, AttributeError, NameError, ImportError)

OUTCOMES = ("passed", "failed", "error")
_NOT_FAULTS: tuple[type[BaseException], ...] = (ConfigError, OptionError, *BUGS)


@dataclass
class RunConfig:
    use_case: UseCase
    benchmark: Benchmark
    execution: Execution
    results_dir: Path
    params: dict[str, Any] = field(default_factory=dict)
    exp_id: int | None = None
    resume: bool = False
    #: how often a faulted repetition is run again before its experiment is an ``error``
    retries: int = 1


@dataclass
class RunOutcome:
    exp_id: int
    metric: str
    table: dict[float, float | None]
    records: list[ExperimentRecord]
    results_dir: Path

    @property
    def errors(self) -> list[ExperimentRecord]:
        """Experiments that got no verdict (outcome ``error``)."""
        return [r for r in self.records if r.outcome == "error"]


#: progress(message, transient): transient messages (per-sample ticks) may be overwritten.
ProgressFn = Callable[[str, bool], None]


def _noop(message: str, transient: bool = False) -> None:
    return None


def build_objects(
    registry: Registry, bench: Benchmark, execution: Execution, params: dict[str, Any], load: float, resources: float
) -> list[Manifest]:
    """The deployment of one experiment: base objects, --set values, overrides, patchers."""
    objects: list[Manifest] = copy.deepcopy(bench.sut.resources + bench.loadGenerator.resources)
    for key, value in params.items():
        obj_name, _, path = key.partition(".")
        if path and select_indices(objects, obj_name):
            for i in select_indices(objects, obj_name):
                _set_path(objects[i].setdefault("spec", {}), path.split("."), value)
        else:
            for obj in objects:
                if obj.get("kind") in ("BenchSut", "BenchGenerator"):
                    obj.setdefault("spec", {}).setdefault("params", {})[key] = value
    patches: list[tuple[str, str, dict[str, Any], Any]] = [
        (o.patcher.type, o.patcher.resource, o.patcher.properties, o.value) for o in execution.configOverrides
    ]
    load_type = next(t for t in bench.loadTypes if t.typeName == execution.load.loadType)
    resource_type = next(t for t in bench.resourceTypes if t.typeName == execution.resources.resourceType)
    patches += [(p.type, p.resource, p.properties, _num(load)) for p in load_type.patchers]
    patches += [(p.type, p.resource, p.properties, _num(resources)) for p in resource_type.patchers]
    return apply_all(registry, objects, patches)


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _set_path(target: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


def merged_params(use_case: UseCase, bench: Benchmark, execution: Execution, objects: list[Manifest],
                  params: dict[str, Any]) -> dict[str, Any]:
    """Defaults < benchmark < execution < --set < what patchers wrote into the objects."""
    merged: dict[str, Any] = {**use_case.default_params, **bench.params, **execution.params}
    merged.update({k: v for k, v in params.items() if "." not in k})
    for kind in ("BenchGenerator", "BenchSut"):
        obj = find_kind(objects, kind)
        if obj is not None:
            merged.update((obj.get("spec") or {}).get("params") or {})
    return merged


class Engine:
    def __init__(
        self,
        registry: Registry,
        config: RunConfig,
        platform: Platform,
        progress: ProgressFn = _noop,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        # clock/sleep are injectable so that tests can run simulated time.
        self.clock = clock
        self.sleep = sleep
        self.registry = registry
        self.cfg = config
        self.platform = platform
        self.progress = progress
        self.slos: list[SloDef] = effective_slos(config.benchmark, config.execution)
        exp_id = config.exp_id
        if exp_id is None:
            ids = ResultStore.existing_ids(config.results_dir)
            if config.resume and ids:
                exp_id = ids[-1]
            else:
                exp_id = ResultStore.reserve_id(config.results_dir, self._run_meta())
        self.store = ResultStore(config.results_dir, exp_id)
        self.cache: dict[tuple[float, float], bool] = {}
        self._run_counter = 0
        self._run_token = uuid.uuid4().hex[:6]
        self.started = time.monotonic()
        self.experiments_done = 0
        self.environment: EnvironmentRecord | None = None

    # ------------------------------------------------------------------ public

    def _run_meta(self) -> dict[str, Any]:
        """What ``exp<id>-run.json`` keeps beside the configuration files (compared on resume)."""
        return {"useCase": self.cfg.use_case.name, "params": self.cfg.params, "pid": os.getpid(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    async def run(self) -> RunOutcome:
        ex = self.cfg.execution
        execution_doc, benchmark_doc = ex.model_dump(mode="json"), self.cfg.benchmark.model_dump(mode="json")
        resuming = self.cfg.resume and self.store.path(f"exp{self.store.id}-execution-configuration.json").exists()
        if resuming:
            self.store.check_configuration(execution_doc, benchmark_doc, self._run_meta())
            for rec in self.store.load_previous():
                if rec.outcome != "error":  # errors get another chance, from their first unfinished repetition
                    self.cache[(rec.load, rec.resources)] = rec.passed
            self.progress(
                f"resuming exp{self.store.id}: {len(self.cache)} experiment(s) already measured", False
            )
        else:
            self.store.write_configuration(execution_doc, benchmark_doc)
        strategy_name, lower_bound = ex.execution.strategy.resolved()
        strategy = self.registry.search_strategies[strategy_name]
        problem = SearchProblem(
            loads=load_intensity_order(self.cfg.benchmark, ex),
            resources=ex.resources.resourceValues,
            run=self.run_experiment,
            metric=ex.execution.metric,
            lower_bound=lower_bound,
        )
        await self.platform.open()
        try:
            self.environment = EnvironmentRecord.of_platform(
                self.store.path(f"exp{self.store.id}-environment.json"), self.platform
            )
            if resuming:
                self._keep_environment_history(self.environment)
            self.environment.write()
            table = await strategy.search(problem)
        finally:
            await self.platform.close()
        tables.write_run_table(self.store, ex.execution.metric, table, final=True)
        if self.registry.pm is not None:
            self.registry.pm.hook.bench_run_finished(
                results_dir=str(self.cfg.results_dir), metric=ex.execution.metric, table=table
            )
        return RunOutcome(self.store.id, ex.execution.metric, table, self.store.experiments, self.cfg.results_dir)

    async def run_experiment(self, load: float, resources: float) -> bool:
        """One SLO experiment: every repetition, then every SLO over all repetitions."""
        key = (float(load), float(resources))
        if key in self.cache:
            return self.cache[key]
        ex = self.cfg.execution.execution
        objects = build_objects(
            self.registry, self.cfg.benchmark, self.cfg.execution, self.cfg.params, load, resources
        )
        params = merged_params(self.cfg.use_case, self.cfg.benchmark, self.cfg.execution, objects, self.cfg.params)
        rate = load_rate(objects, load)
        record = ExperimentRecord(load=load, resources=resources, passed=False, started=time.time())
        if self.environment is not None:
            self.environment.experiment_started(load, resources)
        slis = {slo.name: self._sli(slo) for slo in self.slos}
        stored = self.store.load_repetitions(load, resources, slis) if self.cfg.resume else []
        collected: dict[str, list[Series]] = {}
        for rep in range(ex.repetitions):
            if rep < len(stored):
                done: Repetition | None = stored[rep]
                self.progress(f"load={fmt_value(load)} resources={fmt_value(resources)} rep {rep + 1}/"
                              f"{ex.repetitions}: measured before, read back", False)
            else:
                done = await self._measure(objects, params, load, resources, rep, record, slis)
            if done is None:
                break
            record.early_stopped = record.early_stopped or done.early_stopped
            for name, s in done.series.items():
                collected.setdefault(name, []).append(s)
            record.generators.extend(done.generators)
            remaining = ex.repetitions - rep - 1
            if ex.earlyStop and remaining and (settled := self._settled(collected, load, resources, rate,
                                                                         remaining)) is not None:
                self.progress(
                    f"load={fmt_value(load)} resources={fmt_value(resources)}: {'pass' if settled else 'fail'} "
                    f"settled after {rep + 1} of {ex.repetitions} repetitions; skipping the rest",
                    False,
                )
                record.early_stopped = True
                break
        verdicts: dict[str, SloVerdict] = {}
        if record.cause is None:
            verdicts = self._verdicts(collected, load, resources, rate)
            record.passed = all(v.passed for v in verdicts.values())
            record.outcome = "passed" if record.passed else "failed"
            record.slos = {name: {"passed": v.passed, **v.details} for name, v in verdicts.items()}
        else:
            record.passed, record.outcome, record.valid = False, "error", False
        record.finished = time.time()
        record.info = summarise(collected, float(ex.warmup))
        confidence.annotate(record, self.store)
        self.store.add_experiment(record)
        if self.environment is not None:
            self.environment.experiment_finished(load, resources)
        self.cache[key] = record.passed
        self.experiments_done += 1
        self._write_partial_table()
        if self.registry.pm is not None:
            self.registry.pm.hook.bench_experiment_finished(
                experiment_id=self._experiment_name(load, resources), load=load, resources=resources,
                passed=record.passed, details=record.slos,
            )
        verdict = "ERROR: " + str(record.cause) if record.cause else ("PASS" if record.passed else "FAIL")
        self.progress(
            f"load={fmt_value(load)} resources={fmt_value(resources)}: {verdict} "
            + " ".join(f"[{n}: {_summary(v)}]" for n, v in verdicts.items()),
            False,
        )
        return record.passed

    async def _measure(
        self, objects: list[Manifest], params: dict[str, Any], load: float, resources: float, rep: int,
        record: ExperimentRecord, slis: dict[str, str],
    ) -> Repetition | None:
        """One repetition, run again after a fault up to ``retries`` times; None when it never succeeded.

        A finished repetition is written at once (SLI series, then generator reports), so
        a later crash or kill loses nothing of it.
        """
        ex = self.cfg.execution.execution
        label = f"load={fmt_value(load)} resources={fmt_value(resources)} rep {rep + 1}/{ex.repetitions}"
        attempts = max(0, self.cfg.retries) + 1
        cause = ""
        for attempt in range(1, attempts + 1):
            spec = self._spec(objects, params, load, resources)
            if self.registry.pm is not None:
                self.registry.pm.hook.bench_experiment_started(
                    experiment_id=self._experiment_name(load, resources), load=load, resources=resources,
                    repetition=rep,
                )
            try:
                series, reports, early = await self._repetition(spec, rep, load, resources)
            except _NOT_FAULTS:
                raise
            except Exception as exc:  # noqa: BLE001 - any platform failure is a fault of this repetition
                log.warning("repetition failed", load=load, resources=resources, repetition=rep,
                            attempt=attempt, error=str(exc))  # with the stderr tail the platform added
                log.debug("repetition failed", exc_info=True)
                cause = _cause(exc)
            else:
                generators = [
                    {"repetition": rep, "target_rate": r.target_rate, "achieved_rate": r.achieved_rate,
                     "records": r.records, "seconds": r.seconds}
                    for r in reports
                ]
                shortfall = _shortfall(reports)
                if shortfall is None:
                    done = Repetition(series, generators, early)
                    write_info(self.store, load, resources, rep, series)
                    self.store.write_repetition(load, resources, rep, done, slis)
                    return done
                cause = shortfall
            record.faults.append({"repetition": rep, "attempt": attempt, "cause": cause})
            retry = attempt < attempts
            self.progress(f"!! {label}: {cause}; " + ("running it again" if retry else
                                                      "giving up: the experiment's outcome is error"), False)
            if retry and ex.afterTeardownDelay:
                await self.sleep(ex.afterTeardownDelay)
        record.cause = f"repetition {rep + 1}: {cause} ({attempts} attempt{'s' if attempts > 1 else ''})"
        return None

    # ------------------------------------------------------------------ internals

    def _experiment_name(self, load: float, resources: float) -> str:
        """What the lifecycle hooks call one SLO experiment: the prefix of its result files.

        ``spec.experiment_id`` is not it: that one is new for every attempt of every
        repetition, because topics and consumer groups must not be shared between them.
        """
        return f"exp{self.store.id}_{fmt_value(load)}_{fmt_value(resources)}"

    def _spec(self, objects: list[Manifest], params: dict[str, Any], load: float, resources: float) -> ExperimentSpec:
        self._run_counter += 1
        exp = f"e{self.store.id}-{self._run_token}-{self._run_counter}"
        topics = [
            TopicSpec(logical=t.name, name=f"{t.name}-{exp}", partitions=t.numPartitions)
            for t in self.cfg.benchmark.kafkaConfig.topics
        ]
        return ExperimentSpec(
            experiment_id=exp,
            use_case=self.cfg.use_case,
            objects=copy.deepcopy(objects),
            topics=topics,
            params=params,
            load=load,
            resources=resources,
            group_id=f"bench-sut-{exp}",
        )

    async def _repetition(
        self, spec: ExperimentSpec, rep: int, load: float, resources: float
    ) -> tuple[dict[str, Series], list[Any], bool]:
        """Series and generator reports of one repetition, and whether early stopping ended it."""
        ex = self.cfg.execution.execution
        label = f"load={fmt_value(load)} resources={fmt_value(resources)} rep {rep + 1}/{ex.repetitions}"
        series: dict[str, Series] = {}
        reports: list[Any] = []
        early = False
        self.progress(f"{label}: starting (topics, SUT)", True)
        await self.platform.reset_topics(spec)
        try:
            await self.platform.start_sut(spec)
            if ex.loadGenerationDelay:
                await self.sleep(ex.loadGenerationDelay)
            await self.platform.start_generators(spec)
            started = self.clock()
            next_tick = started
            while True:
                sample = await self.platform.sample(spec)
                for name, value in sample.values.items():
                    s = series.setdefault(name, Series([], [], labels=spec.group_id))
                    s.timestamps.append(sample.timestamp)
                    s.values.append(float(value))
                elapsed = self.clock() - started
                lag = sample.values.get("lag")
                self.progress(
                    f"{label}: {elapsed:5.0f}/{ex.duration:g} s"
                    + (f"  lag={lag:,.0f}" if lag is not None and math.isfinite(lag) else "")
                    + f"  ({self._eta(elapsed)} left at most)",
                    True,
                )
                if elapsed >= ex.duration:
                    break
                if ex.earlyStop and self._decided_early(series, spec, elapsed):
                    self.progress(f"{label}: lag trend decided early at {elapsed:.0f} s", False)
                    early = True
                    break
                next_tick += ex.sampleInterval
                await self.sleep(max(0.0, min(next_tick - self.clock(), ex.duration - elapsed)))
            reports = list(await self.platform.stop_generators(spec))
        finally:
            try:
                await self.platform.stop_sut(spec)
            finally:
                await self.platform.delete_topics(spec)
        if ex.afterTeardownDelay:
            await self.sleep(ex.afterTeardownDelay)
        return series, reports, early

    def _decided_early(self, series: dict[str, Series], spec: ExperimentSpec, elapsed: float) -> bool:
        from bench.early_stop import decided

        return decided(self.slos, self.registry, series, self.cfg.execution.execution, spec, elapsed)

    def _settled(
        self, collected: dict[str, list[Series]], load: float, resources: float, rate: float, remaining: int
    ) -> bool | None:
        """The experiment's verdict if the repetitions not yet run cannot change it."""
        from bench.early_stop import settled_verdict

        def check(reps: dict[str, list[Series]]) -> dict[str, bool]:
            return {name: v.passed for name, v in self._verdicts(reps, load, resources, rate).items()}

        return settled_verdict(check, collected, [self._sli(slo) for slo in self.slos], remaining)

    def _sli(self, slo: SloDef) -> str:
        return self.registry.slos[slo.sloType].sli_name(slo.properties)

    def _verdicts(
        self, collected: dict[str, list[Series]], load: float, resources: float, rate: float
    ) -> dict[str, SloVerdict]:
        ex = self.cfg.execution.execution
        verdicts: dict[str, SloVerdict] = {}
        for slo in self.slos:
            slo_type = self.registry.slos[slo.sloType]
            sli = self._sli(slo)
            reps = collected.get(sli, [])
            warmup = float(slo.properties.get("warmup", ex.warmup))
            ctx = SloContext(load=load, resources=resources, warmup=warmup, properties=slo.properties,
                             load_rate=rate)
            if not reps:
                verdicts[slo.name] = SloVerdict(False, {"error": f"no samples of SLI {sli!r} were recorded"})
                continue
            verdict = slo_type.check(reps, ctx)
            verdict.details.setdefault("warmup", warmup)
            verdicts[slo.name] = verdict
        return verdicts

    def _write_partial_table(self) -> None:
        """Provisional table from what is measured so far, so a crash keeps it too."""
        metric = self.cfg.execution.execution.metric
        table = tables.build(metric, ((load, res, passed) for (load, res), passed in self.cache.items()))
        tables.write_run_table(self.store, metric, table, final=False)

    def _keep_environment_history(self, record: EnvironmentRecord) -> None:
        """On resume, the experiments of the interrupted run stay in ``exp<id>-environment.json``."""
        try:
            old = json.loads(record.path.read_text(encoding="utf-8"))
            record.data["experiments"] = list(old.get("experiments") or []) + record.data["experiments"]
            record.data["resumedFrom"] = [*(old.get("resumedFrom") or []), old.get("recorded")]
        except (OSError, ValueError, AttributeError, TypeError):
            pass  # a lost environment record is no reason to refuse the results

    def _eta(self, elapsed_in_rep: float) -> str:
        ex = self.cfg.execution
        total = len(ex.load.loadValues) * len(ex.resources.resourceValues)
        left = max(0, total - len(self.cache))
        per_rep = ex.execution.duration + ex.execution.loadGenerationDelay + ex.execution.afterTeardownDelay + 20
        seconds = max(0.0, left * ex.execution.repetitions * per_rep - elapsed_in_rep)
        return f"{left} experiment(s), ~{seconds / 60:.0f} min"


def _shortfall(reports: list[Any]) -> str | None:
    """Why the generators' load was not the one asked for, or None when it was."""
    target = sum(r.target_rate for r in reports)
    achieved = sum(r.achieved_rate for r in reports)
    if target > 0 and achieved < target * (1 - MAX_GENERATOR_SHORTFALL):
        return (f"generator achieved {achieved:.0f} of {target:.0f} records/s "
                f"(more than {MAX_GENERATOR_SHORTFALL:.0%} short)")
    return None


def _cause(exc: BaseException) -> str:
    """One line for the result JSON: the exception's class and first line (stderr tails follow it)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__


def _summary(verdict: SloVerdict) -> str:
    d = verdict.details
    if "error" in d:
        return f"error: {d['error']}"
    parts = []
    for key in ("median", "aggregate", "ratio", "max_ratio", "threshold"):
        if key in d and isinstance(d[key], int | float):
            parts.append(f"{key}={d[key]:.4g}")
    return " ".join(parts) or ("pass" if verdict.passed else "fail")
