"""Observer effect: the SUT's maximum throughput with all of bench's instrumentation and with none.

Per use case (default UC1-UC4) one quarter-core SUT instance (``sut.cpuPerInstance=0.25``)
on Spark's native Kafka connector is driven at a load far above what it can process, so
its micro-batches run back to back at its maximum rate, through the platform exactly as
``bench run`` drives it (``bench.cli.launch.prepare_run``, the embedded platform):

* instrumented: everything bench adds to measure, as in every run: the SUT's readers
  commit their offsets to its consumer group, the lag is sampled, and the latency and
  informational samplers read the output topics and the processes;
* bare: the same deployment with ``BENCH_NO_INSTRUMENTATION=1``
  (``bench.runtime.instrumentation``): no offset commits, no lag, latency or
  informational samplers; only Spark's own progress events are read.

By default a pair's two sides run at the same time on one broker,
each with its own topics, generators, consumer group and CPU limit, sampled in turns
over the same window, so that whatever the machine does in those minutes hits both:
run one after the other (``--no-together``), pairs drifted by 15-30 % between them,
more than any instrumentation costs. The order of the two sides' start alternates
between pairs (A B, B A, ...), and the ratio is taken with the order cancelled
(:func:`order_balanced`): the first run of a pair read more than the second in either
order. The
figure per run is the rows the query's micro-batches read (the cumulative
``spark-input-rows``) between the first and the last batch end after the warm-up
(``spark-batch-end``, exact, rather than the slope of the sampled row
count): records read per second of wall time, so whatever the instrumentation costs
between batches counts. Spark's own
``inputRowsPerSecond`` would not do: a windowed query runs no-data batches (to move
its watermark) that shorten the interval it divides by, and UC2 and UC3 showed
30,000 records/s by it while their rows grew by ~2,500 a second. The ratio instrumented / bare per
use case is the answer (goal >= 0.98), and the instrumented figure is the records/s
one quarter-core instance processes.

Each side also reports where its SUT's CPU went over the counted window (the JVM, the
Python driver, the driver's Kafka client that commits the offsets, the Python workers;
``_sut_cpu``), and per use case the script prints the instrumentation's share of the
SUT's CPU quota (the instrumented driver and Kafka client minus the bare ones) and each
pair's ratio split into the CPU the sides got and the records they read per CPU-second.
Why: pairs of like SUTs spread by ±3 % and more, so a 2 % effect on throughput is not
resolved by pairs, while what the instrumentation spends inside a SUT's quota is read
directly (docs/performance.md, "By accounting").

The last lines are a Markdown table to record in docs/measurements-log.md, with the date,
commit and the load average before and after each run.

With ``--off none`` both sides are instrumented (an A/A run): its ratio is what the
comparison gives where the sides do not differ, the yardstick for an A/B ratio's
distance from 1.

    .venv/bin/python benchmarks/observer_effect.py --quick          # UC1, 1 pair of 75-s runs, ~3 min
    .venv/bin/python benchmarks/observer_effect.py                  # UC1-UC4, 4 pairs of 120-s runs, ~50 min
    # a Spark setting's A/B run, both sides instrumented: C2 (the JVM's default) against C1 only
    .venv/bin/python benchmarks/observer_effect.py --plugin uc3 --off none --bare-conf \\
        spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import dataclasses
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import _sut_cpu
from _common import banner, commit, load_averages, load_note, median
from _pairs import against_goal, balanced_interval, order_balanced

#: loads far above one quarter-core instance's maximum; UC4's load is a nesting level
#: (4^7 = 16,384 sensors, one record per sensor and second). A faster 2-core machine's
#: quarter core kept up with 20,000 UC2 and UC3 records/s and with UC4's 6 levels
#: so these are higher than what the slower machines needed; the run
#: says when a SUT kept up all the same (:data:`KEPT_UP`).
#: UC3's is lower: with both sides at once, two 60,000-records/s
#: generators left each UC3 instance ~2,000 records/s and 3 batch ends per run; at 20,000
#: it read 6,000-8,700 with 11-15 ends (240-s runs), still far from keeping up. On the
#: faster machine above it may keep up; the run then says so and takes no ratio, and
#: ``--load`` raises it.
SATURATING = {"uc1": 80_000.0, "uc2": 60_000.0, "uc3": 20_000.0, "uc4": 7.0}
#: the quick mode's: two 80,000-records/s generators beside both sides' SUTs left each
#: UC1 instance ~900-2,500 records/s and 2-3 batch ends in its 25-s window, too few to
#: measure; lighter generators leave the SUTs the cores
QUICK_LOAD = {"uc1": 20_000.0, "uc2": 20_000.0, "uc3": 20_000.0}
#: the quick mode's per-trigger cap: uncapped, a saturated UC1 batch outlasted a 25-s window
QUICK_CAP = 20_000
#: the quick mode's run and warm-up: with both sides at once, 20 s of warm-up left each
#: UC1 instance in its start (~1,000 records/s, 2 batch ends from 20 to 45 s at a cap of
#: 10,000 or 20,000), where 40 s reached ~11,000
QUICK_SECONDS, QUICK_WARMUP = 75.0, 45.0
#: the per-trigger cap otherwise: batches that end inside the 80-s window several times
#: (4-6 ends per run for UC1 and UC2 at 200,000, UC4 at 50,000, with both sides at once;
#: UC3 11-15 at 100,000 in 240-s runs; uncapped, one UC1 batch outlasted
#: the window)
DEFAULT_CAP = {"uc1": 200_000, "uc2": 200_000, "uc3": 100_000, "uc4": 50_000}
MODES = ("instrumented", "bare")
#: ``--off`` that switches nothing off: an A/A run (both sides instrumented). UC3's A/B
#: ratio of 0.956 (4 pairs, 0.877-1.044) needs the comparison's own spread
#: to be read against: whether two identical sides also differ by 4 %.
AA = "none"
GOAL = 0.98  # issue 26: instrumented / bare
#: what the banner says the bare side is, per ``--off``
BARE_SIDE = {"1": "no instrumentation", AA: "instrumented too (an A/A run)"}
SETTINGS_SIDE = "its own settings (--bare-conf: an A/B run of them)"


@dataclass
class Measured:
    mode: str
    rate: float  # rows read by the query per second of wall time after the warm-up (slope of its row count)
    processed: float  # median processedRowsPerSecond after the warm-up (time inside batches only)
    batches: int  # micro-batches that ended (with rows) after the warm-up
    before: str
    after: str
    written: float = float("nan")  # records/s the generators wrote after the warm-up (slope of their count)
    cpu: dict[str, float] = field(default_factory=dict)  # cores per part of the SUT after the warm-up (_sut_cpu)

    @property
    def kept_up(self) -> bool:
        """The SUT read (nearly) all that was written: its rate is the generators', not its maximum."""
        return math.isfinite(self.written) and math.isfinite(self.rate) and self.rate >= KEPT_UP * self.written


def after_warmup(samples: list[tuple[float, dict[str, float]]], warmup: float, key: str) -> list[float]:
    """The positive values of ``key`` sampled at least ``warmup`` s after the first sample."""
    if not samples:
        return []
    t0 = samples[0][0]
    return [v[key] for t, v in samples if t - t0 >= warmup and v.get(key, 0.0) > 0.0]


def after_warmup_points(samples: list[tuple[float, dict[str, float]]], warmup: float,
                        key: str) -> list[tuple[float, float]]:
    """(time, value) of ``key`` sampled at least ``warmup`` s after the first sample."""
    if not samples:
        return []
    t0 = samples[0][0]
    return [(t, v[key]) for t, v in samples if t - t0 >= warmup and key in v]


#: micro-batch ends in the counted window below which the window holds no measured rate
MIN_BATCH_ENDS = 3
#: a SUT reading this share of what the generators wrote kept up: the load was not
#: saturating, and its figure is the generators' rate, not the SUT's maximum. A machine
#: several times faster per quarter core kept up with loads chosen as saturating on the
#: slower ones (UC2 and UC3 with 20,000 records/s).
KEPT_UP = 0.95


def batch_ends(points: list[tuple[float, float]]) -> int:
    """How many times the cumulative row count grew: a batch with rows ended."""
    return sum(1 for (_, a), (_, b) in zip(points, points[1:], strict=False) if b > a)


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of a cumulative count over time: its rate, steadier than the
    difference of two samples, which a count that steps once per micro-batch makes coarse."""
    if len(points) < 2:
        return float("nan")
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (v - mv) for t, v in points) / var if var > 0 else float("nan")


def window_rate(samples: list[tuple[float, dict[str, float]]], warmup: float,
                rows: list[tuple[float, float]]) -> tuple[float, int]:
    """Rows read per second in the counted window, and the batch ends that bound it.

    The rows between the first and the last batch end the driver reported
    (``spark-batch-end``, :mod:`bench.slo.batch_progress`) where there are two: an exact span.
    The least-squares slope of the sampled row count, a step function of the batches,
    moved with where the 2-s samples fell among 5-13 batch ends, by as much as the effect
    measured (UC2-UC4 pairs spread 10-17 %). Without the driver's batch ends
    (0 returned as their count): that slope."""
    from bench.api import Series
    from bench.slo.batch_progress import rate_between_ends

    if not samples:
        return float("nan"), 0
    times = [t for t, _ in samples]
    read = rate_between_ends(Series(times, [v.get("spark-input-rows", 0.0) for _, v in samples]),
                             Series(times, [v.get("spark-batch-end", 0.0) for _, v in samples]),
                             times[0] + warmup)
    return (read.rate, read.ends) if read is not None else (slope(rows), 0)


def experiment(registry: Any, opts: dict[str, Any], mode: str,
               cap: int | None) -> tuple[Any, dict[str, Any]]:
    """The experiment of one side (its spec, with an id of its own) and its platform's options."""
    from bench.cli.checks import parse_spark_conf
    from bench.cli.launch import prepare_run
    from bench.execution.deployment import build_objects, experiment_spec, merged_params

    opts = dict(opts)
    own = parse_spark_conf(opts.pop("bare_conf", ()) if mode == "bare" else ())
    prepared = prepare_run(registry, opts)
    ex = prepared.execution
    load, resources = ex.load.loadValues[0], ex.resources.resourceValues[0]
    objects = build_objects(registry, prepared.benchmark, ex, prepared.params, load, resources)
    params = merged_params(prepared.use_case, prepared.benchmark, ex, objects, prepared.params)
    spec = experiment_spec(prepared.use_case, prepared.benchmark, objects, params, load, resources,
                           f"obs-{mode}-{int(time.time())}")
    if own:
        # the two sides share one platform, and so its options (--conf): a side's own
        # settings ride on its use case's, which --conf still overrides
        spec.use_case = dataclasses.replace(spec.use_case, spark_conf={**spec.use_case.spark_conf, **own})
    # a per-trigger cap keeps a saturated query's batches from growing without end, so
    # that batches keep ending inside the window (both sides of a pair get the same cap)
    return spec, {**prepared.platform_options, **({"max_records_per_trigger": cap} if cap else {})}


@contextlib.contextmanager
def switched_off(off: str | None) -> Iterator[None]:
    """The instrumentation switch (``bench.runtime.instrumentation``) set to ``off`` while
    the block runs, None: left on. It is read where a SUT child is spawned (which inherits
    it: no offset commits) and where the platform samples, so a side is bare when both of
    those happen inside the block."""
    from bench.runtime.instrumentation import ENV

    if off is None:
        yield
        return
    os.environ[ENV] = off
    try:
        yield
    finally:
        os.environ.pop(ENV, None)


def summarize(mode: str, samples: list[tuple[float, dict[str, float]]], warmup: float,
              before: str, after: str, cpu: dict[str, float] | None = None) -> Measured:
    """One side's figure from its samples."""
    processed = after_warmup(samples, warmup, "spark-processed-rate")
    rows = after_warmup_points(samples, warmup, "spark-input-rows")
    ends = batch_ends(rows)
    # Uncapped micro-batches at saturation grow: each takes all that arrived during the
    # last. On a slower 2-core machine one UC1 batch outlasted the 60 s counted, and the
    # row count's slope said 0 records/s. A rate needs a
    # batch ending inside the window on both sides of it; otherwise there is no figure.
    rate, exact = window_rate(samples, warmup, rows)
    ends = exact or ends
    rate = rate if ends >= MIN_BATCH_ENDS else float("nan")
    written = after_warmup_points(samples, warmup, "generated-records")
    return Measured(mode, rate, median(processed), ends, before, after,
                    slope(written) if len(written) >= 3 else float("nan"), dict(cpu or {}))


async def measure(registry: Any, opts: dict[str, Any], seconds: float, warmup: float, interval: float,
                  mode: str, cap: int | None = None, off: str = "1") -> Measured:
    """One side alone: the pair's two runs follow each other."""
    return (await measure_together(registry, opts, seconds, warmup, interval, False, cap, off, (mode,)))[mode]


async def measure_together(registry: Any, opts: dict[str, Any], seconds: float, warmup: float, interval: float,
                           bare_first: bool, cap: int | None = None, off: str = "1",
                           modes: tuple[str, ...] = MODES) -> dict[str, Measured]:
    """The sides in ``modes`` at once, on one broker, each with its own topics, generators,
    consumer group and quarter-core CPU limit, sampled in turns over the same wall-clock
    window (one side: :func:`measure`).

    Why: run one after the other, the same SUT's reading moved by 15-30 % between pairs
    and fell by half over an hour, more than any
    instrumentation costs; measured together, whatever the machine does in that minute
    it does to both. Both SUTs are started (one after the other: the switch is read
    when a child is spawned) before either side's load begins, so their windows are the
    same. What this does not count: the samplers' own CPU in bench's process, which both
    sides share, as the SUT's cost; that is the point of a CPU limit per instance, and
    on a cluster those samplers run outside the SUT's pods."""
    from bench.runtime.spark import cpu_limit

    sides = {mode: experiment(registry, opts, mode, cap) for mode in modes}
    offs: dict[str, str | None] = {"instrumented": None, "bare": None if off == AA else off}
    options = next(iter(sides.values()))[1]
    platform = registry.platforms[options["platform"]].create(options, registry)
    before = load_note()
    samples: dict[str, list[tuple[float, dict[str, float]]]] = {m: [] for m in modes}
    order = modes[::-1] if bare_first else modes
    ids = {mode: str(getattr(sides[mode][0], "experiment_id", "")) for mode in modes}
    # where each SUT's CPU goes over the counted window (after the warm-up): _sut_cpu
    cpu_at: dict[str, tuple[float, dict[str, float]]] = {}
    cpu: dict[str, dict[str, float]] = {}
    await platform.open()
    try:
        for mode in order:
            await platform.reset_topics(sides[mode][0])
        try:
            for mode in order:
                with switched_off(offs[mode]):
                    await platform.start_sut(sides[mode][0])
            for mode in order:
                await platform.start_generators(sides[mode][0])
            started = time.monotonic()
            while time.monotonic() - started < seconds:
                if not cpu_at and time.monotonic() - started >= warmup:
                    cpu_at = {m: (time.monotonic(), _sut_cpu.snapshot(cpu_limit.members_of(ids[m]))) for m in order}
                for mode in order:
                    with switched_off(offs[mode]):
                        sample = await platform.sample(sides[mode][0])
                    samples[mode].append((sample.timestamp, dict(sample.values)))
                await asyncio.sleep(interval)
            for mode, (at, first) in cpu_at.items():
                cpu[mode] = _sut_cpu.cores(first, _sut_cpu.snapshot(cpu_limit.members_of(ids[mode])),
                                           time.monotonic() - at)
            for mode in order:
                await platform.stop_generators(sides[mode][0])
        finally:
            for mode in order:
                try:
                    await platform.stop_sut(sides[mode][0])
                finally:
                    await platform.delete_topics(sides[mode][0])
    finally:
        await platform.close()  # tears down whatever a failed stop left
    after = load_note()
    return {mode: summarize(mode, samples[mode], warmup, before, after, cpu.get(mode)) for mode in modes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="UC1 only, 1 pair of 75-s runs (45 s not counted)")
    parser.add_argument("--plugin", default=None, help="use cases, comma-separated (default uc1,uc2,uc3,uc4)")
    parser.add_argument("--pairs", type=int, default=None,
                        help="instrumented/bare pairs per use case (default 4: each order twice)")
    parser.add_argument("--seconds", type=float, default=None, help="per run (default 120; quick 75)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds not counted (default 40; quick 45)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between reads of the progress")
    parser.add_argument("--load", type=float, default=None, help="records/s for every use case (default: saturating)")
    parser.add_argument("--cpu-per-instance", type=float, default=0.25)
    parser.add_argument("--connector", default="native", choices=("native", "python"))
    parser.add_argument("--max-per-trigger", type=int, default=None,
                        help="records per micro-batch at most, for both sides (default per use case: "
                        f"{', '.join(f'{p} {c:,}' for p, c in DEFAULT_CAP.items())}; quick: {QUICK_CAP:,})")
    from bench.runtime.instrumentation import PARTS

    parser.add_argument("--off", default="1", choices=("1", *PARTS, AA),
                        help="what the bare side switches off: 1 (everything, the default), commits (the SUT's "
                        "offset commits only), samplers (lag, latency and informational sampling only) or "
                        f"{AA} (nothing: an A/A run, both sides instrumented, whose ratio is what the comparison "
                        "itself gives where the sides do not differ)")
    parser.add_argument("--together", action=argparse.BooleanOptionalAction, default=True,
                        help="run each pair's two sides at the same time on one broker (each its own topics, "
                        "generators and CPU limit), the default, so that the machine's drift between runs "
                        "cancels; --no-together runs them one after the other")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for both sides' SUTs, as bench run --conf (repeatable), e.g. "
                        "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 (the JIT's C1 compiler only)")
    parser.add_argument("--bare-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the bare side only (repeatable); with --off none an A/B run of "
                        "that setting, both sides instrumented, the ratio the first side against the setting's")
    args = parser.parse_args()
    plugins = [p.strip() for p in (args.plugin or ("uc1" if args.quick else "uc1,uc2,uc3,uc4")).split(",")]
    pairs = args.pairs or (1 if args.quick else 4)  # an even number: each order equally often
    seconds = args.seconds or (QUICK_SECONDS if args.quick else 120.0)
    warmup = args.warmup if args.warmup is not None else (QUICK_WARMUP if args.quick else 40.0)
    caps = {p: args.max_per_trigger or (QUICK_CAP if args.quick else DEFAULT_CAP.get(p)) for p in plugins}

    from bench.cli.logs import configure_logging
    from bench.plugins import load_plugins

    configure_logging("console", 0)
    registry = load_plugins()
    banner(f"observer effect, {', '.join(plugins)}; commit {commit()}")
    capped = ", ".join(f"{p} {c:,}" if c else f"{p} uncapped" for p, c in caps.items())
    print(f"{pairs} pair(s) of {seconds:g}-s runs (first {warmup:g} s not counted), {args.cpu_per_instance:g} core "
          f"per instance, {args.connector} connector, "
          f"records per micro-batch at most {capped}; "
          f"{''.join(f'--conf {c}; ' for c in args.conf)}{''.join(f'bare side --conf {c}; ' for c in args.bare_conf)}"
          f"bare: {BARE_SIDE.get(args.off, f'no {args.off}') if not args.bare_conf else SETTINGS_SIDE}"
          f"{'; both sides at once' if args.together else '; the sides one after the other'}", flush=True)
    results: dict[str, dict[str, list[Measured]]] = {p: {m: [] for m in MODES} for p in plugins}
    # one folder for every run's result files, removed at exit: only the printed figures are kept
    workdir = tempfile.mkdtemp(prefix="bench-observer-")
    atexit.register(shutil.rmtree, workdir, True)
    for i in range(pairs):
        for plugin in plugins:
            load = args.load or (QUICK_LOAD if args.quick else {}).get(plugin) or SATURATING.get(plugin, 60_000.0)
            opts = {
                "plugin": plugin, "loads": f"{load:g}", "resources": "1", "duration": seconds,
                "warmup": min(warmup, seconds / 2), "repetitions": 1,
                "sets": (f"sut.cpuPerInstance={args.cpu_per_instance}",), "connector": args.connector,
                "platform_name": "embedded", "results_dir": os.path.join(workdir, f"{plugin}-{i}"),
                "spark_conf": tuple(args.conf), "bare_conf": tuple(args.bare_conf),
            }
            order = MODES if i % 2 == 0 else MODES[::-1]
            cap = caps[plugin]
            if args.together:
                both = asyncio.run(measure_together(registry, opts, seconds, warmup, args.interval,
                                                    bare_first=i % 2 == 1, cap=cap, off=args.off))
                runs: Iterable[Measured] = [both[mode] for mode in order]
            else:
                runs = (asyncio.run(measure(registry, opts, seconds, warmup, args.interval, mode, cap, args.off))
                        for mode in order)
            for done in runs:
                mode = done.mode
                results[plugin][mode].append(done)
                read = (f"{done.rate:10,.0f} records/s read" if math.isfinite(done.rate) else
                        f"not measurable ({done.batches} batch end(s) counted, {MIN_BATCH_ENDS} needed; a longer "
                        "--seconds and --warmup)")
                wrote = (f", {done.written:,.0f} written" if math.isfinite(done.written) else "") + (
                    " (kept up: not saturated, the generators' rate)" if done.kept_up else "")
                print(f"pair {i + 1} {plugin} {mode:12}: {read}{wrote}, {done.processed:10,.0f} within batches, "
                      f"{done.batches} batch end(s) ({done.before} before, {done.after} after)", flush=True)
                if done.cpu:
                    print(f"pair {i + 1} {plugin} {mode:12}: SUT cores after the warm-up: "
                          + ", ".join(f"{part} {done.cpu[part]:.4f}" for part in _sut_cpu.PARTS), flush=True)
    stamp = time.strftime("%Y-%m-%d")
    print()
    print(f"{stamp}, commit {commit()}, `benchmarks/observer_effect.py {' '.join(sys.argv[1:])}`:")
    print()
    print("| use case | instrumented records/s per quarter-core instance (median) | bare (median) | ratio (order "
          "cancelled; median of pairs with pairs in one order only) | pairs | load average before / after each run |")
    print("|---|---|---|---|---|---|")
    ratios: list[float] = []
    orders: list[str] = []
    for plugin, by_mode in results.items():
        inst, bare = by_mode["instrumented"], by_mode["bare"]
        # a pair in which either side kept up compares two generator rates: no ratio from it
        saturated = [(i, a, b) for i, (a, b) in enumerate(zip(inst, bare, strict=False))
                     if not (a.kept_up or b.kept_up)]
        unsaturated = min(len(inst), len(bare)) - len(saturated)
        ordered = [(a.rate / b.rate, i % 2 == 0) for i, a, b in saturated
                   if b.rate > 0 and math.isfinite(a.rate) and math.isfinite(b.rate)]
        pair_ratios = [r for r, _ in ordered]
        ratio = statistics.median(pair_ratios) if pair_ratios else float("nan")
        balanced = order_balanced(ordered)
        interval = balanced_interval(ordered)
        if balanced is not None:
            ratio = balanced[0]
            orders.append(f"{plugin}: {balanced[0]:.3f} with the order cancelled (median of pairs "
                          f"{statistics.median(pair_ratios):.3f}); a pair's first run read {balanced[1] - 1:+.1%} "
                          "against its second, whichever side ran first")
            orders.append(f"{plugin}: " + against_goal(interval, None if args.off == AA else GOAL))
        if pair_ratios:
            orders.append(f"{plugin}: pair ratios in run order " + ", ".join(f"{r:.3f}" for r in pair_ratios))
        shares = [_sut_cpu.instrumentation_share(a.cpu, b.cpu, args.cpu_per_instance)
                  for a, b in zip(inst, bare, strict=False) if a.cpu and b.cpu]
        if shares and not args.bare_conf and args.off != AA:  # an A/A run's sides both commit
            orders.append(f"{plugin}: the instrumentation's CPU inside the SUT's quota (its driver and Kafka client, "
                          f"instrumented minus bare): {median(shares):+.2%} of {args.cpu_per_instance:g} core (median; "
                          f"pairs {', '.join(f'{x:+.2%}' for x in shares)}); a SUT held at its quota loses no more "
                          "inside it: "
                          f"instrumented / bare >= {1 - max(0.0, median(shares)):.3f} by accounting (what bench "
                          "spends outside the quota: --off samplers)")
        split = [x for _, a, b in saturated if a.cpu and b.cpu
                 if (x := _sut_cpu.split_ratio(a.rate, a.cpu, b.rate, b.cpu)) is not None]
        if split and not args.bare_conf:
            orders.append(f"{plugin}: where each pair's ratio comes from: the CPU the SUTs got (instrumented / bare) "
                          f"{', '.join(f'{c:.3f}' for c, _ in split)}, their records per CPU-second "
                          f"{', '.join(f'{e:.3f}' for _, e in split)} (medians {median([c for c, _ in split]):.3f} "
                          f"and {median([e for _, e in split]):.3f})")
        ratios.append(ratio)
        # run together, a pair's two sides share one window and so one before / after
        loads = load_averages(inst if args.together else inst + bare)
        note = f" ({unsaturated} pair(s) not saturated: the SUT kept up; a higher --load)" if unsaturated else ""
        print(f"| {plugin}{note} | {median([m.rate for m in inst if math.isfinite(m.rate)]):,.0f} | "
              f"{median([m.rate for m in bare if math.isfinite(m.rate)]):,.0f} | "
              f"**{ratio:.3f}** | {len(pair_ratios)} | {loads} |")
    for line in orders:
        print(line)
    worst = min(ratios) if ratios else float("nan")
    if args.off == AA and args.bare_conf:
        print(f"A/B run of the bare side's Spark settings ({', '.join(args.bare_conf)}), both sides instrumented: "
              f"the other side against it {worst:.3f}")
        return 0
    if args.off == AA:
        # both sides alike: the ratio is the comparison's own error, which the goal does not judge
        print(f"A/A run (--off {AA}), both sides instrumented: {worst:.3f}; an A/B ratio within this one's "
              "distance of 1 is not told apart from no effect")
        return 0
    print(f"lowest ratio instrumented / bare (goal >= {GOAL:g}): {worst:.3f}")
    if args.quick:
        # one short pair shows the measurement runs end to end; it bounds nothing (pairs spread
        # by 15-30 %), so its ratio is printed, not judged
        print("quick mode: one pair, a check that the measurement runs, not of the goal")
        return 0
    return 0 if worst >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
