"""The run as a whole: search strategy -> SLO experiments -> the demand or capacity table.

``Engine`` reserves the result id (or takes the one to resume), writes or checks the
configuration files, opens the platform, lets the search strategy ask for experiments
(:class:`~bench.execution.experiments.ExperimentRunner` runs them) and writes the
final table. On resume the configuration must be the one the run was measured with,
finished experiments answer from the result JSON, and the environment record keeps
the experiments of the interrupted run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog

from bench.api import Platform, SearchProblem, SearchStrategy
from bench.config.base import SloDef
from bench.config.model import effective_slos, load_intensity_order
from bench.execution import autosize, earlier_sizing, flat_extension, probe_verdict
from bench.execution.config import ProgressFn, RunConfig, no_progress
from bench.execution.experiments import NOT_FAULTS, ExperimentRunner
from bench.plugins import Registry
from bench.results import tables
from bench.results.environment import EnvironmentRecord
from bench.results.outcome import RunOutcome
from bench.results.sizing_file import read_sizing, write_sizing
from bench.results.store import ResultStore
from bench.search.flat_table import Extension, demands_shown
from bench.search.prediction import FILE as PREDICTION_FILE
from bench.search.prediction import (
    Prediction,
    Probe,
    ProbeInconclusive,
    generator_behind,
    guesses,
    measure,
    predict_capacity,
    predict_demand,
    probe_duration,
    stored_probe,
)
from bench.search.prediction import read as read_prediction
from bench.search.prediction import write as write_prediction
from bench.search.sizing_record import Sizing
from bench.slo.evaluator import SloEvaluator

log = structlog.get_logger("bench.execution")


class Engine:
    def __init__(
        self,
        registry: Registry,
        config: RunConfig,
        platform: Platform,
        progress: ProgressFn = no_progress,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        # clock/sleep are injectable so that tests can run simulated time.
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
        self.evaluator = SloEvaluator(registry, self.slos, config.execution.execution)
        self.experiments = ExperimentRunner(registry, config, platform, self.store, self.evaluator, progress,
                                            clock, sleep)
        self.environment: EnvironmentRecord | None = None

    def _run_meta(self) -> dict[str, Any]:
        """What ``exp<id>-run.json`` keeps beside the configuration files (compared on resume)."""
        return {"useCase": self.cfg.use_case.name, "params": self.cfg.params, "pid": os.getpid(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    async def run(self) -> RunOutcome:
        resuming = self.cfg.resume and self.store.path(f"exp{self.store.id}-execution-configuration.json").exists()
        sized = self._stored_sizing() if resuming else None  # a resume probes nothing again
        ex = self.cfg.execution
        execution_doc, benchmark_doc = ex.model_dump(mode="json"), self.cfg.benchmark.model_dump(mode="json")
        if resuming:
            self.store.check_configuration(execution_doc, benchmark_doc, self._run_meta())
            self.experiments.remember(self.store.load_previous())
            self.progress(
                f"resuming exp{self.store.id}: {len(self.experiments.cache)} experiment(s) already measured", False
            )
        elif self.cfg.auto is None:  # sized runs write it once sized
            self.store.write_configuration(execution_doc, benchmark_doc)
        strategy_name, lower_bound = ex.execution.strategy.resolved()
        strategy = self.registry.search_strategies[strategy_name]
        problem = self._problem(lower_bound)
        await self.platform.open()
        try:
            self.environment = EnvironmentRecord.of_platform(
                self.store.path(f"exp{self.store.id}-environment.json"), self.platform
            )
            if resuming:
                _keep_environment_history(self.environment)
            self.environment.write()
            self.experiments.environment = self.environment
            if self.cfg.auto is not None and not resuming:
                sized = await self._size()
                ex = self.cfg.execution
                self.store.write_configuration(ex.model_dump(mode="json"), self.cfg.benchmark.model_dump(mode="json"))
                problem = self._problem(lower_bound)
            self._answer_from_probe(sized, problem, strategy, lower_bound)
            if self.cfg.predict:
                prediction = await self._predict(problem, resuming, sized)
            else:  # resumed without --predict: its stored prediction is still checked against the table
                prediction = self._stored_prediction(problem) if resuming else None
            if prediction is not None and self.cfg.predict and strategy.from_prediction is not None:
                keys = problem.loads if problem.metric == "capacity" else problem.resources
                self.progress(f"search: {strategy.name}, {strategy.prediction_walk}", False)
                searched = await strategy.from_prediction(problem, guesses(prediction.predicted, keys))
            else:
                searched = await self._walk(problem, strategy, sized)
            table_now = self.experiments.table(final=True).table
            if (added := flat_extension.plan(sized, self.cfg, table_now, self.experiments.rate_of,
                                                self._host_cores())) is not None:
                assert sized is not None
                searched = {**searched, **await self._extend(sized, added, strategy, lower_bound, table_now)}
        finally:
            await self.platform.close()
        built = self.experiments.table(final=True)
        if searched != built.table:
            # a plugin strategy may conclude more than its verdicts show; the file must be
            # what bench analyze and bench compare find again in the stored verdicts
            log.warning("the search strategy's table differs from its verdicts' table; writing the latter",
                        strategy=strategy_name, searched=searched, verdicts=built.table)
        table = built.table
        tables.write_run_table(self.store, ex.execution.metric, table, final=True, notes=built.notes)
        if prediction is not None:
            # only what an experiment measured: an entry the lower bound skipped (a smaller
            # load found no passing resource) is none in the table without any verdict
            key = (lambda e: e.resources) if problem.metric == "capacity" else (lambda e: e.load)
            measured = {key(e) for e in self.store.experiments}
            prediction.measured = {k: table.get(k) for k in prediction.predicted if k in measured}
            write_prediction(self.store.path(PREDICTION_FILE.format(id=self.store.id)), prediction)
            self.progress(f"prediction right for {sum(prediction.hits.values())} of {len(prediction.hits)} "
                          "entries", False)
        if self.registry.pm is not None:
            self.registry.pm.hook.bench_run_finished(
                results_dir=str(self.cfg.results_dir), metric=ex.execution.metric, table=table
            )
        return RunOutcome(self.store.id, ex.execution.metric, table, self.store.experiments, self.cfg.results_dir,
                          notes=built.notes, prediction=prediction, duration=float(ex.execution.duration),
                          warmup=float(ex.execution.warmup),
                          slo_notes=tables.slo_override_notes(self.cfg.benchmark.slos, self.slos), sizing=sized)

    def _problem(self, lower_bound: bool) -> SearchProblem:
        ex = self.cfg.execution
        return SearchProblem(loads=load_intensity_order(self.cfg.benchmark, ex),
                             resources=ex.resources.resourceValues, run=self.experiments.run_experiment,
                             metric=ex.execution.metric, lower_bound=lower_bound)

    async def _size(self) -> Sizing | None:
        """``--loads auto`` / ``--resources auto``: probe, choose, apply, say and keep it
        (``bench.execution.autosize``) before the first experiment."""
        assert self.cfg.auto is not None
        made = await autosize.measure_sizing(self.experiments, self.cfg, self.cfg.auto, self.progress,
                                             os.cpu_count() or 1)
        if made is None:
            return None
        earlier = earlier_sizing.earlier_loads(self.store.dir, self.store.id, self.cfg.use_case.name, self.cfg.params,
                                               made, self.experiments.rate_of)
        if earlier is not None:  # the same question asked again in this folder: one table
            made = earlier_sizing.reuse(made, *earlier, sized_resources=self.cfg.auto.resources)
        autosize.apply(self.cfg, made)
        write_sizing(self.store.dir, self.store.id, made.to_json())
        for line in made.choice():  # each probe's line was printed as it ended
            self.progress(line, False)
        return made

    def _host_cores(self) -> float | None:
        """This host's cores where the SUT's CPU limit was applied here (its instances run
        on it, so the cores bound how many), else None."""
        if self.environment is None:
            return None
        self.environment.refresh()
        limit = self.environment.data.get("cpuLimit")
        return float(os.cpu_count() or 1) if isinstance(limit, dict) and limit.get("applied") is True else None

    async def _extend(self, sized: Sizing, added: Extension, strategy: SearchStrategy, lower_bound: bool,
                      table: Mapping[float, float | None]) -> dict[float, float | None]:
        """Measure what a flat sized table adds (``bench.execution.flat_extension``), kept
        first: a search of the added load, or of the loads without a passing amount over
        the added amounts, each walk starting one amount above the demands known."""
        known = [d for d in table.values() if d is not None]
        top = max(self.cfg.execution.resources.resourceValues)
        first = max(known) + 1 if added.load is not None and known else top + 1
        walked = [added.load] if added.load is not None else [x for x, d in table.items() if d is None]
        flat_extension.take(sized, added)
        autosize.apply(self.cfg, sized)
        write_sizing(self.store.dir, self.store.id, sized.to_json())
        ex = self.cfg.execution
        self.store.write_configuration(ex.model_dump(mode="json"), self.cfg.benchmark.model_dump(mode="json"))
        self.progress(f"sizing: the measured table shows {demands_shown(table)} demand(s): {added.why}", False)
        problem = self._problem(lower_bound)
        self._answer_from_probe(sized, problem, strategy, lower_bound)
        problem = dataclasses.replace(problem, loads=[x for x in problem.loads if x in walked])
        if strategy.from_prediction is None:
            return await strategy.search(problem)
        at = next((i for i, r in enumerate(problem.resources) if r >= first), len(problem.resources) - 1)
        return await strategy.from_prediction(problem, dict.fromkeys(problem.loads, at))

    def _answer_from_probe(self, sized: Sizing | None, problem: SearchProblem, strategy: SearchStrategy,
                           lower_bound: bool) -> None:
        """The sizing probe's sure failure and pass answer the pairs they imply (monotone verdicts)."""
        if sized is not None and lower_bound and not strategy.measures_every_pair:
            probe_verdict.answer(self.experiments, sized.probe_fail, sized.rates, problem.loads, problem.resources,
                                 sized.probe_pass)

    async def _walk(self, problem: SearchProblem, strategy: SearchStrategy, sized: Sizing | None
                    ) -> dict[float, float | None]:
        """The search, a sized run's walks starting at the demand the sizing probe expects."""
        start = autosize.search_guesses(sized, problem.metric, problem.loads, problem.resources)
        if start is not None and strategy.from_prediction is not None:
            return await strategy.from_prediction(problem, start)
        return await strategy.search(problem)

    def _stored_sizing(self) -> Sizing | None:
        """The sizing of the interrupted run, applied as it was: ``--resume`` measures the
        same loads, resources and CPU limit, and its configuration check compares them."""
        if self.cfg.auto is None:
            return None
        made = Sizing.from_json(read_sizing(self.store.dir, self.store.id))
        if made is not None:
            autosize.apply(self.cfg, made)
            self.progress(f"sizing: from the interrupted run (exp{self.store.id}-sizing.json), not probed again",
                          False)
            for line in made.describe():
                self.progress(line, False)
        return made

    async def _predict(self, problem: SearchProblem, resuming: bool, sized: Sizing | None = None
                       ) -> Prediction | None:
        """The probe at the heaviest load with the fewest resources, and the table it predicts.

        A sized run predicts from its sizing probe: it measured the same figure on this
        run's instances a moment ago, and a second probe costs a minute for nothing.

        None when the probe gave no usable lag (a fault, too few samples): the search
        then walks as its strategy says, and the run says why. The prediction file is
        written as soon as the probe is measured, so that ``--resume`` predicts from the
        same probe instead of measuring it again (the configuration is the same: resume
        refuses another one)."""
        ex = self.cfg.execution.execution
        load, resources = problem.loads[-1], problem.resources[0]
        path = self.store.path(PREDICTION_FILE.format(id=self.store.id))
        probe = stored_probe(read_prediction(path)) if resuming else None
        if probe is not None:
            self.progress(f"probe: from the interrupted run ({path.name}), not measured again", False)
        elif sized is not None and sized.probes:
            probe = autosize.as_probe(sized.probes[-1])
            self.progress("probe: the sizing probe's figure, not measured again", False)
        else:
            seconds = probe_duration(ex.duration, ex.warmup, ex.sampleInterval)
            try:
                samples, rate = await self.experiments.probe(load, resources, seconds)
                probe = measure(samples.series["lag"], float(ex.warmup), load, resources, rate,
                                samples.series.get("generated-records"), samples.series.get("spark-input-rows"),
                                samples.series.get("spark-batch-end"), samples.series.get("processed-rate"))
            except NOT_FAULTS:
                raise
            except ProbeInconclusive as exc:
                self.progress(f"prediction skipped: the probe was inconclusive: {exc}; the search walks as its "
                              "strategy says", False)
                return None
            except Exception as exc:  # noqa: BLE001 - a failed probe only loses the shortcut
                self.progress(f"prediction skipped: the probe gave no usable lag ({type(exc).__name__}: {exc})",
                              False)
                return None
        predicted = self._predicted(problem, probe)
        behind = (f" (its generators wrote {probe.input_rate:,.0f} of {probe.load_rate:,.0f} records/s)"
                  if generator_behind(probe) else "")
        batches = ("" if not probe.batch_ends else
                   f" (the rows its micro-batches read in the {probe.seconds:.0f} s between the first and the last "
                   f"of {probe.batch_ends} batch ends)" if probe.source == "batches" else
                   f" (the lag's growth from the first to the last of {probe.batch_ends} micro-batch commits)")
        self.progress(f"probe: {probe.per_instance_rate:,.0f} records/s per instance{batches}"
                      f"{'' if probe.saturated else ' (not saturated: a lower bound)'}{behind}; predicted "
                      f"{problem.metric} {predicted}", False)
        made = Prediction(problem.metric, probe, predicted)
        write_prediction(path, made)
        return made

    def _predicted(self, problem: SearchProblem, probe: Probe) -> dict[float, float | None]:
        rates = {load: self.experiments.rate_of(load) for load in problem.loads}
        if problem.metric == "capacity":
            return predict_capacity(rates, problem.resources, probe.per_instance_rate)
        return predict_demand(rates, problem.resources, probe.per_instance_rate)

    def _stored_prediction(self, problem: SearchProblem) -> Prediction | None:
        """The prediction an interrupted ``--predict`` run stored, so that a resume without
        the flag still fills in what was measured: left as it was, its file said "not
        measured" for entries this run measured."""
        probe = stored_probe(read_prediction(self.store.path(PREDICTION_FILE.format(id=self.store.id))))
        return None if probe is None else Prediction(problem.metric, probe, self._predicted(problem, probe))

    async def run_experiment(self, load: float, resources: float) -> bool | None:
        """One SLO experiment, as the search strategy asks for it (None: error, no verdict)."""
        return await self.experiments.run_experiment(load, resources)


def _keep_environment_history(record: EnvironmentRecord) -> None:
    """On resume, the experiments of the interrupted run stay in ``exp<id>-environment.json``."""
    try:
        old = json.loads(record.path.read_text(encoding="utf-8"))
        record.data["experiments"] = list(old.get("experiments") or []) + record.data["experiments"]
        record.data["resumedFrom"] = [*(old.get("resumedFrom") or []), old.get("recorded")]
    except (OSError, ValueError, AttributeError, TypeError):
        pass  # a lost environment record is no reason to refuse the results
