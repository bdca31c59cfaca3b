"""Time to a verdict: whole calibrated runs with early stopping vs the reference procedure.

Both procedures run the same search (linear + lower bound, the published default and
ours) on the built-in ``calibrated`` use case, through the same code path as
``bench run`` (``bench.launch.prepare_run`` + ``run_benchmark``), each with its own
embedded broker and results folder. The reference samples for the fixed ``duration``;
ours ends a repetition as soon as ``bench.early_stop`` has decided every SLO. The two
alternate within each round (order flipped every round) so drifting machine load hits
both alike. Demand tables must be identical, and equal ceil(load / capacity).

    .venv/bin/python benchmarks/time_to_verdict.py            # 5 rounds, ~2.5 h
    .venv/bin/python benchmarks/time_to_verdict.py --rounds 1 # one round, ~27 min
    .venv/bin/python benchmarks/time_to_verdict.py --quick    # short durations, ~10 min

``--plugin uc3`` (or any use case) runs the same comparison on real Spark: there is
no known capacity, so each round's early-stopping demand must equal its reference's.

    .venv/bin/python benchmarks/time_to_verdict.py --plugin uc3 --loads 1000,4000 \
        --resources 1,2 --duration 300 --warmup 60 --interval 5 --rounds 1   # ~25 min
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _common import banner, load_note, median, spread


def options(args: argparse.Namespace, early: bool, results: Path, execution_file: Path) -> dict[str, Any]:
    return {
        "plugin": args.plugin,
        "execution_file": str(execution_file),
        "loads": ",".join(str(x) for x in args.loads),
        "resources": ",".join(str(x) for x in args.resources),
        "duration": args.duration,
        "warmup": args.warmup,
        "repetitions": args.repetitions,
        "search": "linear",
        "lower_bound": True,
        "early_stop": early,
        "sets": (f"capacity={args.capacity}",) if args.plugin == "calibrated" else (),
        "results_dir": str(results),
        "platform_name": "embedded",
    }


async def one_run(registry: Any, opts: dict[str, Any]) -> tuple[float, dict[float, float | None], list[Any]]:
    from bench.launch import prepare_run, run_benchmark

    prepared = prepare_run(registry, opts)
    started = time.monotonic()
    outcome = await run_benchmark(registry, prepared, opts)
    return time.monotonic() - started, dict(outcome.table), list(outcome.records)


def describe(record: Any) -> str:
    """One experiment: where, verdict, how long, and each SLO's figures."""
    slos = "; ".join(
        f"{name}: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(d.items())
                                if not isinstance(v, list | dict))
        for name, d in record.slos.items()
    )
    return (f"load {record.load:g} x {record.resources:g}: {'pass' if record.passed else 'fail'}"
            f"{'' if record.valid else ' (INVALID)'} after {record.finished - record.started:.0f} s"
            f"{' (early)' if record.early_stopped else ''} [{slos}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short durations, 1 round")
    parser.add_argument("--plugin", default="calibrated", help="use case (default calibrated: known demand)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (reference + early each); default 5")
    parser.add_argument("--loads", type=lambda s: [float(x) for x in s.split(",")], default=[1500.0, 2500.0, 3500.0])
    parser.add_argument("--resources", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 2.0, 3.0, 4.0])
    parser.add_argument("--capacity", type=float, default=1000.0)
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--warmup", type=float, default=None)
    parser.add_argument("--interval", type=float, default=2.0, help="lag sample interval (s), both procedures")
    parser.add_argument("--repetitions", type=int, default=1)
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.duration = args.duration or (60.0 if args.quick else 180.0)
    args.warmup = args.warmup if args.warmup is not None else (15.0 if args.quick else 30.0)

    from bench.logs import configure_logging
    from bench.plugins import load_plugins

    configure_logging("console", 0)
    registry = load_plugins()
    known: dict[float, float | None] | None = None  # the demand both must find, if known
    if args.plugin == "calibrated":
        known = {load: float(math.ceil(load / args.capacity)) for load in args.loads}
        known = {k: (v if v in args.resources else None) for k, v in known.items()}
    banner(f"time to verdict, use case {args.plugin}")
    print(f"loads {args.loads} x resources {args.resources}, capacity {args.capacity:g}/s, duration "
          f"{args.duration:g} s, warm-up {args.warmup:g} s, sample every {args.interval:g} s, "
          f"{args.repetitions} repetition(s), linear search + lower bound; expected demand "
          f"{known if known is not None else 'that of the reference run in the same round'}", flush=True)
    times: dict[str, list[float]] = {"reference": [], "early": []}
    same = True
    with tempfile.TemporaryDirectory(prefix="bench-ttv-") as tmp:
        execution_file = Path(tmp, "execution.yaml")
        execution_file.write_text(yaml.safe_dump({"execution": {"sampleInterval": args.interval}}))
        for rnd in range(args.rounds):
            order = ["reference", "early"] if rnd % 2 == 0 else ["early", "reference"]
            tables: dict[str, dict[float, float | None]] = {}
            for mode in order:
                opts = options(args, mode == "early", Path(tmp, f"{mode}-{rnd}"), execution_file)
                seconds, table, records = asyncio.run(one_run(registry, opts))
                times[mode].append(seconds)
                tables[mode] = table
                expected = known if known is not None else tables.get("reference" if mode == "early" else "early")
                ok = expected is None or table == expected
                same = same and ok
                print(f"round {rnd + 1} {mode:9}: {seconds:7.1f} s, {len(records)} experiments, demand {table}"
                      f"{'' if ok else '  << DIFFERS from expected ' + str(expected)}  ({load_note()})", flush=True)
                for record in records:
                    print(f"    {describe(record)}", flush=True)
    ref, early = median(times["reference"]), median(times["early"])
    print(f"reference (fixed {args.duration:g} s): {spread(times['reference'])} s")
    print(f"early stopping:              {spread(times['early'])} s")
    print(f"identical demand in every run: {'yes' if same else 'NO'}")
    print(f"ratio early / reference wall time (median, target <= 0.4): {early / ref:.3f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
