"""Time to a verdict: bench's default procedure against the reference procedure, per use case.

For each use case given (``--plugin calibrated,uc1,uc2,uc3,uc4`` or ``--plugin all``) at
laptop scale (quarter-core SUT instances, ``sut.cpuPerInstance=0.25``, as the main job;
the calibrated use case simulates its capacity and takes no CPU limit), two procedures
run the same loads and resources, through the same code path as ``bench run``
(``bench.cli.launch.prepare_run`` + ``run_benchmark``), each with its own embedded broker
and results folder:

* reference: no early stop, every repetition for its full duration, linear search with
  the lower-bound restriction, 3 repetitions (``bench run --no-early-stop --search
  linear --lower-bound --repetitions 3``);
* bench's default: the same options otherwise, early stopping on (within and across
  repetitions), the default search.

They alternate within each round (order flipped every round) so drifting machine load
hits both alike. Every experiment both measured is compared verdict by verdict; each
one that differs is printed with both sides' SLO figures (the reason). ``--predict``
adds a third procedure, bench's default with ``--predict``, and reports the time the
prediction saved against bench's default and how often it was right.

The last lines are Markdown tables to record in docs/measurements-log.md, with the date,
commit and the load average before and after each run.

    .venv/bin/python benchmarks/time_to_verdict.py --quick                    # calibrated, ~10 min
    .venv/bin/python benchmarks/time_to_verdict.py --quick --plugin all       # every use case, short
    .venv/bin/python benchmarks/time_to_verdict.py --plugin all --rounds 3    # the full comparison, hours
    .venv/bin/python benchmarks/time_to_verdict.py --plugin calibrated --predict
    # bench's default only, against an earlier reference run of 2 experiments in 2,061.4 s
    .venv/bin/python benchmarks/time_to_verdict.py --plugin uc2 --rounds 1 \
        --reference-seconds 2061.4 --reference-experiments 2
    # keep each run's results folder for bench analyze / bench report afterwards
    .venv/bin/python benchmarks/time_to_verdict.py --plugin uc2 --rounds 1 --keep /tmp/ttv-uc2
    # the prediction on a Spark use case: bench's default against itself with --predict
    .venv/bin/python benchmarks/time_to_verdict.py --plugin uc4 --loads 7 --resources 1,2,3,4,5,6 \
        --predict --no-reference --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from _common import USE_CASES, banner, commit, experiment_defaults, grid, load_averages, load_note, median, spread

MODES = ("reference", "default", "predict")


@dataclass
class Run:
    """One procedure's whole run of one use case."""

    mode: str
    seconds: float
    table: dict[float, float | None]
    records: list[Any]
    before: str
    after: str
    prediction: Any = None
    #: table entries no experiment measured (the default search's inferred ones)
    inferred: int = 0


@dataclass
class UseCaseResult:
    plugin: str
    runs: dict[str, list[Run]] = field(default_factory=lambda: {m: [] for m in MODES})
    compared: int = 0
    differing: list[str] = field(default_factory=list)
    tables_same: int = 0
    pairs: int = 0


def options(args: argparse.Namespace, plugin: str, mode: str, results: Path, execution_file: Path,
            loads: list[float], resources: list[float]) -> dict[str, Any]:
    sets: tuple[str, ...] = (f"capacity={args.capacity}",) if plugin == "calibrated" else (
        f"sut.cpuPerInstance={args.cpu_per_instance}",)
    reference = mode == "reference"
    return {
        "plugin": plugin,
        "execution_file": str(execution_file),
        "loads": ",".join(f"{x:g}" for x in loads),
        "resources": ",".join(f"{x:g}" for x in resources),
        "duration": args.duration,
        "warmup": args.warmup,
        "repetitions": args.repetitions,
        "search": "linear" if reference else None,
        "lower_bound": True if reference else None,
        "early_stop": not reference,
        "predict": mode == "predict",
        "sets": sets,
        "spark_conf": tuple(args.conf),
        "results_dir": str(results),
        "platform_name": "embedded",
    }


async def one_run(registry: Any, opts: dict[str, Any], mode: str) -> Run:
    from bench.cli.launch import prepare_run, run_benchmark

    prepared = prepare_run(registry, opts)
    before = load_note()
    started = time.monotonic()
    outcome = await run_benchmark(registry, prepared, opts)
    inferred = sum("inferred" in note.split() for note in (outcome.notes or {}).values())
    return Run(mode, time.monotonic() - started, dict(outcome.table), list(outcome.records), before, load_note(),
               outcome.prediction, inferred)


def describe(record: Any) -> str:
    """One experiment: where, verdict, how long, and each SLO's figures."""
    slos = "; ".join(
        f"{name}: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(d.items())
                                if not isinstance(v, list | dict))
        for name, d in record.slos.items()
    )
    return (f"load {record.load:g} x {record.resources:g}: {record.outcome}"
            f"{'' if record.valid else ' (INVALID)'} after {record.finished - record.started:.0f} s"
            f"{' (early)' if record.early_stopped else ''}{unstable_note(record)} [{slos}]")


def unstable_note(record: Any) -> str:
    """Which confidence rule flagged the verdict: "unstable" alone cannot tell a
    disagreement between repetitions from a margin inside the noise, and a paired
    round's temporary results, which could, are gone when the script ends."""
    if not record.unstable:
        return ""
    from bench.analysis.confidence import reasons_of

    reasons = [f"{name}: {words}" for name, d in sorted(record.slos.items())
               if isinstance(d.get("confidence"), dict) for words in reasons_of(d["confidence"])]
    return f" (unstable: {'; '.join(reasons)})" if reasons else " (unstable)"


def compare(result: UseCaseResult, ours: Run, reference: Run, label: str) -> None:
    """Every experiment both measured, verdict by verdict; the ones that differ, with both sides' figures."""
    by_key = {(r.load, r.resources): r for r in reference.records}
    for record in ours.records:
        other = by_key.get((record.load, record.resources))
        if other is None:
            continue
        result.compared += 1
        if record.outcome != other.outcome:
            result.differing.append(f"{label}: {ours.mode}: {describe(record)}\n        reference: {describe(other)}")
    result.pairs += 1
    result.tables_same += ours.table == reference.table


def unpaired_reference(seconds: float, experiments: int | None, ours: Run) -> Run:
    """The reference side of an unpaired row (``--reference-seconds``). Without the earlier
    run's experiment count the ratio compares whole runs, which is different work whenever
    bench's default measured other experiments (a verdict that differs moves the search);
    with it, the reference's fixed length per experiment times the experiments measured."""
    if not experiments or experiments == len(ours.records):
        return Run("reference", seconds, {}, [], "an earlier run", "(not paired)")
    per = seconds / experiments
    return Run("reference", per * len(ours.records), {}, [], "an earlier run",
               f"(not paired; estimated: {len(ours.records)} experiments x {per:,.1f} s, the earlier run's "
               f"{seconds:,.1f} s over its {experiments})")


def table_line(plugin: str, result: UseCaseResult) -> str:
    ref = [r.seconds for r in result.runs["reference"]]
    ours = [r.seconds for r in result.runs["default"]]
    loads = load_averages(result.runs["reference"] + result.runs["default"])
    ratio = median(ours) / median(ref) if ref and ours else math.nan
    return (f"| {plugin} | {median(ref):,.1f} s | {median(ours):,.1f} s | **{ratio:.3f}** | {result.compared} | "
            f"{len(result.differing)} | {result.tables_same} of {result.pairs} | {loads} |")


def predict_line(plugin: str, result: UseCaseResult) -> str:
    base = [r.seconds for r in result.runs["default"]]
    pred = result.runs["predict"]
    hits = [h for r in pred if r.prediction is not None for h in r.prediction.hits.values()]
    saved = 1.0 - median([r.seconds for r in pred]) / median(base) if base and pred else math.nan
    same = sum(p.table == d.table for p, d in zip(pred, result.runs["default"], strict=False))
    return (f"| {plugin} | {median(base):,.1f} s | {median([r.seconds for r in pred]):,.1f} s | {saved:.1%} | "
            f"{sum(hits)} of {len(hits)} | {same} of {len(pred)} | {load_averages(result.runs['default'] + pred)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small grid, short durations, 1 repetition, 1 round")
    parser.add_argument("--plugin", default="calibrated",
                        help=f"use cases, comma-separated, or all ({', '.join(USE_CASES)}); default calibrated")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (each procedure once per use case); default 3")
    parser.add_argument("--loads", type=lambda s: [float(x) for x in s.split(",")], default=None,
                        help="loads for every use case given (default: each use case's laptop grid)")
    parser.add_argument("--resources", type=lambda s: [float(x) for x in s.split(",")], default=None)
    parser.add_argument("--capacity", type=float, default=1000.0, help="calibrated: records/s per instance")
    parser.add_argument("--cpu-per-instance", type=float, default=0.25, help="Spark use cases: cores per instance")
    parser.add_argument("--duration", type=float, default=None, help="default 300 (quick: 60)")
    parser.add_argument("--warmup", type=float, default=None, help="default 60 (quick: 15)")
    parser.add_argument("--interval", type=float, default=None, help="SLI sample interval (s); default 5 (quick 2)")
    parser.add_argument("--repetitions", type=int, default=None, help="default 3 (quick: 1)")
    parser.add_argument("--predict", action="store_true", help="also run bench's default with --predict")
    parser.add_argument("--reference-experiments", type=int, default=None, metavar="K",
                        help="with --reference-seconds: the earlier reference run measured K experiments; the "
                             "ratio then compares with S/K seconds for each experiment bench's default measured, "
                             "as the reference's length per experiment is fixed by its settings")
    parser.add_argument("--reference-seconds", type=float, default=None, metavar="S",
                        help="do not run the reference procedure: its length is fixed by design (no early stop, "
                             "every repetition in full); compare with S, its time in an earlier run of the same "
                             "settings. The table marks the row: not paired, verdicts not compared")
    parser.add_argument("--no-reference", action="store_true",
                        help="with --predict: do not run the reference procedure; only bench's default against "
                             "itself with --predict (the prediction's time saved and hit rate, no ratio)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for every procedure's SUTs, as bench run --conf (repeatable)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep every run's results folder under DIR (DIR/<plugin>-<procedure>-<round>), "
                             "for bench analyze and bench report; by default they go with a temporary folder")
    args = parser.parse_args()
    if args.no_reference and not args.predict:
        parser.error("--no-reference compares bench's default with --predict: give --predict too")
    if args.no_reference and args.reference_seconds is not None:
        parser.error("--no-reference and --reference-seconds: the first runs no reference, the second names one")
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        parser.error(f"--keep {args.keep}: a file, not a folder; name a new or empty folder")
    if args.keep is not None and args.keep.is_dir() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: the folder is not empty; name a new or empty one")
    plugins = list(USE_CASES) if args.plugin == "all" else [p.strip() for p in args.plugin.split(",") if p.strip()]
    args.rounds = args.rounds or (1 if args.quick else 3)
    experiment_defaults(args)

    from bench.cli.logs import configure_logging
    from bench.plugins import load_plugins

    configure_logging("console", 0)
    registry = load_plugins()
    unpaired = args.reference_seconds is not None or args.no_reference
    modes = [*([] if unpaired else ["reference"]), "default", *(["predict"] if args.predict else [])]
    banner(f"time to verdict, {', '.join(plugins)}; commit {commit()}")
    print(f"duration {args.duration:g} s, warm-up {args.warmup:g} s, sample every {args.interval:g} s, "
          f"{args.repetitions} repetition(s), {args.rounds} round(s); Spark instances {args.cpu_per_instance:g} "
          f"core; procedures {', '.join(modes)}", flush=True)
    results = {p: UseCaseResult(p) for p in plugins}
    with tempfile.TemporaryDirectory(prefix="bench-ttv-") as scratch:
        tmp = str(args.keep) if args.keep is not None else scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        execution_file = Path(tmp, "execution.yaml")
        execution_file.write_text(yaml.safe_dump({"execution": {"sampleInterval": args.interval}}))
        for rnd in range(args.rounds):
            for plugin in plugins:
                loads, resources = grid(registry, plugin, args.quick)
                loads, resources = args.loads or loads, args.resources or resources
                order = modes if rnd % 2 == 0 else modes[::-1]
                runs: dict[str, Run] = {}
                for mode in order:
                    opts = options(args, plugin, mode, Path(tmp, f"{plugin}-{mode}-{rnd}"), execution_file,
                                   loads, resources)
                    run = asyncio.run(one_run(registry, opts, mode))
                    runs[mode] = run
                    results[plugin].runs[mode].append(run)
                    expected = ""
                    if plugin == "calibrated":
                        demand = {x: float(math.ceil(x / args.capacity)) for x in loads}
                        exact: dict[float, float | None] = {k: (v if v in resources else None)
                                                            for k, v in demand.items()}
                        expected = " = exact" if run.table == exact else f"  << exact demand is {exact}"
                    print(f"round {rnd + 1} {plugin} {mode:9}: {run.seconds:8.1f} s, {len(run.records)} experiments,"
                          f" table {run.table}{expected}, {run.inferred} entries inferred ({run.before} before, "
                          f"{run.after} after)", flush=True)
                    for record in run.records:
                        print(f"    {describe(record)}", flush=True)
                if "reference" in runs:
                    compare(results[plugin], runs["default"], runs["reference"], f"round {rnd + 1} {plugin}")
                elif args.reference_seconds is not None:
                    results[plugin].runs["reference"].append(
                        unpaired_reference(args.reference_seconds, args.reference_experiments, runs["default"]))
    stamp = time.strftime("%Y-%m-%d")
    differing = [d for r in results.values() for d in r.differing]
    if not unpaired:
        print()
        print(f"verdicts that differ (bench's default against the reference), {stamp}, commit {commit()}:")
        for line in differing or ["    none"]:
            print(f"    {line}")
    print()
    print(f"{stamp}, commit {commit()}, `benchmarks/time_to_verdict.py {' '.join(sys.argv[1:])}`:")
    print()
    if not args.no_reference:
        print("| use case | reference (median) | bench's default (median) | ratio | experiments compared | verdicts "
              "differing | same table | load average before / after each run |")
        print("|---|---|---|---|---|---|---|---|")
        for plugin, result in results.items():
            print(table_line(plugin, result))
        print()
    if args.predict:
        print("| use case | default (median) | with --predict (median) | time saved | predictions right | "
              "same table | load average before / after each run |")
        print("|---|---|---|---|---|---|---|")
        for plugin, result in results.items():
            print(predict_line(plugin, result))
    for plugin, result in results.items():
        print(f"{plugin}: reference {spread([r.seconds for r in result.runs['reference']])} s; "
              f"default {spread([r.seconds for r in result.runs['default']])} s")
    if args.keep is not None:
        print(f"every run's results are kept under {args.keep} (bench analyze DIR/<plugin>-<procedure>-<round>)")
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
