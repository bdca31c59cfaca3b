"""``bench stages --plugin NAME``: the stage-wise latency benchmark as a CLI command.

Added through the ``bench_add_commands`` hook like the analysis commands, so the core
CLI module does not grow; Spark and matplotlib are imported only when it runs.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import click

from bench.hookspecs import hookimpl


def plot(run_doc: dict[str, Any], path: Path) -> Path:
    """Median per stage as bars, p95 and p99 as markers (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(run_doc["stages"])
    names = [str(r["stage"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    xs = range(len(rows))
    ax.bar(xs, [float(r["median"]) for r in rows], color="#4878a8", label="median")
    ax.scatter(xs, [float(r["p95"]) for r in rows], marker="_", s=400, color="#d08020", label="p95", zorder=3)
    ax.scatter(xs, [float(r["p99"]) for r in rows], marker="_", s=400, color="#b03030", label="p99", zorder=3)
    ax.set_xticks(list(xs), names, rotation=15)
    ax.set_ylabel("latency (ms, broker clock)")
    ax.set_title(f"bench stages: {run_doc['useCase']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


@click.command()
@click.option("--plugin", "plugin", required=True, metavar="NAME", help="Use case whose pipeline to split.")
@click.option("--sensors", type=click.IntRange(min=1), default=100, show_default=True,
              help="Keys of the generator, each sending 1 record/s.")
@click.option("--duration", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds of load.")
@click.option("--warmup", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Seconds of input at the start whose results are not counted.")
@click.option("--drain", type=click.FloatRange(min=0), default=15.0, show_default=True,
              help="Seconds the queries keep running after the load, for the last windows.")
@click.option("--instances", type=click.IntRange(min=1), default=2, show_default=True,
              help="Spark task slots (local[N]).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Use-case parameter (repeatable).")
@click.option("--bootstrap-servers", metavar="HOST:PORT", help="Use this Kafka instead of the embedded broker.")
@click.option("--results", type=click.Path(file_okay=False), default="results", show_default=True,
              help="Folder for stages-<plugin>-<time>.json and .png.")
def stages(plugin: str, sensors: int, duration: float, warmup: float, drain: float, instances: int,
           sets: tuple[str, ...], bootstrap_servers: str | None, results: str) -> None:
    """Stage-wise latency of a use case's pipeline (baseline, ingest+parse, window aggregation, output).

    Each stage is its own streaming query writing to a topic with LogAppendTime; a
    stage's latency is its output's append time minus its input's append time. Prints
    median, p95 and p99 per stage and end to end, and writes a JSON and a PNG plot.
    """
    from bench.plugins import load_plugins
    from bench.runtime.kafka.broker import running_broker
    from bench.stages.measure import format_table
    from bench.stages.pipeline import STAGES, StageRun, run_stages

    registry = load_plugins()
    use_case, params = check_inputs(registry, plugin, sensors, duration, warmup, drain, instances, sets,
                                    bootstrap_servers, Path(results))

    def run(bootstrap: str) -> StageRun:
        return run_stages(registry, use_case, bootstrap=bootstrap, sensors=sensors, duration=duration,
                          warmup=warmup, params=params, instances=instances, drain=drain,
                          progress=lambda m: click.echo(m, err=True))

    try:
        if bootstrap_servers:
            result = run(bootstrap_servers)
        else:
            with running_broker() as broker:
                result = run(broker.bootstrap_servers)
    except Exception as exc:
        _kafka_error_as_one_line(exc)
        raise
    doc = result.as_dict()
    click.echo(format_table(result.rows))
    total = float(doc["sumOfStageMedians"])
    e2e = result.row("end-to-end").median
    click.echo(f"sum of stage medians ({' + '.join(STAGES)}): {total:.0f} ms; end-to-end median {e2e:.0f} ms"
               if not math.isnan(total) else "some stage produced no records after the warm-up")
    folder = Path(results)
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"stages-{plugin}-{time.strftime('%Y%m%dT%H%M%S')}"
    stem.with_suffix(".json").write_text(json.dumps(doc, indent=2))
    png = plot(doc, stem.with_suffix(".png"))
    click.echo(f"written: {stem.with_suffix('.json')}, {png}")


def check_inputs(registry: Any, plugin: str, sensors: int, duration: float, warmup: float, drain: float,
                 instances: int, sets: tuple[str, ...], bootstrap_servers: str | None,
                 results: Path) -> tuple[Any, dict[str, Any]]:
    """Everything ``bench stages`` is given, checked as ``bench run`` checks its own,
    before a broker or Spark starts: the use case and its topology, ``--set`` keys and
    values, the numbers against :mod:`bench.config.bounds`, the Kafka address (and one probe),
    the results folder."""
    from bench.cli.checks import check_results_dir, probe_kafka
    from bench.config import bounds
    from bench.config.options import parse_sets
    from bench.config.params import declared_params, validate_params
    from bench.errors import UserError

    if plugin not in registry.use_cases:
        raise UserError(f"--plugin {plugin}: no such use case (known: {', '.join(sorted(registry.use_cases))})")
    use_case = registry.use_cases[plugin]
    _check_topology(use_case)
    params = parse_sets(sets)
    declared, complete = declared_params(use_case, registry)
    validate_params(params, declared, complete, "--set")
    bounds.check_params(declared, {"--set": params})
    for option, value, bound in (("--duration", duration, bounds.DURATION), ("--warmup", warmup, bounds.WARMUP),
                                 ("--drain", drain, bounds.DELAY), ("--instances", instances,
                                                                    bounds.RESOURCE_VALUE["Instances"]),
                                 ("--sensors", sensors, bounds.OBJECT_FIELDS["BenchGenerator"]["sensors"])):
        bounds.check_value(bound, value, option)
    if warmup >= duration:
        raise UserError(f"--warmup {warmup:g}: must be shorter than --duration ({duration:g} s); no record "
                        "would be counted")
    bounds.check_host_slots([{"kind": "BenchSut", "spec": {"replicas": instances}}], "--instances")
    if bootstrap_servers:
        probe_kafka(bootstrap_servers)
    check_results_dir(results)
    return use_case, params


class _TopologyProbe(Exception):
    """Raised by the probe context the moment a topology touches it: a real topology."""


class _ProbeContext:
    def __getattr__(self, name: str) -> Any:
        raise _TopologyProbe(name)


def _check_topology(use_case: Any) -> None:
    """A use case whose SUT is not a Spark topology of its own (none, or a user's script)
    says so when asked to build one; asked with a context that stops any real topology
    at its first touch, it tells here instead of after the broker started."""
    from bench.errors import UserError

    if use_case.topology is None:
        raise UserError(f"--plugin {use_case.name}: the use case has no Spark topology; bench stages splits "
                        "Spark pipelines")
    try:
        use_case.topology(_ProbeContext())
    except _TopologyProbe:
        return
    except UserError as exc:
        raise UserError(f"--plugin {use_case.name}: bench stages cannot split it: {exc}") from None
    except Exception:  # noqa: BLE001 - a topology failing on a probe context is judged when it runs
        return


def _kafka_error_as_one_line(exc: BaseException) -> None:
    """A Kafka client that cannot reach the cluster is the user's to fix: one line."""
    from bench.errors import UserError

    module = type(exc).__module__
    if module.startswith(("aiokafka", "kafka", "confluent_kafka")):
        text = " ".join(str(exc).split())
        name = type(exc).__name__
        raise UserError(f"Kafka: {text if text.startswith(name) else f'{name}: {text}'}") from None


COMMANDS = (stages,)


@hookimpl
def bench_add_commands(cli: click.Group) -> None:
    for command in COMMANDS:
        cli.add_command(command)
