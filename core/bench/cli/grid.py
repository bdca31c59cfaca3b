"""``bench run`` over two load dimensions: the options, their checks, the run and its output.

Kept out of :mod:`bench.cli.launch` and :mod:`bench.cli.commands`, which call in here
at three points: shaping the execution document (``--load2-type``, ``--loads2``),
checking the resolved run, and running and printing a grid
(:mod:`bench.execution.grid_run`, :mod:`bench.analysis.grid_report`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bench.config.base import Benchmark, ConfigError, Execution
from bench.config.options import split_floats
from bench.errors import UserError
from bench.execution.config import ProgressFn, RunConfig
from bench.execution.deployment import build_objects
from bench.plugins import Registry
from bench.results.store import fmt_value


def second_dimension(doc: dict[str, Any], opts: dict[str, Any]) -> None:
    """``--load2-type`` and ``--loads2`` over the execution file's ``load2``."""
    values = split_floats("loads2", opts.get("loads2"))
    if values is None and not opts.get("load2_type"):
        return
    load2 = dict(doc.get("load2") or doc.pop("loads2", None) or {})
    if opts.get("load2_type"):
        load2["loadType"] = opts["load2_type"]
    if values is not None:
        load2["loadValues"] = values
    if "loadType" not in load2:
        raise ConfigError("--loads2: needs --load2-type NAME (the second dimension's load type)")
    if "loadValues" not in load2:
        raise ConfigError("--load2-type: needs --loads2 V1,V2,.. (the second dimension's values)")
    doc["load2"] = load2


def check_grid(registry: Registry, bench: Benchmark, execution: Execution, params: dict[str, Any],
               opts: dict[str, Any]) -> None:
    """A grid run's own checks: the options it cannot take, the cost function, and that
    every second-dimension value patches the deployment."""
    from bench.analysis.grid_report import check_cost
    from bench.execution.grid_run import check_grid_options, slice_execution

    if execution.load2 is None:
        if opts.get("cost"):
            raise ConfigError("--cost: needs a second load dimension (--load2-type, --loads2) to map onto one axis")
        return
    check_grid_options(execution, bool(opts.get("predict")), bool(opts.get("resume")),
                       execution.execution.strategy.resolved()[0])
    if opts.get("cost"):
        check_cost(str(opts["cost"]))
    for value in execution.load2.loadValues:
        try:
            build_objects(registry, bench, slice_execution(bench, execution, value), params,
                          execution.load.loadValues[0], execution.resources.resourceValues[0])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if isinstance(exc, UserError):
                raise
            raise ConfigError(f"load2 {fmt_value(value)} ({execution.load2.loadType}): the deployment cannot be "
                              f"patched: {exc}; check --loads2") from None


def is_grid(prepared: Any) -> bool:
    """Whether the prepared run has a second load dimension."""
    return getattr(getattr(prepared, "execution", None), "load2", None) is not None


def check_expected(prepared: Any, opts: dict[str, Any], expected_grid: Any) -> None:
    """``--expect``: a grid for a grid run, a table for a one-dimensional one (before the run)."""
    if opts.get("expect") and (expected_grid is None) == is_grid(prepared):
        raise UserError(f"--expect {opts['expect']}: a grid run is compared with a grid, a one-dimensional run "
                        "with a table")


async def run_grid_benchmark(registry: Registry, prepared: Any, opts: dict[str, Any], progress: ProgressFn) -> Any:
    """A run over two load dimensions (:mod:`bench.execution.grid_run`)."""
    from bench.execution.grid_run import GridEngine

    platform = registry.platforms[prepared.platform_options["platform"]].create(prepared.platform_options, registry)
    results_dir = Path(opts.get("results_dir") or "results")
    config = RunConfig(use_case=prepared.use_case, benchmark=prepared.benchmark, execution=prepared.execution,
                       results_dir=results_dir, params=prepared.params,
                       retries=1 if opts.get("retries") is None else int(opts["retries"]))
    engine = GridEngine(registry, config, platform, progress)
    progress(f"exp{engine.store.id}: {prepared.use_case.name}, a grid of {len(engine.slices)} slice(s) "
             f"(exp{', exp'.join(str(r.store.id) for r in engine.slices.values())}), results in {results_dir}/", False)
    return await engine.run()


def grid_done(outcome: Any, opts: dict[str, Any], expected: Any) -> int:
    """Print a grid run's result; its exit code as ``bench run`` documents them."""
    from bench.analysis.grid_report import collapse, expect_grid, format_collapse, format_grid

    click.echo(format_grid(outcome.grid, outcome.exp_id))
    if opts.get("cost"):
        click.echo(format_collapse(collapse(outcome.grid, str(opts["cost"]))))
    click.echo("results: " + ", ".join(str(p) for p in outcome.files[:2]) + " (and a table per slice)")
    code = 0
    if expected is not None:
        code, text = expect_grid(expected, outcome.grid, opts["expect"])
        click.echo(text)
    if outcome.errors:
        click.echo(f"bench: {len(outcome.errors)} experiment(s) ended in error", err=True)
        code = code or 1
    return code
