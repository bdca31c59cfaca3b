"""Running the sizing probes of ``--loads auto`` / ``--resources auto`` and applying them.

The arithmetic is :mod:`bench.search.sizing`; here the probes run
(:meth:`ExperimentRunner.probe`, the same short measurement as ``--predict``'s) and the
run's configuration takes the chosen loads, resources and CPU limit, before any
experiment and before the configuration files are written, so that those files, the
result JSON and ``--resume`` all see the sized run. A resumed run reads
``exp<id>-sizing.json`` back and probes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bench.config.model import Benchmark
from bench.execution import probe_verdict
from bench.execution.config import ProgressFn, RunConfig
from bench.execution.deployment import build_objects
from bench.execution.experiments import NOT_FAULTS, ExperimentRunner
from bench.patchers.apply import find_kind
from bench.search import cpu_scaling, load_values, sizing
from bench.search.prediction import (
    Probe,
    ProbeInconclusive,
    guesses,
    measure,
    predict_capacity,
    predict_demand,
    probe_duration,
)
from bench.search.sizing_record import AutoSize, ProbeFigures, Sizing, probe_line

#: a lowered CPU limit at least this share of the probed one: one instance's records/s is
#: estimated from its CPU (:mod:`bench.search.cpu_scaling`) rather than probed again. A
#: second probe of a micro-batch SUT costs a minute or more and reads no truer: UC1's at
#: 0.204 core read 4,827 records/s where its first, at 0.25, read 9,764 and 7,200 then
#: passed on one instance at 0.204 (its window held one batch of a SUT still warming up);
#: the search measures every entry anyway.
ESTIMATE_SHARE = 0.4
#: records/s per core of this machine the probe asks for: above the probe's two limited
#: instances (two quarter-core UC1 instances read 20,051 records/s each of 40,000, with
#: a backlog left by their start), yet not far above: a Spark SUT far behind reads more
#: per second in its ever larger micro-batches (37,669 each of 80,000), which no
#: run's verdict sees. What the load path pushes beyond it: ``sizing_record.PATH_HEADROOM``.
PROBE_RATE_PER_CORE = 20_000.0
#: instances the probe runs, its records/s divided among them. A SUT process has a fixed
#: cost its instances share (the JIT compiler, the collector, the driver's planning:
#: 0.085-0.112 of a quarter core, docs/performance.md), so one instance's figure
#: understates every larger amount: UC1's one quarter-core instance fell behind 14,000
#: records/s while two kept up with 23,000 and three ran 23,000 in 2-s batches, and loads
#: sized from one instance's records/s found demand 2 where 3 was sized. Two instances
#: share that cost as the measured amounts do. Where instances scale in proportion (the
#: calibrated SUT) the figure is the same.
PROBE_INSTANCES = 2.0
#: a Spark use case's first probe runs at this share of its CPU limit, where bench may
#: lower the limit and the load is continuous. At the use case's quarter core, two
#: instances of UC1, UC2, UC3 and a PySpark job each kept up with all the probe's 40,000
#: records/s in every main-job run on 2-core machines (a lower bound, :func:`sizing.halved`),
#: so every run probed a second time at half the limit, 70-75 s more: that probe alone
#: sized the loads (docs/performance.md). A stepped load (UC4) is sized by its steps at
#: the use case's limit (:func:`sizing.step_cpu`), and its instances did saturate there.
FIRST_PROBE_SHARE = 0.5


def sut_cpu(benchmark: Benchmark, objects: list[dict[str, Any]] | None = None) -> float:
    """The CPU limit per instance the SUT runs at (0: none)."""
    sut = find_kind(objects if objects is not None else list(benchmark.sut.resources), "BenchSut")
    try:
        return float(((sut or {}).get("spec") or {}).get("cpuPerInstance") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def with_cpu(benchmark: Benchmark, cpu: float) -> Benchmark:
    """The benchmark with its SUT objects' ``cpuPerInstance`` set to ``cpu``."""
    resources = []
    for obj in benchmark.sut.resources:
        if obj.get("kind") == "BenchSut":
            obj = {**obj, "spec": {**(obj.get("spec") or {}), "cpuPerInstance": cpu}}
        resources.append(obj)
    return benchmark.model_copy(update={"sut": benchmark.sut.model_copy(update={"resources": resources})})


def apply(cfg: RunConfig, made: Sizing) -> None:
    """The run's configuration takes the sized values (the user's stay where given)."""
    updates: dict[str, Any] = {}
    ex = cfg.execution
    if made.loads:
        updates["load"] = ex.load.model_copy(update={"loadValues": list(made.loads)})
    if made.resources:
        updates["resources"] = ex.resources.model_copy(update={"resourceValues": list(made.resources)})
    if updates:
        cfg.execution = ex.model_copy(update=updates)
    if made.cpu_lowered_from is not None:
        cfg.benchmark = with_cpu(cfg.benchmark, made.cpu)


def probe_load(runner: ExperimentRunner, target: float) -> float:
    """The load value asking about ``target`` records/s (of a stepped load, the heaviest
    whole value not above it)."""
    near = load_values.candidates_near(target, runner.rate_of)
    below = {v: r for v, r in near.items() if r <= target * 1.1} or near
    if not below:
        return runner.cfg.execution.load.loadValues[-1]
    return max(below, key=lambda v: below[v])


async def measure_sizing(runner: ExperimentRunner, cfg: RunConfig, auto: AutoSize, progress: ProgressFn,
                         cores: int) -> Sizing | None:
    """Probe :func:`probe_instances` instances (again at a lower CPU limit where the curve
    does not fit) and choose as many demands as :func:`bench.search.sizing.demands_within`
    the experiments' time; None when no probe gave a figure (the run keeps the use case's loads)."""
    ex = cfg.execution.execution
    seconds = probe_duration(ex.duration, ex.warmup, ex.sampleInterval)
    resources = probe_instances(auto, cfg.execution.resources.resourceValues)
    load = probe_load(runner, PROBE_RATE_PER_CORE * max(cores, 1))
    # given resources: only the demands they can show (a load beyond them has none)
    most = max(cfg.execution.resources.resourceValues)
    multiples = sizing.MULTIPLES if auto.resources else tuple(m for m in sizing.MULTIPLES if m < most) or (0.5,)
    if auto.loads:
        multiples = multiples[:sizing.demands_within(float(ex.duration) * ex.repetitions, len(multiples))]
    given = None if auto.loads else [runner.rate_of(x) for x in cfg.execution.load.loadValues]
    original = cfg.benchmark
    original_cpu = objects_cpu(runner, load, resources)
    cpu_fixed = auto.cpu_fixed or (None if original_cpu > 0 else "the SUT has no CPU limit (cpuPerInstance 0)")
    lowered_why: list[str] = []  # why each lower CPU limit was taken: said before the last probe's reason
    # only where bench sizes the loads: given loads keep the use case's limit
    first = first_probe_cpu(cfg, runner.rate_of, runner.rate_of(load), original_cpu, cpu_fixed) if auto.loads else None
    if first is not None:
        cfg.benchmark = with_cpu(cfg.benchmark, first)
        lowered_why.append(f"a Spark use case's first probe runs at half its CPU limit ({first:g} core): at the full "
                           "limit two instances kept up with such a probe on every 2-core machine measured, a lower "
                           "bound only")
    halve = first is None  # a kept-up probe halves the limit once below the use case's
    # a Spark process's fixed cost, taken off before one instance's records/s is scaled
    fixed = cpu_scaling.SPARK_PROCESS_CPU if cfg.use_case.topology is not None else 0.0
    probes: list[ProbeFigures] = []
    fails: list[dict[str, Any]] = []  # each probe's sure failure (probe_verdict)
    passes: list[dict[str, Any]] = []  # and each one's sure pass
    chosen: dict[float, float] = {}
    why = ""
    for _ in range(sizing.MAX_PROBES):
        cpu = objects_cpu(runner, load, resources)
        on = "one instance" if resources == 1 else f"{resources:g} instances"
        progress(f"sizing: probing {on} at {runner.rate_of(load):,.0f} records/s"
                 f"{f' ({cpu:g} core)' if cpu else ''}, {seconds:.0f} s", False)
        try:
            samples, rate = await runner.probe(load, resources, seconds)
            s = samples.series
            p = measure(s["lag"], float(ex.warmup), load, resources, rate, s.get("generated-records"),
                        s.get("spark-input-rows"), s.get("spark-batch-end"), s.get("processed-rate"))
        except NOT_FAULTS:
            raise
        except Exception as exc:  # noqa: BLE001 - a failed probe keeps the use case's loads
            # no micro-batch ended under the flood (eighth-core UC3 instances at 40,000
            # records/s committed nothing in 88 s): a tenth of it ends batches
            lighter = (probe_load(runner, runner.rate_of(load) / sizing.FLOOD_RATIO)
                       if isinstance(exc, ProbeInconclusive) and not probes else load)
            if runner.rate_of(lighter) < runner.rate_of(load):
                progress(f"sizing: no micro-batch ended in the probe ({exc}); probing again at a tenth of its "
                         "load", False)
                load = lighter
                continue
            progress(f"sizing skipped: the probe gave no figure ({type(exc).__name__}: {exc}); the use case's "
                     "loads are measured", False)
            break
        figures = ProbeFigures(p.per_instance_rate, p.saturated, p.load_rate, p.input_rate, cpu, load,
                               p.seconds, p.source, resources)
        probes.append(figures)
        progress(probe_line(figures), False)
        growth = figures.lag_growth if figures.saturated else None
        if (fail := probe_verdict.probe_fail(runner, s, load, resources, rate, p.input_rate, cpu, growth)) is not None:
            fails.append(fail)
        if (passed := probe_verdict.probe_pass(runner, s, figures, float(ex.warmup))) is not None:
            passes.append(passed)
        chosen, lower, why = sizing.plan(figures, runner.rate_of, given_rates=given, cpu_fixed=cpu_fixed,
                                         multiples=multiples, halve=halve, fixed_cpu=fixed)
        again = sizing.next_probe(figures)
        if again is not None and len(probes) < sizing.MAX_PROBES:
            # at the same CPU limit: heavier where the instances and the path kept up,
            # nearer the instances where a flood left them less than their limit
            other = probe_load(runner, again)
            if runner.rate_of(other) != runner.rate_of(load):
                load = other
                continue
        estimate = figures.saturated and lower is not None and lower >= ESTIMATE_SHARE * cpu
        if lower is None:
            break
        if len(probes) >= sizing.MAX_PROBES and not estimate:
            # the run keeps the CPU limit its last probe measured, and its reason names no other
            chosen, _, why = sizing.plan(figures, runner.rate_of, given_rates=given,
                                         cpu_fixed=f"probed {len(probes)} times", multiples=multiples)
            break
        cfg.benchmark = with_cpu(cfg.benchmark, lower)
        lowered_why.append(why)
        if estimate:
            # a small cut: one instance's records/s scaled with its CPU, not probed again
            # (a probe costs a minute or more; the search measures every entry anyway)
            estimated = ProbeFigures(cpu_scaling.rate_at(figures, lower, fixed), True, figures.load_rate,
                                     figures.input_rate, lower, load, 0.0, "estimated", resources)
            probes.append(estimated)
            progress(probe_line(estimated), False)
            chosen, _, why = sizing.plan(estimated, runner.rate_of, given_rates=given, cpu_fixed="estimated",
                                         multiples=multiples)
            how = f"from its CPU less the process's fixed {fixed:g} core" if fixed else "in proportion to its CPU"
            why = f"{why}; one instance's records/s at {lower:g} core estimated {how}"
            break
        progress(f"sizing: {why}", False)  # said before the probe at the lower limit
    cpu_now = objects_cpu(runner, load, resources)
    cfg.benchmark = original  # apply() sets what was chosen, once
    why = "; then ".join([*lowered_why, why])
    if not probes:
        return None
    last = probes[-1]
    capacity = last.per_instance_rate
    loads = list(chosen) if auto.loads and chosen else None
    rates = dict(chosen) if loads else {x: runner.rate_of(x) for x in cfg.execution.load.loadValues}
    resources_out = sizing.resources_for(list(rates.values()), capacity) if auto.resources else None
    made = Sizing(probes, loads, resources_out, rates, cpu_now,
                         original_cpu if not math.isclose(cpu_now, original_cpu) else None, why,
                         sizing.advice(rates, capacity, cpu_fixed) if auto.loads else None,
                         probe_verdict.lightest(fails, cpu_now), probe_pass=probe_verdict.strongest(passes, cpu_now))
    return made


def first_probe_cpu(cfg: RunConfig, rate_of: load_values.RateOf, rate: float, cpu: float,
                    cpu_fixed: str | None) -> float | None:
    """The CPU limit the first probe runs at where it is not the use case's
    (:data:`FIRST_PROBE_SHARE` of it), else None: a Spark use case whose limit bench may
    lower, at a continuous load (``rate`` records/s has a load value of its own)."""
    if cpu_fixed is not None or cpu <= 0 or cfg.use_case.topology is None:
        return None
    if not load_values.candidates_near(rate, rate_of, {}):
        return None  # a stepped load
    share = math.floor(cpu * FIRST_PROBE_SHARE * 1000) / 1000
    return share if share >= sizing.MIN_CPU else None


def probe_instances(auto: AutoSize, given: Sequence[float]) -> float:
    """The instances the probe runs: :data:`PROBE_INSTANCES` where bench sizes the
    resources, else the given amount nearest it (the smaller of two as near)."""
    if auto.resources or not given:
        return PROBE_INSTANCES
    return float(min(given, key=lambda r: (abs(float(r) - PROBE_INSTANCES), float(r))))


def objects_cpu(runner: ExperimentRunner, load: float, resources: float) -> float:
    """The CPU limit per instance one experiment's deployment sets (``--set`` applied)."""
    cfg = runner.cfg
    return sut_cpu(cfg.benchmark, build_objects(runner.registry, cfg.benchmark, cfg.execution, cfg.params, load,
                                                resources))


def search_guesses(made: Sizing | None, metric: str, loads: Sequence[float], resources: Sequence[float]
                   ) -> dict[float, int] | None:
    """Where the search starts each walk, from the sizing's one-instance records/s (as
    ``--predict``'s probe does); None without a measured figure.

    The bracket search otherwise walks the heaviest load up from one instance: at the
    sized loads (demands 1, 2, 3) one experiment more, the heaviest load on one instance,
    which the probe already saw fail (it processed a fraction of a lighter load). Each
    entry is still a measured verdict: the walk confirms a pass by its neighbour's failure."""
    if made is None or made.per_instance_rate <= 0:
        return None
    rates = {x: made.rates[x] for x in loads if x in made.rates}
    if len(rates) != len(loads):
        return None
    if metric == "capacity":
        return guesses(predict_capacity(rates, resources, made.per_instance_rate), loads)
    start = guesses(predict_demand(rates, resources, made.per_instance_rate), resources)
    if not made.lower_bound and made.loads and set(made.loads) == set(loads):
        # bench chose these loads one demand apart: a walk starts at most one amount above
        # the lighter load's. A micro-batch figure under-reads larger amounts (UC1's 54,000
        # records/s from 11,968 per instance: predicted 5, passed on 5, 4 and 3, failed on 2)
        previous = -1
        for load in sorted(start, key=lambda x: rates[x]):
            start[load] = previous = min(start[load], previous + 1)
    elif made.lower_bound:
        # the instances are faster than the figure says: the walk starts one amount lower
        # (UC1 sized from two instances that kept up: 46,000 records/s, predicted 3, passed
        # on 3 and on 2, and failed on 1; three experiments where two decide it)
        start = {k: max(0, i - 1) for k, i in start.items()}
    return start


def as_probe(figures: ProbeFigures) -> Probe:
    """A sizing probe as ``--predict`` keeps its probe (its lag's growth: what was written
    less what the instances read)."""
    return Probe(figures.load, figures.instances, figures.load_rate, figures.lag_growth, figures.per_instance_rate,
                 figures.saturated, figures.seconds, figures.input_rate, None, figures.source or "lag")
