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
    from bench.errors import UserError
    from bench.plugins import load_plugins
    from bench.runtime.kafka.broker import running_broker
    from bench.stages.measure import format_table
    from bench.stages.pipeline import STAGES, StageRun, run_stages

    registry = load_plugins()
    if plugin not in registry.use_cases:
        raise UserError(f"--plugin {plugin}: no such use case (known: {', '.join(sorted(registry.use_cases))})")
    use_case = registry.use_cases[plugin]
    params: dict[str, object] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"--set {item}: expected KEY=VALUE")
        params[key] = value
    for spec in use_case.params or ():
        if spec.name in params:
            try:
                spec.check(params[spec.name])
            except ValueError as exc:
                raise UserError(f"--set {spec.name}={params[spec.name]}: {exc}") from None

    def run(bootstrap: str) -> StageRun:
        return run_stages(registry, use_case, bootstrap=bootstrap, sensors=sensors, duration=duration,
                          warmup=warmup, params=params, instances=instances, drain=drain,
                          progress=lambda m: click.echo(m, err=True))

    if bootstrap_servers:
        result = run(bootstrap_servers)
    else:
        with running_broker() as broker:
            result = run(broker.bootstrap_servers)
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


COMMANDS = (stages,)


@hookimpl
def bench_add_commands(cli: click.Group) -> None:
    for command in COMMANDS:
        cli.add_command(command)
