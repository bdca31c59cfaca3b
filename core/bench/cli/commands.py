"""The ``bench`` command line.

Errors a user can fix (``bench.errors.UserError``: bad configuration, unknown plugin,
missing Java) end the command with exit code 2 and one line naming the cause, caught
once in :class:`BenchGroup`; ``-vv`` adds the traceback. Everything else is a bug and
keeps its traceback. Everything measured so far stays in the results folder.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from bench import __version__
from bench.analysis import commands as _analysis_commands
from bench.cli.interrupts import sigterm_as_ctrl_c
from bench.cli.logs import configure_logging
from bench.errors import UserError, is_user_error
from bench.plugins import Registry, load_plugins
from bench.stages import commands as _stage_commands

EPILOG = """\b
Examples:
  bench run --plugin uc1                              laptop-sized defaults
  bench run --plugin calibrated --set capacity=500 --loads 1000,2000 --resources 1,2,3,4
  bench run --plugin uc3 --loads 1000,4000 --resources 1,2 --duration 120 --warmup 30
  bench run --plugin uc1 --execution exec.yaml --results out/ --resume
  bench run --plugin uc1 --platform kubernetes --dry-run   print patched manifests
  bench run --job examples/own_job.py --loads 1000,4000 --resources 1,2   your own script
"""


#: ``ctx.meta`` key: ``bench run``'s options generated from the platforms' declarations
PLATFORM_PARAMS = "bench.platform_params"
#: ``ctx.meta`` key: how many -v were given, to the group and to the command together
VERBOSITY = "bench.verbosity"


def _count_verbose(ctx: click.Context, param: click.Parameter, value: int) -> int:
    ctx.meta[VERBOSITY] = ctx.meta.get(VERBOSITY, 0) + (value or 0)
    return value


def _registry() -> Registry:
    return load_plugins()


class RunCommand(click.Command):
    """``bench run --help`` ends with each platform and the options it reads, from the
    platforms' own declarations (a plugin's platform too); the registry is loaded only
    when help is asked for, so that running stays as fast as it is."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The command's own options, then those the platforms declare (generated once
        per invocation, from the registry the run uses)."""
        from bench.cli.platform_options import platform_params

        help_option = self.get_help_option(ctx)
        own = [p for p in super().get_params(ctx) if p is not help_option]
        if PLATFORM_PARAMS not in ctx.meta:
            ctx.meta[PLATFORM_PARAMS] = platform_params(_registry())
        return [*own, *ctx.meta[PLATFORM_PARAMS], *([help_option] if help_option else [])]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["bench.run.args"] = list(args)  # --help is eager: it runs before --plugin is parsed
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        from bench.cli.plugin_help import plugin_named, use_case_help

        registry = _registry()
        if (name := plugin_named(ctx.meta.get("bench.run.args") or [])) is not None:
            title, rows = use_case_help(registry, name)
            with formatter.section(title):
                for text, items in rows:
                    formatter.write_text(text)
                    if items:
                        with formatter.indentation():
                            formatter.write_dl(items)
        with formatter.section("Search strategies (--search NAME)"):
            formatter.write_dl([(s.name, s.description) for s in registry.search_strategies.values()])
        platforms = registry.platforms
        with formatter.section("Platforms (--platform NAME; other platforms' options are refused)"):
            for ptype in platforms.values():
                formatter.write_text(f"{ptype.name}: {ptype.description}")
                with formatter.indentation():
                    formatter.write_dl([(o.flag, o.help) for o in ptype.options if o.flag])


class BenchGroup(click.Group):
    """Adds commands that plugins contribute through ``bench_add_commands``."""

    _loaded = False

    def _load_plugin_commands(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        registry = _registry()
        if registry.pm is not None:
            registry.pm.hook.bench_add_commands(cli=self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            self._load_plugin_commands()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        """The one place user errors become exit code 2 and one line."""
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            # click would print usage, a hint and the error on three lines; one is the promise.
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            click.echo(f"bench: error: {' '.join(exc.format_message().split())} (see {where} --help)", err=True)
            ctx.exit(exc.exit_code)
        except Exception as exc:
            if not is_user_error(exc):
                raise
            if ctx.meta.get(VERBOSITY, 0) >= 2:
                traceback.print_exception(exc)
            # one line, whatever the message holds (a path with a newline in it)
            message = str(exc).replace("\r", "\\r").replace("\n", "\\n")
            click.echo(f"bench: error: {message}", err=True)
            ctx.exit(getattr(exc, "exit_code", 2))


@click.group(cls=BenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bench")
@click.option("-v", "--verbose", count=True, expose_value=False, callback=_count_verbose,
              help="More output; -vv shows the traceback of an error.")
def cli() -> None:
    """Scalability benchmarks for Spark Structured Streaming jobs (the Theodolite method).

    For each load, bench finds the least number of Spark instances for which the
    SLOs hold (resource demand), or for each number of instances the greatest load
    (capacity), by running isolated experiments: start the SUT, generate load, sample
    consumer lag, decide with the SLOs (by default the trend of the lag). Start with
    `bench run --plugin uc1`.
    """


@cli.command(cls=RunCommand, epilog=EPILOG)
@click.option("--plugin", "plugin", metavar="NAME",
              help="Use case to benchmark (see `bench plugins`), e.g. uc1, uc2, uc3, uc4, calibrated.")
@click.option("--job", metavar="PATH.py", type=click.Path(dir_okay=False),
              help="Benchmark your own PySpark Structured Streaming script instead of a use case; it reads "
                   "BENCH_BOOTSTRAP_SERVERS, BENCH_INPUT_TOPIC, BENCH_OUTPUT_TOPIC (docs/own-job.md).")
@click.argument("job_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- JOB ARGS]")
@click.option("--record-template", metavar="FILE", type=click.Path(dir_okay=False),
              help="With --job: input records from this JSON template with {key} and {timestamp} placeholders "
                   "(default: UC1's ActivePowerRecord JSON).")
@click.option("--benchmark", "benchmark_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Benchmark YAML (default: the use case's own).")
@click.option("--execution", "execution_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Execution YAML; command-line options override its fields.")
@click.option("--loads", metavar="L1,L2,..|auto",
              help="Load values (e.g. sensors at 1 record/s each). Default (and 'auto'): sized for this machine by "
                   "a short probe of two instances first, kept in exp<id>-sizing.json.")
@click.option("--resources", metavar="R1,R2,..|auto",
              help="Resource values (e.g. Spark instances). Default (and 'auto'): sized by the same probe.")
@click.option("--load-type", metavar="NAME", help="Load type of the benchmark (default: its first).")
@click.option("--resource-type", metavar="NAME", help="Resource type of the benchmark (default: its first).")
@click.option("--load2-type", metavar="NAME",
              help="A second load dimension (another load type of the benchmark): the demand is measured at every "
                   "point of --loads x --loads2 (a grid; demand only).")
@click.option("--loads2", metavar="V1,V2,..", help="Values of the second load dimension (--load2-type).")
@click.option("--cost", metavar="EXPR",
              help="With a second dimension: a cost function over L1 and L2 (the two load values), e.g. L1*L2; "
                   "prints the demand over it and how well the grid collapses onto one curve.")
@click.option("--duration", type=float, metavar="S", help="Seconds of load per repetition.")
@click.option("--warmup", type=float, metavar="S", help="Seconds ignored at the start of each series.")
@click.option("--repetitions", type=int, metavar="N", help="Repetitions per experiment.")
@click.option("--search", metavar="NAME",
              help="Search strategy, a plugin's too (see Search strategies below; default bracket: the heaviest "
                   "load first, and a load between two loads of the same demand takes it without an experiment, "
                   "marked inferred; linear is the reference's walk from the lightest load).")
@click.option("--lower-bound/--no-lower-bound", default=None,
              help="Skip resources below the demand of a smaller load (default on).")
@click.option("--metric", type=click.Choice(["demand", "capacity"]), help="What to find (default demand).")
@click.option("--threshold", type=float, metavar="X",
              help="Threshold of the trend SLOs (those whose type takes_cli_threshold) in records/s (absolute).")
@click.option("--threshold-rel-to-rate", type=float, metavar="X",
              help="Threshold of the trend SLOs (those whose type takes_cli_threshold) as a fraction of the "
                   "load's generated records/s (e.g. 0.01, as the built-in use cases' benchmarks state it; "
                   "UC4's default execution judges at 0.05).")
@click.option("--threshold-rel-to-load", type=float, metavar="X",
              help="Threshold of the trend SLOs (those whose type takes_cli_threshold): X times the load value "
                   "(sensors, window size, ...), as the reference's thresholdRelToLoad.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Plugin parameter (repeatable), e.g. capacity=500, windowSizeMs=60000; "
                   "OBJECT.FIELD=V sets a deployment field, e.g. generator.periodMs=500.")
@click.option("--results", "results_dir", default="results", show_default=True, type=click.Path(file_okay=False),
              help="Folder for result files.")
@click.option("--resume", is_flag=True,
              help="Continue the last run in --results at its first unfinished repetition (experiments that "
                   "ended in error are tried again); refused when the configuration differs.")
@click.option("--retries", type=click.IntRange(0, 20), metavar="N",
              help="Run a repetition again up to N times after a fault (a process or the broker died, a "
                   "generator stalled or fell behind, a Kafka call failed); default 1. Still failing: the "
                   "experiment's outcome is error, it does not pass, and the run goes on.")
@click.option("--early-stop/--no-early-stop", default=None,
              help="End a repetition once the trend of its lag is decided with confidence, and skip repetitions "
                   "that can no longer change the verdict (default on; --no-early-stop runs every repetition "
                   "for its full duration, the reference procedure).")
@click.option("--predict", is_flag=True,
              help="First probe what one instance processes at saturation (one short experiment at the heaviest "
                   "load with the fewest resources), predict each load's demand from it and start the search "
                   "there: the prediction and its neighbour are measured, so the table stays measured; the "
                   "prediction is printed and kept beside it (exp<id>-prediction.json). The default search "
                   "(bracket) starts each walk there; linear and binary are replaced by initial-guess from there "
                   "(the same table on monotone verdicts); not with --search full. A run whose loads are sized "
                   "for the machine predicts from its sizing probe, not from a second one.")
@click.option("--platform", "platform_name", default="embedded", show_default=True,
              help="Where to run (see Platforms below).")
@click.option("--kafka-config", "kafka_config", multiple=True, metavar="KEY=VALUE",
              help="Kafka client security for every client (generator, lag sampler, admin, Spark source and sink), "
                   "in Kafka's property names: security.protocol, sasl.mechanism (PLAIN, SCRAM-SHA-256/512), "
                   "sasl.username, sasl.password, ssl.ca.location, ssl.certificate.location, ssl.key.location. "
                   "Repeatable; secrets never appear in logs or result files.")
@click.option("--kafka-config-file", metavar="FILE", type=click.Path(dir_okay=False),
              help="The same settings as a properties file (KEY=VALUE lines); --kafka-config wins.")
@click.option("--sample-interval", type=float, metavar="S", help="Seconds between SLI samples (default 5).")
@click.option("--early-sample-interval", type=click.FloatRange(min=0), metavar="S",
              help="With early stopping, also sample every S seconds in between, for the early decision of "
                   "SLOs on a trend and of the dropped-records SLO (not stored; verdicts use --sample-interval). "
                   "Default 1; 0 turns it off.")
@click.option("--dry-run", is_flag=True, help="Print the patched deployment of the first experiment and exit.")
@click.option("--expect", metavar="OLD",
              help="Compare the table with OLD (results folder or demand CSV) and exit 3 when the demand rose "
                   "for any load (capacity: fell); see `bench compare`.")
@click.option("--log-format", type=click.Choice(["console", "json"]), default="console", show_default=True)
@click.option("-v", "--verbose", count=True, callback=_count_verbose,
              help="More log output; -vv shows the traceback of an error.")
def run(**opts: Any) -> None:
    """Run a scalability benchmark and print the demand (or capacity) table.

    Without files, the use case's own benchmark and laptop-sized defaults are used.
    Results (per-SLI CSVs, demand/capacity CSV, JSON, PNG plots) go to --results as
    each repetition finishes; the table is exp<id>_demand.provisional.csv until the run
    completes.

    \b
    Exit codes:
      0  the run completed and every experiment got a verdict (pass or fail)
      1  the run completed, but some experiments ended in error (see the result JSON)
      2  bad input (options, files, environment): one line says which
      3  with --expect: the demand rose for a load (capacity: fell)
    """
    configure_logging(opts["log_format"], opts["verbose"])
    from bench.cli.launch import prepare_run, run_benchmark

    expected = expected_grid = None
    decreasing: bool | None = None  # the run's load direction, which --expect's table is read with
    if opts.get("expect"):
        from bench.analysis import inputs
        from bench.analysis.compare import read_table
        from bench.results.grid import grid_file, read_grid

        inputs.check_source(opts["expect"])  # before the run: a wrong path or a broken table fails now
        found = grid_file(opts["expect"])
        if found is not None:  # a grid is expected point by point
            expected_grid = read_grid(found)
        else:
            expected = read_table(opts["expect"])
            inputs.check_table(opts["expect"], expected)

    try:
        registry = _registry()
        prepared = prepare_run(registry, {**opts, "expected_metric": expected.metric if expected else None})
        if expected is not None:  # refused before anything starts when the tables cannot be compared
            from bench.analysis.compare import check_expectation
            from bench.config.model import decreasing_load

            decreasing = decreasing_load(prepared.benchmark, prepared.execution)
            check_expectation(expected, prepared.execution.execution.metric, decreasing)
        if opts["dry_run"]:
            from bench.cli.launch import dry_run

            click.echo(dry_run(registry, prepared, opts))
            return
        from bench.cli.grid import check_expected, grid_done, is_grid, run_grid_benchmark
        from bench.runtime.host.allocator import steady_heap

        steady_heap()  # a long run's large transient buffers go back to the system

        check_expected(prepared, opts, expected_grid)
        if is_grid(prepared):  # two load dimensions: a grid (bench.search.grid)
            with sigterm_as_ctrl_c():
                from bench.cli.output import Progress

                grid_outcome = asyncio.run(run_grid_benchmark(registry, prepared, opts, Progress()))
            sys.exit(grid_done(grid_outcome, opts, expected_grid))
        with sigterm_as_ctrl_c():
            outcome = asyncio.run(run_benchmark(registry, prepared, opts))
    except KeyboardInterrupt:
        click.echo("bench: interrupted; every finished experiment is in the results folder", err=True)
        sys.exit(130)
    from bench.cli.output import print_table

    print_table(outcome)
    code = 0
    if expected is not None:
        from bench.analysis.compare import expect

        code, text = expect(expected, outcome.metric, outcome.table, opts["expect"], notes=outcome.notes,
                            decreasing=decreasing)
        click.echo(text)
    if outcome.errors:  # a table with gaps: a regression found in it is less certain than the gaps
        click.echo(f"bench: {len(outcome.errors)} experiment(s) ended in error; `--resume` tries them again",
                   err=True)
        code = 1
    if code:
        sys.exit(code)


@cli.command()
@click.option("--verbose", "-v", "verbose", is_flag=True,
              help="Also every registered use case, generator, SLO type, patcher, search strategy, platform and "
                   "load type with its description.")
def plugins(verbose: bool) -> None:
    """List plugins: distribution, version, and what each registers."""
    registry = _registry()
    for info in registry.plugins:
        origin = "built-in" if info.builtin else f"{info.distribution} {info.version}"
        if info.error:
            click.echo(f"{info.name:14} {origin:32} BROKEN: {info.error}")
            continue
        provides = "; ".join(f"{kind.replace('_', ' ')}: {', '.join(names)}" for kind, names in info.provides.items())
        click.echo(f"{info.name:14} {origin:32} {provides or '(hooks only)'}")
        if verbose:
            from bench.cli.plugin_help import provided_lines

            for line in provided_lines(registry, info):
                click.echo(f"    {line}")


@cli.command("new-plugin")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False), metavar="PATH",
              help="Folder to write the plugin to (default: ./bench-NAME); must be empty or new.")
def new_plugin(name: str, directory: str | None) -> None:
    """Write a working plugin package NAME: a use case with its own generator and PySpark
    query, an SLO type, a load type with its patcher, tests and a pyproject.toml.

    \b
    Then:  pip install -e PATH && (cd PATH && pytest) && bench run --plugin NAME --loads 100 --resources 1
    """
    from bench.cli.new_plugin import write_plugin

    target = Path(directory) if directory else Path(f"bench-{name}")
    files = write_plugin(name, target)
    click.echo(f"wrote {len(files)} files to {target}/:")
    for path in files:
        click.echo(f"  {path.relative_to(target)}")
    click.echo(f"next: pip install -e {target} && (cd {target} && pytest) && bench run --plugin {name} --help")


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--benchmark", "benchmark_file", type=click.Path(exists=True, dir_okay=False),
              help="The benchmark an execution refers to (default: the use case's own).")
def validate(file: str, benchmark_file: str | None) -> None:
    """Check a benchmark or execution YAML file without running anything."""
    from bench.cli.launch import validate_file

    try:
        message = validate_file(_registry(), Path(file), Path(benchmark_file) if benchmark_file else None)
    except UserError as exc:
        if str(file) in str(exc):  # the message names the file already
            raise
        raise UserError(f"{file}: {exc}") from exc
    click.echo(message)


# bench analyze / report / compare / stages, through the same hook a plugin uses to add commands.
_analysis_commands.bench_add_commands(cli)
_stage_commands.bench_add_commands(cli)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
