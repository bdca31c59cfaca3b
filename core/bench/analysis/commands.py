"""``bench analyze``, ``bench report`` and ``bench compare``: offline commands.

Added to the CLI through the ``bench_add_commands`` hook, like a plugin's commands, so
the core's CLI module does not grow with every analysis. Heavy imports stay inside the
commands: ``bench --help`` should not pay for numpy. Errors a user can fix are
``bench.config.model.ConfigError``, which the CLI group turns into one line and exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.analysis.compare import EXIT_REGRESSION  # the demand rose: docs/analysis.md
from bench.hookspecs import hookimpl


@click.command()
@click.argument("results", type=click.Path(exists=True, file_okay=False))
@click.option("--exp", "exp_id", type=int, metavar="N", help="Experiment id in RESULTS (default: the newest).")
@click.option("--threshold", type=float, metavar="X", help="Threshold of the trend SLOs in records/s (absolute).")
@click.option("--threshold-rel-to-rate", type=float, metavar="X",
              help="Threshold of the trend SLOs as a fraction of the generated records/s (e.g. 0.01).")
@click.option("--threshold-rel-to-load", type=float, metavar="X",
              help="Threshold of the trend SLOs: X times the load value (sensors, window size, ...), as the "
                   "reference's thresholdRelToLoad.")
@click.option("--warmup", type=float, metavar="S", help="Seconds ignored at the start of each series.")
@click.option("--metric", type=click.Choice(["demand", "capacity"]), help="Table to build (default: the run's).")
@click.option("--confidence", type=float, default=0.95, show_default=True, metavar="P",
              help="Two-sided confidence of the slope intervals.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE",
              help="Table CSV (default RESULTS/exp<id>-analysis-<metric>.csv; a JSON goes next to it).")
def analyze(results: str, exp_id: int | None, threshold: float | None, threshold_rel_to_rate: float | None,
            threshold_rel_to_load: float | None, warmup: float | None, metric: str | None, confidence: float,
            output: str | None) -> None:
    """Re-evaluate a run's stored lag series with other SLO settings; runs nothing.

    Settings not given are the run's own (its configuration files), else the
    published defaults (threshold 2000 records/s, warm-up 60 s). Prints the demand (or
    capacity) table and every experiment's median slope, its confidence interval, its
    margin to the threshold and an `unstable` flag.
    """
    from bench.analysis import inputs
    from bench.analysis.analyze import analyze as run_analysis
    from bench.analysis.analyze import format_analysis, run_settings, write
    from bench.analysis.runs import open_run
    from bench.config.base import ConfigError

    inputs.check_options(threshold, threshold_rel_to_load, warmup, confidence, threshold_rel_to_rate)
    inputs.check_source(results)
    if exp_id is None:  # a grid: the grid, then each slice analysed as the run it is
        from bench.analysis.grid_report import analyze_grid

        if (grid := analyze_grid(results)) is not None:
            click.echo(grid[0])
            for slice_id in grid[1]:
                analyze.callback(results, slice_id, threshold, threshold_rel_to_rate,  # type: ignore[misc]
                                 threshold_rel_to_load, warmup, metric, confidence, output)
            return
    run = open_run(results, exp_id)
    inputs.check_run(run)
    inputs.check_warmup(run, warmup)
    settings = run_settings(run, threshold, threshold_rel_to_load, warmup, confidence, threshold_rel_to_rate)
    if output:
        inputs.check_output("-o", Path(output), [results])
        if Path(output).suffix == ".json":  # the JSON goes to OUTPUT with .json: the same file
            raise ConfigError(f"-o {inputs.shown(output)}: names the table CSV, and the JSON beside it would take "
                              f"the same name; give {inputs.shown(Path(output).with_suffix('.csv'))}")
        inputs.check_output("-o", Path(output).with_suffix(".json"), [results])
    result = run_analysis(run, settings, metric)
    with inputs.writing("-o", Path(output or results)):
        csv_path, json_path = write(result, Path(output) if output else None)
    click.echo(format_analysis(result))
    click.echo(f"written: {csv_path}, {json_path}")


@click.command()
@click.argument("old")
@click.argument("new")
def compare(old: str, new: str) -> None:
    """Compare two runs' demand (or capacity) tables; exit 3 when NEW regressed.

    OLD and NEW are results folders (newest run; FOLDER:ID picks one) or table CSVs
    (exp<id>_demand.csv, exp<id>_capacity.csv). Exit code 3 when the demand rose for
    any load (or the capacity fell for any resource amount), 0 otherwise, 2 on
    unreadable input.
    """
    from bench.analysis import inputs
    from bench.analysis.compare import compare_tables, format_comparison, read_table
    from bench.analysis.grid_report import compare_sources
    from bench.analysis.runs import open_run
    from bench.config.base import ConfigError

    if (grids := compare_sources(old, new)) is not None:  # two grids: point by point
        click.echo(grids[1])
        if grids[0]:
            sys.exit(grids[0])
        return
    tables = []
    for source in (old, new):
        inputs.check_source(source)
        table = read_table(source)
        inputs.check_table(source, table)
        tables.append(table)
    folders = [open_run(source) for source in (old, new) if not Path(source).is_file()]
    axes, cases = inputs.differences(folders)
    if axes or cases:  # a demand of another use case or axis is no regression of this one
        raise ConfigError(f"cannot compare runs of different {'load or resource types' if axes else 'use cases'} "
                          f"({axes or cases})")
    comparison = compare_tables(*tables)
    click.echo(format_comparison(comparison, old, new))
    if comparison.regressed:
        sys.exit(EXIT_REGRESSION)


@click.command()
@click.argument("results", nargs=-1, required=True)
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="The HTML file to write.")
@click.option("--confidence", type=float, default=0.95, show_default=True, metavar="P",
              help="Two-sided confidence of the slope intervals.")
def report(results: tuple[str, ...], output: str, confidence: float) -> None:
    """Write one self-contained HTML page comparing runs (folders, FOLDER:ID for one id).

    The page needs no network: charts are inline SVG. It holds the scalability graphs
    with a linear-scaling line, every experiment's lag with its trend and margin, the
    generator accuracy, other SLIs, each run's environment, scaling efficiency and cost.
    """
    from bench.analysis import inputs
    from bench.analysis.grid_report import grids_in
    from bench.analysis.report import build_report
    from bench.analysis.runs import open_run
    from bench.config.base import ConfigError
    from bench.results.store import atomic_write

    inputs.check_options(None, None, None, confidence)
    for source in results:
        inputs.check_source(source)
    sources, grids = grids_in(list(results))  # a grid: its slices' runs, and its heat map
    runs = [open_run(r) for r in sources]
    for run in runs:
        inputs.check_run(run)
    axes, cases = inputs.differences(runs)
    if axes:  # their graphs would share an axis that means different things
        raise ConfigError(f"cannot draw runs of different load or resource types on one axis ({axes}); "
                          "report them separately")
    inputs.check_output("-o", Path(output), results)
    html = build_report(runs, confidence=confidence, grids=grids)
    with inputs.writing("-o", Path(output)):
        atomic_write(Path(output), html)
    if cases:
        click.echo(f"note: the runs are of different use cases ({cases})")
    click.echo(f"report: {output}")


COMMANDS = (analyze, compare, report)


@hookimpl
def bench_add_commands(cli: click.Group) -> None:
    for command in COMMANDS:
        cli.add_command(command)
