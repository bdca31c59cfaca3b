"""One SLO experiment: its repetitions, retries after faults, and what resume reads back.

Every finished repetition is written before the next starts, so a crash, kill or
Ctrl-C keeps all that was measured, and ``resume`` answers finished experiments and
repetitions from disk.

Faults: a repetition whose platform raises (a SUT, generator or broker that died, a
generator that stalled, a failed Kafka call) or whose generators fell more than 1 %
behind their target is not measured: it is run again, up to ``retries`` times. If it
still fails, the experiment's outcome is ``error`` with the cause and no verdict: the
search gets None, draws no conclusion from it (:mod:`bench.search.strategies`), and the table marks
the entries it could change as undecided; the run goes on, because one crashed JVM
should not cost the hours of experiments around it. Configuration errors (``ConfigError``, ``OptionError``: the
same in every experiment) and bugs (:data:`BUGS`) still end the run; a platform's own
error is a fault even where it is a ``UserError`` for the CLI (a broker the user runs).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from bench import metrics
from bench.analysis import confidence
from bench.api import ExperimentSpec, GeneratorReport, Manifest, Platform, Series, SloVerdict
from bench.config.base import ConfigError
from bench.errors import OptionError
from bench.execution import disturbance
from bench.execution.collector import Samples, SliCollector, Until
from bench.execution.config import ProgressFn, RunConfig
from bench.execution.deployment import (
    build_objects,
    experiment_spec,
    instance_cores,
    load_decreasing,
    merged_params,
)
from bench.patchers.apply import load_rate
from bench.plugins import Registry
from bench.results import tables
from bench.results.environment import EnvironmentRecord
from bench.results.info import summarise, write_info
from bench.results.store import ExperimentRecord, Repetition, ResultStore, fmt_value
from bench.search.prediction import probe_complete
from bench.slo.evaluator import SloEvaluator, summary

log = structlog.get_logger("bench.execution")

#: A generator that falls further behind its target than this makes a repetition a fault.
MAX_GENERATOR_SHORTFALL = 0.01

#: Exceptions that are bugs in bench or a plugin, not faults of an experiment: they keep
#: their traceback and end the run rather than being retried.
BUGS: tuple[type[BaseException], ...] = (NotImplementedError, TypeError, AttributeError, NameError, ImportError)

OUTCOMES = ("passed", "failed", "error")
NOT_FAULTS: tuple[type[BaseException], ...] = (ConfigError, OptionError, *BUGS)

#: seconds per repetition beyond its configured delays (deploy, teardown) in the time estimate
_OVERHEAD_S = 20


class ExperimentRunner:
    """Runs the SLO experiments the search asks for and remembers their verdicts."""

    def __init__(
        self,
        registry: Registry,
        config: RunConfig,
        platform: Platform,
        store: ResultStore,
        evaluator: SloEvaluator,
        progress: ProgressFn,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.registry = registry
        self.cfg = config
        self.platform = platform
        self.store = store
        self.evaluator = evaluator
        self.progress = progress
        self.sleep = sleep
        self.settings = config.execution.execution
        self.collector = SliCollector(platform, evaluator, self.settings, progress, clock, sleep, self.eta)
        #: verdict per (load, resources), None for an error: the search asks for some pairs
        #: twice, resume answers from disk
        self.cache: dict[tuple[float, float], bool | None] = {}
        #: verdicts entered without an experiment (the sizing probe's failure,
        #: ``bench.execution.probe_verdict``) -> the line said when the search asks for one
        self.answered: dict[tuple[float, float], str] = {}
        #: set by the engine once the platform is open
        self.environment: EnvironmentRecord | None = None
        self.experiments_done = 0
        #: an attempt was torn down and ``afterTeardownDelay`` is owed before the next start
        self.torn_down = False
        self._attempts = 0
        self._run_token = uuid.uuid4().hex[:6]

    def remember(self, previous: list[ExperimentRecord]) -> None:
        """Verdicts of a resumed run; errors get another chance, from their first unfinished repetition."""
        for rec in previous:
            if rec.outcome != "error":
                self.cache[(rec.load, rec.resources)] = rec.passed

    def enter(self, key: tuple[float, float], passed: bool, why: str) -> None:
        """A verdict without an experiment (``bench.execution.probe_verdict``): the search
        takes it; once it asks for it, ``why`` is said and the result file keeps it (an
        answer the search never asked for is no verdict of the table: UC1's probe passed
        its lighter loads on two half-core instances, where the heaviest passed on one)."""
        self.cache[key] = passed
        self.answered[key] = why

    def experiment_name(self, load: float, resources: float) -> str:
        """What the lifecycle hooks call one SLO experiment: the prefix of its result files.

        ``spec.experiment_id`` is not it: that one is new for every attempt of every
        repetition, because topics and consumer groups must not be shared between them.
        """
        return f"exp{self.store.id}_{fmt_value(load)}_{fmt_value(resources)}"

    async def run_experiment(self, load: float, resources: float) -> bool | None:
        """One SLO experiment: every repetition, then every SLO over all repetitions; None: error."""
        key = (float(load), float(resources))
        if key in self.cache:
            if key in self.answered:
                why = self.answered.pop(key)
                self.progress(why, False)
                if (passed := self.cache[key]) is not None:
                    self.store.add_answered(key[0], key[1], passed, why)
                    self._write_partial_table()
            return self.cache[key]
        ex = self.settings
        objects = build_objects(
            self.registry, self.cfg.benchmark, self.cfg.execution, self.cfg.params, load, resources
        )
        params = merged_params(self.cfg.use_case, self.cfg.benchmark, self.cfg.execution, objects, self.cfg.params)
        rate = load_rate(objects, load)
        record = ExperimentRecord(load=load, resources=resources, passed=False, started=time.time())
        if self.environment is not None:
            self.environment.experiment_started(load, resources)
        slis = self.evaluator.slis()
        stored = self.store.load_repetitions(load, resources, slis) if self.cfg.resume else []
        collected: dict[str, list[Series]] = {}
        measured: list[Repetition] = []  # what ended each one, for the verdict's confidence
        deciding: list[str] | None = None  # the SLOs the next repetition's early end waits for
        for rep in range(ex.repetitions):
            if rep < len(stored):
                done: Repetition | None = stored[rep]
                self.progress(f"load={fmt_value(load)} resources={fmt_value(resources)} rep {rep + 1}/"
                              f"{ex.repetitions}: measured before, read back", False)
            else:
                done = await self._measure(objects, params, load, resources, rep, record, slis, deciding)
            if done is None:
                break
            record.early_stopped = record.early_stopped or done.early_stopped
            measured.append(done)
            for name, s in done.series.items():
                collected.setdefault(name, []).append(s)
            record.generators.extend(done.generators)
            remaining = ex.repetitions - rep - 1
            if not (ex.earlyStop and remaining):
                continue
            where = f"load={fmt_value(load)} resources={fmt_value(resources)}"
            settled, open_slos = self.evaluator.settlement(collected, load, resources, rate, remaining)
            # an SLO no later repetition can turn needs no decision in them: two passing
            # lag trends of three fix the median, and the third repetition waits only
            # for an SLO judged by the worst one (a dropped-records SLO by default)
            deciding = open_slos or None
            if settled is None:
                if open_slos:
                    self.progress(f"{where}: not settled after {rep + 1} of {ex.repetitions} repetitions: "
                                  f"the rest could still change {', '.join(open_slos)}", False)
                continue
            self.progress(f"{where}: {'pass' if settled else 'fail'} settled after {rep + 1} of "
                          f"{ex.repetitions} repetitions; skipping the rest", False)
            record.early_stopped = True
            break
        verdicts: dict[str, SloVerdict] = {}
        if record.cause is None:
            verdicts = self.evaluator.verdicts(collected, load, resources, rate)
            record.passed = all(v.passed for v in verdicts.values())
            record.outcome = "passed" if record.passed else "failed"
            record.slos = {name: {"passed": v.passed, **v.details} for name, v in verdicts.items()}
        else:
            record.passed, record.outcome, record.valid = False, "error", False
        record.finished = time.time()
        record.cores_per_instance = instance_cores(objects, self._cpu_limit_applied())
        record.info = summarise(collected, float(ex.warmup))
        confidence.annotate(record, self.store, self.evaluator.trend_slos(),
                            self.cfg.use_case.output_period(params), measured)
        self.store.add_experiment(record)
        if self.environment is not None:
            self.environment.experiment_finished(load, resources, record.cores_per_instance)
        self.cache[key] = None if record.outcome == "error" else record.passed
        self.experiments_done += 1
        metrics.count_experiment(record.outcome)
        self._write_partial_table()
        if self.registry.pm is not None:
            self.registry.pm.hook.bench_experiment_finished(
                experiment_id=self.experiment_name(load, resources), load=load, resources=resources,
                passed=record.passed, details=record.slos,
            )
        verdict = "ERROR: " + str(record.cause) if record.cause else ("PASS" if record.passed else "FAIL")
        self.progress(
            f"load={fmt_value(load)} resources={fmt_value(resources)}: {verdict} "
            + " ".join(f"[{n}: {summary(v)}]" for n, v in verdicts.items()),
            False,
        )
        return self.cache[key]

    async def _measure(
        self, objects: list[Manifest], params: dict[str, Any], load: float, resources: float, rep: int,
        record: ExperimentRecord, slis: dict[str, str], deciding: list[str] | None = None,
    ) -> Repetition | None:
        """One repetition, run again after a fault up to ``retries`` times; None when it never succeeded.

        A finished repetition is written at once (SLI series, then generator reports), so
        a later crash or kill loses nothing of it.
        """
        ex = self.settings
        label = f"load={fmt_value(load)} resources={fmt_value(resources)} rep {rep + 1}/{ex.repetitions}"
        attempts = max(0, self.cfg.retries) + 1
        cause = ""
        stolen: list[float] = []  # each attempt's share of the host's CPU taken (bench.execution.disturbance)
        attempt = 0
        while attempt < attempts + (1 if stolen else 0):
            attempt += 1
            spec = self._spec(objects, params, load, resources)
            if self.registry.pm is not None:
                self.registry.pm.hook.bench_experiment_started(
                    experiment_id=self.experiment_name(load, resources), load=load, resources=resources,
                    repetition=rep,
                )
            try:
                samples, reports = await self._attempt(spec, label, deciding=deciding)
            except NOT_FAULTS:
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
                    done = Repetition(samples.series, generators, samples.early, samples.early_decisions,
                                      samples.decided, list(deciding) if deciding is not None else None)
                    share = disturbance.disturbed(samples.series, float(ex.warmup))
                    if share is not None and self._fails_alone(done, objects, load, resources):
                        stolen.append(share)
                        if len(stolen) == 1:  # once more, whatever the retries left
                            cause = (f"failed while the hypervisor took {share:.0%} of the host's CPU "
                                     f"({disturbance.SLI})")
                            record.faults.append({"repetition": rep, "attempt": attempt, "cause": cause})
                            self.progress(f"!! {label}: {cause}; measuring it again", False)
                            continue
                        record.disturbed = disturbance.note(stolen)
                    write_info(self.store, load, resources, rep, samples.series)
                    self.store.write_repetition(load, resources, rep, done, slis)
                    return done
                cause = shortfall
            record.faults.append({"repetition": rep, "attempt": attempt, "cause": cause})
            retry = attempt < attempts
            self.progress(f"!! {label}: {cause}; " + ("running it again" if retry else
                                                      "giving up: the experiment's outcome is error"), False)
        record.cause = f"repetition {rep + 1}: {cause} ({attempts} attempt{'s' if attempts > 1 else ''})"
        return None

    def _fails_alone(self, done: Repetition, objects: list[Manifest], load: float, resources: float) -> bool:
        """Whether one repetition's samples fail an SLO on their own."""
        try:
            verdicts = self.evaluator.verdicts({n: [s] for n, s in done.series.items()}, load, resources,
                                               load_rate(objects, load))
        except Exception:  # noqa: BLE001 - samples no verdict can be formed on: not a failure to repeat
            return False
        return not all(v.passed for v in verdicts.values())

    def _cpu_limit_applied(self) -> bool:
        """False when the platform recorded that it could not enforce the SUT's CPU limit."""
        if self.environment is None:
            return True
        self.environment.refresh()
        limit = self.environment.data.get("cpuLimit")
        return not (isinstance(limit, dict) and limit.get("applied") is False)

    def _spec(self, objects: list[Manifest], params: dict[str, Any], load: float, resources: float) -> ExperimentSpec:
        self._attempts += 1
        return experiment_spec(self.cfg.use_case, self.cfg.benchmark, objects, params, load, resources,
                               f"e{self.store.id}-{self._run_token}-{self._attempts}")

    def rate_of(self, load: float) -> float:
        """The records/s a load value asks of the generators (the smallest resource amount's deployment)."""
        objects = build_objects(self.registry, self.cfg.benchmark, self.cfg.execution, self.cfg.params, load,
                                self.cfg.execution.resources.resourceValues[0])
        return load_rate(objects, load)

    async def probe(self, load: float, resources: float, seconds: float) -> tuple[Samples, float]:
        """One short measurement outside the search (``bench.search.prediction``): no verdict, no
        result files, no retries; its samples and the load's records/s.

        It lasts ``seconds``, or longer, up to an experiment's duration, while a
        micro-batch lag has not yet committed often enough after the warm-up to be
        measured (``prediction.probe_complete``)."""
        objects = build_objects(self.registry, self.cfg.benchmark, self.cfg.execution, self.cfg.params, load,
                                resources)
        params = merged_params(self.cfg.use_case, self.cfg.benchmark, self.cfg.execution, objects, self.cfg.params)
        rate, warmup = load_rate(objects, load), float(self.settings.warmup)
        longest = max(float(seconds), float(self.settings.duration))
        short = self.settings.model_copy(update={"duration": longest, "earlyStop": False})
        collector = SliCollector(self.platform, self.evaluator, short, self.progress, self.collector.clock,
                                 self.sleep, lambda elapsed: "probe")
        label = f"probe load={fmt_value(load)} resources={fmt_value(resources)}"

        def enough(series: dict[str, Series], elapsed: float) -> bool:
            return elapsed >= seconds and probe_complete(series, warmup, rate)

        spec = self._spec(objects, params, load, resources)
        samples, _ = await self._attempt(spec, label, collector, until=enough)
        return samples, rate

    async def _attempt(self, spec: ExperimentSpec, label: str, collector: SliCollector | None = None,
                       deciding: list[str] | None = None, until: Until | None = None
                       ) -> tuple[Samples, list[GeneratorReport]]:
        """One attempt at a repetition: deploy, sample, tear down (also when it fails);
        ``deciding``: the SLOs whose early decisions can end it (None: all); ``until``:
        for the probe, when its samples suffice."""
        ex = self.settings
        if self.torn_down and ex.afterTeardownDelay:
            # between one attempt's teardown and the next one's start, not after the
            # run's last: nothing follows that one
            await self.sleep(ex.afterTeardownDelay)
        self.torn_down = False
        self.progress(f"{label}: starting (topics, SUT)", True)
        await self.platform.reset_topics(spec)
        try:
            await self.platform.start_sut(spec)
            if ex.loadGenerationDelay:
                await self.sleep(ex.loadGenerationDelay)
            await self.platform.start_generators(spec)
            samples = await (collector or self.collector).collect(spec, label, deciding, until)
            reports = list(await self.platform.stop_generators(spec))
        finally:
            try:
                await self.platform.stop_sut(spec)
            finally:
                self.torn_down = True
                await self.platform.delete_topics(spec)
        return samples, reports

    def table(self, final: bool) -> tables.RunTable:
        """The table of the verdicts so far (errors undecided), by the rules of :mod:`bench.results.tables`."""
        ex = self.cfg.execution
        _, lower_bound = ex.execution.strategy.resolved()
        return tables.build_run_table(
            ex.execution.metric,
            ((r.load, r.resources, None if r.outcome == "error" else r.passed) for r in self.store.experiments),
            loads=ex.load.loadValues, resources=ex.resources.resourceValues, lower_bound=lower_bound,
            decreasing=load_decreasing(self.cfg.benchmark, ex), complete=final,
            answered={key: bool(a["passed"]) for key, a in self.store.answered.items()},
        )

    def _write_partial_table(self) -> None:
        """Provisional table from what is measured so far, so a crash keeps it too."""
        built = self.table(final=False)
        tables.write_run_table(self.store, self.settings.metric, built.table, final=False, notes=built.notes)

    def eta(self, elapsed_in_rep: float) -> str:
        """An upper bound of the time left: every experiment not yet measured at full duration."""
        ex = self.cfg.execution
        total = len(ex.load.loadValues) * len(ex.resources.resourceValues)
        left = max(0, total - len(self.cache))
        per_rep = ex.execution.duration + ex.execution.loadGenerationDelay + ex.execution.afterTeardownDelay
        seconds = max(0.0, left * ex.execution.repetitions * (per_rep + _OVERHEAD_S) - elapsed_in_rep)
        return f"{left} experiment(s), ~{seconds / 60:.0f} min"


def _shortfall(reports: list[GeneratorReport]) -> str | None:
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
