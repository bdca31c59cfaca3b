"""A run over two load dimensions: one slice per value of the second, one grid search.

Each value of the second dimension is a slice: the execution without ``load2``, its
load type's patchers applied at that value as config overrides, run by an
:class:`~bench.execution.experiments.ExperimentRunner` of its own into a result id of
its own, so every slice's experiments, SLI series and demand table are the reference's
files, readable by ``bench analyze`` as any run's. The grid search
(:mod:`bench.search.grid`) asks the slices for experiments; the grid's own id holds
the grid files (:mod:`bench.results.grid`).

Not with ``--predict`` or ``--resume`` (a grid keeps no stored prediction, and its
slices would each need their configuration checked): both are refused before anything
starts (:func:`check_grid_options`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.api import Platform
from bench.config.base import ConfigError, ConfigOverride, Execution, PatcherRef, StrategyDef
from bench.config.model import effective_slos, load2_intensity_order, load_intensity_order
from bench.execution.config import ProgressFn, RunConfig, no_progress
from bench.execution.experiments import ExperimentRunner
from bench.plugins import Registry
from bench.results import tables
from bench.results.environment import EnvironmentRecord
from bench.results.grid import GridTable, write_grid
from bench.results.store import ExperimentRecord, ResultStore, fmt_value
from bench.search.grid import GridProblem, grid_search
from bench.slo.evaluator import SloEvaluator


def slice_execution(bench: Any, execution: Execution, value: float) -> Execution:
    """The one-dimensional execution of one second-dimension value: its load type's
    patchers become config overrides at that value (applied before the first dimension's)."""
    assert execution.load2 is not None
    load_type = next(t for t in bench.loadTypes if t.typeName == execution.load2.loadType)
    number: int | float = int(value) if float(value).is_integer() else value
    overrides = [ConfigOverride(patcher=PatcherRef.model_validate(p.model_dump()), value=number)
                 for p in load_type.patchers]
    return execution.model_copy(update={"load2": None,
                                        "configOverrides": [*execution.configOverrides, *overrides]})


def check_grid_options(execution: Execution, predict: bool, resume: bool, strategy: str) -> None:
    """What a grid run cannot do, refused before anything starts."""
    if execution.load2 is None:
        return
    if predict:
        raise ConfigError("--predict: not with a second load dimension (--load2-type); the grid search bounds "
                          "each point by its neighbours instead")
    if resume:
        raise ConfigError("--resume: not with a second load dimension (--load2-type); start the grid again")
    default = StrategyDef().name  # the grid search takes the place of the default search, on both axes
    if strategy != default:
        raise ConfigError(f"execution.execution.strategy.name: {strategy!r}; a second load dimension is searched "
                          f"by the grid search (the {default} search on both axes): leave the strategy at {default}")


@dataclass
class GridOutcome:
    exp_id: int
    grid: GridTable
    records: list[ExperimentRecord]
    results_dir: Any
    files: list[Any]

    @property
    def errors(self) -> list[ExperimentRecord]:
        return [r for r in self.records if r.outcome == "error"]


class GridEngine:
    """Reserves the grid's id and one per slice, opens the platform once, searches the grid."""

    def __init__(
        self,
        registry: Registry,
        config: RunConfig,
        platform: Platform,
        progress: ProgressFn = no_progress,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        ex = config.execution
        if ex.load2 is None:
            raise ValueError("GridEngine needs an execution with load2")
        self.registry, self.cfg, self.platform, self.progress = registry, config, platform, progress
        meta = {"useCase": config.use_case.name, "params": config.params, "pid": os.getpid(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.store = ResultStore(config.results_dir, ResultStore.reserve_id(config.results_dir,
                                                                             {**meta, "grid": True}))
        slos = effective_slos(config.benchmark, ex)
        self.slices: dict[float, ExperimentRunner] = {}
        for value in ex.load2.loadValues:
            sub = slice_execution(config.benchmark, ex, value)
            store = ResultStore(config.results_dir, ResultStore.reserve_id(
                config.results_dir, {**meta, "grid": self.store.id, "load2": value}))
            label = f"[{ex.load2.loadType}={fmt_value(value)}] "
            self.slices[value] = ExperimentRunner(
                registry, dataclasses.replace(config, execution=sub, exp_id=store.id), platform, store,
                SloEvaluator(registry, slos, sub.execution), _labelled(progress, label), clock, sleep)

    async def run(self) -> GridOutcome:
        ex = self.cfg.execution
        assert ex.load2 is not None
        bench_doc = self.cfg.benchmark.model_dump(mode="json")
        self.store.write_configuration(ex.model_dump(mode="json"), bench_doc)
        for runner in self.slices.values():
            runner.store.write_configuration(runner.cfg.execution.model_dump(mode="json"), bench_doc)

        async def run(load: float, load2: float, resources: float) -> bool | None:
            return await self.slices[load2].run_experiment(load, resources)

        problem = GridProblem(load_intensity_order(self.cfg.benchmark, ex),
                              load2_intensity_order(self.cfg.benchmark, ex), ex.resources.resourceValues, run)
        await self.platform.open()
        try:
            for runner in self.slices.values():
                runner.environment = EnvironmentRecord.of_platform(
                    runner.store.path(f"exp{runner.store.id}-environment.json"), self.platform)
                runner.environment.write()
            found = await grid_search(problem)
        finally:
            await self.platform.close()
        grid = GridTable(ex.load.loadType, ex.load2.loadType, list(ex.load.loadValues), list(ex.load2.loadValues),
                         list(ex.resources.resourceValues), found.demand, found.notes, found.experiments,
                         {v: r.store.id for v, r in self.slices.items()}, ex.resources.resourceType)
        for value, runner in self.slices.items():
            table, notes = grid.slice(value)  # the grid's bounds infer across slices: its table, not the verdicts'
            tables.write_run_table(runner.store, "demand", table, final=True, notes=notes)
        files = write_grid(self.cfg.results_dir, self.store.id, grid)
        records = [rec for r in self.slices.values() for rec in r.store.experiments]
        return GridOutcome(self.store.id, grid, records, self.cfg.results_dir, files)


def _labelled(progress: ProgressFn, label: str) -> ProgressFn:
    def labelled(message: str, transient: bool = False) -> None:
        progress(label + message, transient)
    return labelled
