"""The sizing probe's own verdict, and the experiments of the search it answers.

The probe runs the use case's instances at a heavy load and samples what an experiment
samples, so its series have a verdict under the benchmark's SLOs like any experiment's.
A saturated micro-batch SUT's heaviest sized load lies above the probe's load (three
quarters of the way from 2.3 x its figure to what the path pushes, ``sizing.BEYOND_TWO``), and the
search's last experiment was that load on the probe's number of instances: it measured
again, for a full experiment (113 s of UC1's 10 minutes), what the probe had already
failed at a lighter load. Under the monotone assumption the bracket search makes (the
demand never falls as the load rises nor as instances are taken away) a failure at a
lighter load on as many instances is a failure there too.

Only a sure failure stands, and only for instances no faster than the probe's (its CPU
limit or a lower one). Sure is: an SLO judged on a trend failed, and its slope's interval
(or the lag's net rise, ``confidence.net_rise``) lies wholly above the threshold; or, for
a probe whose instances fell behind, the lag grew between their batch ends (what was
written less what they read, the probe's own figure) by :data:`GROWTH_MARGIN` times the
threshold or more. The second is the lag's trend taken at the points where a
micro-batch SUT commits, and it is what a probe's short window can show: UC1's lag over
the 30 s after the probe's warm-up is a saw-tooth of two or three batches, whose slope's
interval straddles any threshold, while its two instances read 22,410 of 40,000
records/s, a growth of 44 times the threshold of 400. In five UC1 runs whose probes read
at most 12,000 records/s per instance, the heaviest load failed on two instances every
time; a probe that read 19,142 (a growth of 4 x the threshold) answers nothing.

A probe whose instances kept up answers the other way (:func:`probe_pass`): a load of at
most :data:`PASS_SHARE` of what they kept up with, on as many instances or more, at
least as fast, passes. Where two eighth-core UC1 instances kept up with the probe's
40,000 records/s, the middle load (25,000) on two instances was measured, 75-80 s of a
9-minute run, and passed every time (its lag fell from 300,000 to 110,000 records).
Only where every SLO is judged on a trend or counts dropped records (:data:`ANSWERED_TYPES`)
and the probe passed the latter (a latency SLO is not answered by keeping up): a lighter
load on as many instances leaves the SUT no further behind its input, so no later past
its watermark. UC2's eighth-core instances kept up with the probe, one alone failed 4,000
records/s, and two passed it in a 76-s experiment of a 9-minute run.
Instances that read more than the input in the probe's window (eating their start's
backlog in large batches) count as keeping up with the input, no more: a micro-batch's
fixed cost is spread over more records the larger it is, so its records/s in any batch
stay below what a steady run sustains in batches of its own (UC1's two eighth-core
instances that read 1.49 x the probe's 40,000 records/s later passed 40,000).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench import slo_math
from bench.analysis import confidence
from bench.api import Series
from bench.execution.deployment import build_objects, merged_params
from bench.execution.experiments import ExperimentRunner
from bench.results.store import fmt_value
from bench.search.prediction import batches_read
from bench.search.sizing_record import ProbeFigures
from bench.slo.evaluator import as_stored

#: times the SLO's threshold the lag must have grown between batch ends for the probe's
#: figure alone to stand as a failure
GROWTH_MARGIN = 10.0
#: the SLO types besides those judged on a trend whose probe verdict a probe that kept up
#: answers for lighter loads
ANSWERED_TYPES = frozenset({"dropped-records"})
#: a load at most this share of the records/s a probe's instances kept up with passes on
#: as many of them: the rest (a quarter, against an SLO threshold of 1 % of the load)
#: covers a probe's shorter window and a run's noise
PASS_SHARE = 0.75


def probe_fail(runner: ExperimentRunner, series: Mapping[str, Series], load: float, resources: float, rate: float,
               written: float | None, cpu: float, growth: float | None = None) -> dict[str, Any] | None:
    """The probe's failure as ``Sizing.probe_fail`` keeps it, or None where it is not sure
    (a lag trend over the probe's short window that passed is no sure pass either: the
    growth between batch ends still decides). ``written``: the records/s the
    generators wrote (the load the instances really failed, where the path fell behind);
    ``growth``: the lag's growth between batch ends, per second, where the probe's
    instances fell behind (None: they kept up, or no such figure)."""
    cfg = runner.cfg
    objects = build_objects(runner.registry, cfg.benchmark, cfg.execution, cfg.params, load, resources)
    period = cfg.use_case.output_period(merged_params(cfg.use_case, cfg.benchmark, cfg.execution, objects,
                                                      cfg.params))
    collected = {name: [s] for name, s in series.items()}
    slis = runner.evaluator.slis()
    for name, verdict in runner.evaluator.verdicts(collected, load, resources, rate).items():
        details = verdict.details
        threshold, warmup = details.get("threshold"), float(details.get("warmup") or 0.0)
        if name not in runner.evaluator.trend_slos() or "error" in details \
                or not isinstance(threshold, int | float) or slis.get(name) not in series:
            continue
        failed_at = min(rate, written) if written is not None else rate
        found = {"load": load, "rate": failed_at, "instances": resources, "cpu": cpu, "slo": name,
                 "threshold": float(threshold)}
        try:
            t, v = slo_math.usable(as_stored(series[slis[name]]), warmup, 0)
            judged = confidence.judge([confidence.fit_repetition(t, v, period)], float(threshold))
        except (ValueError, ArithmeticError):
            judged = None
        if not verdict.passed and judged is not None and not judged.unstable and judged.low is not None \
                and judged.low >= threshold:
            return {**found, "slope": judged.median, "low": judged.low, "basis": "trend"}
        if growth is not None and growth >= GROWTH_MARGIN * float(threshold):
            return {**found, "slope": growth, "low": growth, "basis": "batches"}
    return None


def probe_pass(runner: ExperimentRunner, series: Mapping[str, Series], figures: ProbeFigures,
               warmup: float) -> dict[str, Any] | None:
    """The probe's pass as ``Sizing.probe_pass`` keeps it (the records/s a load may ask
    to pass on its instances, untested), or None where the instances did not surely keep up."""
    if figures.saturated or figures.path_limited or figures.source in ("", "estimated") \
            or figures.per_instance_rate <= 0:
        return None
    others = set(runner.evaluator.slis()) - set(runner.evaluator.trend_slos())
    if others and not passed_counts(runner, series, figures, others):
        return None
    written = figures.input_rate if figures.input_rate is not None else figures.load_rate
    read = figures.per_instance_rate * figures.instances
    if figures.source == "batches" and "lag" in series:
        batches = batches_read(series["lag"], warmup, series.get("spark-input-rows"), series.get("spark-batch-end"))
        read = batches.rate if batches is not None else read
    kept_up = min(read, written)
    return {"load": figures.load, "kept_up": kept_up, "read": read, "rate": PASS_SHARE * kept_up,
            "instances": figures.instances, "cpu": figures.cpu}


def passed_counts(runner: ExperimentRunner, series: Mapping[str, Series], figures: ProbeFigures,
                  names: set[str]) -> bool:
    """Whether every SLO of ``names`` is of :data:`ANSWERED_TYPES` and passed on the probe's series."""
    types = runner.evaluator.slo_types()
    if any(types.get(name) not in ANSWERED_TYPES for name in names):
        return False
    collected = {name: [s] for name, s in series.items()}
    verdicts = runner.evaluator.verdicts(collected, figures.load, figures.instances, figures.load_rate)
    return all(name in verdicts and verdicts[name].passed and "error" not in verdicts[name].details for name in names)


def strongest(passes: Sequence[Mapping[str, Any]], cpu: float) -> dict[str, Any] | None:
    """Of the probes' passes, the one at the most records/s that holds at ``cpu``: for
    instances at least as fast as the probe's (its CPU limit or a higher one, or none)."""
    held = [dict(p) for p in passes if cpu <= 0 or 0 < float(p.get("cpu") or 0.0) <= cpu]
    return max(held, key=lambda p: float(p["rate"])) if held else None


def applies(fail: Mapping[str, Any], cpu: float) -> bool:
    """Whether instances at ``cpu`` cores (0: no limit) are no faster than the probe's."""
    probed = float(fail.get("cpu") or 0.0)
    return probed <= 0 or 0 < cpu <= probed


def lightest(fails: Sequence[Mapping[str, Any]], cpu: float) -> dict[str, Any] | None:
    """Of the probes' failures, the one at the fewest records/s that holds at ``cpu``."""
    held = [dict(f) for f in fails if applies(f, cpu)]
    return min(held, key=lambda f: float(f["rate"])) if held else None


def answer(runner: ExperimentRunner, fail: Mapping[str, Any] | None, rates: Mapping[float, float],
           loads: Sequence[float], resources: Sequence[float],
           passed: Mapping[str, Any] | None = None) -> list[tuple[float, float]]:
    """Enter the probe's failure as the verdict of every (load, resources) it answers: a
    load of at least its records/s on at most its instances; and its pass (``passed``)
    for a load of at most its records/s on at least its instances. Returns those pairs; a
    pair measured before (``--resume``) keeps its own verdict."""
    answered = []
    if passed is not None:
        probed, kept = float(passed["instances"]), float(passed["kept_up"])
        answered += _enter(runner, rates, loads, resources, True,
                           lambda rate, amount: rate <= float(passed["rate"]) and amount >= probed,
                           lambda rate: (f"PASS, not measured: the sizing probe's {_instances(probed)} kept up "
                                         f"with {kept:,.0f} records/s, and this load asks {rate / kept:.0%} of it"))
    if fail is not None:
        probed = float(fail["instances"])
        answered += _enter(runner, rates, loads, resources, False,
                           lambda rate, amount: rate >= float(fail["rate"]) and amount <= probed,
                           lambda rate: (f"FAIL, not measured: the sizing probe's {_instances(probed)} failed "
                                         f"{float(fail['rate']):,.0f} records/s, a lighter load ({fail['slo']}: "
                                         f"slope {float(fail['slope']):,.4g} vs {float(fail['threshold']):,.4g})"))
    return answered


def _instances(n: float) -> str:
    return f"{fmt_value(n)} instance{'' if n == 1 else 's'}"


def _enter(runner: ExperimentRunner, rates: Mapping[float, float], loads: Sequence[float],
           resources: Sequence[float], passed: bool, holds: Callable[[float, float], bool],
           why: Callable[[float], str]) -> list[tuple[float, float]]:
    """Enter ``passed`` for every pair not yet known where ``holds(records/s, amount)``."""
    entered = []
    for load in loads:
        if (rate := rates.get(load)) is None:
            continue
        for amount in resources:
            key = (float(load), float(amount))
            if key not in runner.cache and holds(float(rate), float(amount)):
                runner.enter(key, passed, f"load={fmt_value(load)} resources={fmt_value(amount)}: {why(float(rate))}")
                entered.append(key)
    return entered
