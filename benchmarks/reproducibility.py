"""Reproducibility: the same benchmark run N times, and whether the demand tables agree.

Each use case given (default UC1 and UC2) runs ``--runs`` times (default 3) at laptop
scale (quarter-core instances, ``sut.cpuPerInstance=0.25``) with bench's default
procedure, through the same code path as ``bench run``, the runs of the use cases
interleaved. Printed per use case:

* the agreement rate: the share of table entries (loads) on which every run gave the
  same demand;
* the entries that differ, and whether they are exactly those the verdict confidence
  flags (an experiment at that load marked ``unstable``, or ended in error, in any
  run): an unflagged difference is a reproducibility problem of bench, a flagged one
  is the method's noise said out loud;
* the differing entries no run flagged: the column to read first (a flagged entry
  that agreed anyway makes "differing = flagged" say "no: flagged, agreed": only
  caution; "NO" is kept for a difference no run flagged).

The last lines are a Markdown table to record in docs/measurements-log.md, with the date,
commit and the load average before and after each run.

    .venv/bin/python benchmarks/reproducibility.py --quick           # UC1, UC2: 2 runs of 1 experiment pair
    .venv/bin/python benchmarks/reproducibility.py                   # 3 runs each, 300 s, 3 repetitions
    .venv/bin/python benchmarks/reproducibility.py --plugin uc1 --runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from _common import banner, commit, experiment_defaults, grid, load_averages, load_note


@dataclass
class Run:
    table: dict[float, float | None]
    #: loads with an experiment the verdict confidence flags (unstable) or without a verdict (error)
    flagged: set[float]
    seconds: float
    before: str
    after: str


def agreement(runs: Sequence[Run]) -> tuple[float, list[float], bool, set[float]]:
    """(agreement rate, differing loads, whether those are exactly the flagged ones, flagged loads)."""
    keys = sorted({k for r in runs for k in r.table})
    differing = [k for k in keys if len({r.table.get(k) for r in runs}) > 1]
    flagged = set().union(*(r.flagged for r in runs)) if runs else set()
    rate = (len(keys) - len(differing)) / len(keys) if keys else float("nan")
    return rate, differing, set(differing) == flagged, flagged


def never_flagged(differing: Sequence[float], flagged: set[float]) -> list[float]:
    """The differing loads no run flagged: bench's own reproducibility problems.

    A flagged load that agreed anyway makes "differing = flagged" false, but is only caution.
    """
    return [k for k in differing if k not in flagged]


def flags_cell(exact: bool, missed: Sequence[float]) -> str:
    """The "differing = flagged" cell: "NO" only for a difference no run flagged, which is
    bench's problem; a flagged entry that agreed anyway is caution, not an alarm."""
    return "yes" if exact else "NO" if missed else "no: flagged, agreed"


def options(args: argparse.Namespace, registry: Any, plugin: str, results: Path, execution_file: Path
            ) -> dict[str, Any]:
    loads, resources = grid(registry, plugin, args.quick)
    return {
        "plugin": plugin,
        "execution_file": str(execution_file),
        "loads": ",".join(f"{x:g}" for x in (args.loads or loads)),
        "resources": ",".join(f"{x:g}" for x in (args.resources or resources)),
        "duration": args.duration,
        "warmup": args.warmup,
        "repetitions": args.repetitions,
        "sets": (f"sut.cpuPerInstance={args.cpu_per_instance}",) if plugin != "calibrated" else (),
        "results_dir": str(results),
        "platform_name": "embedded",
    }


async def one_run(registry: Any, opts: dict[str, Any]) -> Run:
    from bench.cli.launch import prepare_run, run_benchmark

    prepared = prepare_run(registry, opts)
    before = load_note()
    started = time.monotonic()
    outcome = await run_benchmark(registry, prepared, opts)
    flagged = {r.load for r in outcome.records if r.unstable or r.outcome == "error"}
    return Run(dict(outcome.table), flagged, time.monotonic() - started, before, load_note())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small grid, 60-s experiments, 1 repetition, 2 runs")
    parser.add_argument("--plugin", default="uc1,uc2", help="use cases, comma-separated (default uc1,uc2)")
    parser.add_argument("--runs", type=int, default=None, help="runs per use case (default 3; quick 2)")
    parser.add_argument("--loads", type=lambda s: [float(x) for x in s.split(",")], default=None)
    parser.add_argument("--resources", type=lambda s: [float(x) for x in s.split(",")], default=None)
    parser.add_argument("--cpu-per-instance", type=float, default=0.25)
    parser.add_argument("--duration", type=float, default=None, help="default 300 (quick 60)")
    parser.add_argument("--warmup", type=float, default=None, help="default 60 (quick 15)")
    parser.add_argument("--interval", type=float, default=None, help="sample interval; default 5 (quick 2)")
    parser.add_argument("--repetitions", type=int, default=None, help="default 3 (quick 1)")
    args = parser.parse_args()
    plugins = [p.strip() for p in args.plugin.split(",") if p.strip()]
    args.runs = args.runs or (2 if args.quick else 3)
    experiment_defaults(args)

    from bench.cli.logs import configure_logging
    from bench.plugins import load_plugins

    configure_logging("console", 0)
    registry = load_plugins()
    banner(f"reproducibility, {', '.join(plugins)}, {args.runs} runs each; commit {commit()}")
    runs: dict[str, list[Run]] = {p: [] for p in plugins}
    with tempfile.TemporaryDirectory(prefix="bench-repro-") as tmp:
        execution_file = Path(tmp, "execution.yaml")
        execution_file.write_text(yaml.safe_dump({"execution": {"sampleInterval": args.interval}}))
        for i in range(args.runs):
            for plugin in plugins:
                opts = options(args, registry, plugin, Path(tmp, f"{plugin}-{i}"), execution_file)
                run = asyncio.run(one_run(registry, opts))
                runs[plugin].append(run)
                print(f"run {i + 1} {plugin}: {run.seconds:7.1f} s, table {run.table}, flagged loads "
                      f"{sorted(run.flagged) or 'none'} ({run.before} before, {run.after} after)", flush=True)
    stamp = time.strftime("%Y-%m-%d")
    print()
    print(f"{stamp}, commit {commit()}, `benchmarks/reproducibility.py {' '.join(sys.argv[1:])}`:")
    print()
    print("| use case | runs | entries | agreement rate | differing entries | flagged unstable | differing = flagged "
          "| differing, never flagged | load average before / after each run |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    unexplained = False
    for plugin, done in runs.items():
        rate, differing, exact, flagged = agreement(done)
        worst = min(worst, rate)
        loads = load_averages(done)
        entries = len({k for r in done for k in r.table})
        missed = never_flagged(differing, flagged)
        unexplained = unexplained or bool(missed)
        unflagged = ", ".join(f"{k:g}" for k in missed) or "none"
        same = flags_cell(exact, missed)
        print(f"| {plugin} | {len(done)} | {entries} | **{rate:.0%}** | {', '.join(f'{k:g}' for k in differing) or '-'}"
              f" | {', '.join(f'{k:g}' for k in sorted(flagged)) or '-'} | {same}"
              f" | {unflagged} | {loads} |")
    print(f"lowest agreement rate: {worst:.0%}; "
          + ("a differing entry no run flagged unstable" if unexplained else
             "every differing entry flagged unstable by a run" if worst < 1.0 else "every table the same"))
    # the bar: the same table, or differences exactly where the verdict confidence
    # flagged an entry unstable; only a difference nothing flagged fails the script
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
