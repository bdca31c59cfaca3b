"""Predicting a demand table before measuring it, from one short probe at saturation.

A SUT instance processes at most some records/s. One short experiment at the heaviest
load with the fewest resources measures it: the input rate minus the lag's growth is
what the instances processed, and divided by their number what one processes. Each
load's demand is then predicted as the first resource amount at least ``records/s of
the load / per-instance records/s`` (within :data:`RATE_TOLERANCE` of the probe's
precision), capacity likewise as the heaviest load the resources' share covers.

The prediction only chooses where the search starts (``bench.search.strategies.predicted``): the
predicted amount and its lower neighbour are measured, so every entry of the table is
still a measured verdict; a wrong prediction costs a walk, never a wrong entry. The
probe, the prediction and whether each was right are written to
``exp<id>-prediction.json`` beside the result JSON, and ``bench report`` shows them.

A probe that is not saturated (the lag does not grow: the instances keep up with the
heaviest load) gives a lower bound of the per-instance rate: demands predicted from
it are upper estimates, which the downward walk of the search corrects.

A micro-batch SUT's lag is a saw-tooth: it rises at the whole input rate while a batch
runs and falls when the batch commits (:mod:`bench.slo.lag_batches`). A probe window
shorter than one batch sees a rise or a fall, not the growth: UC2 at 100,000
records/s on one quarter-core instance fell behind (lag trends of 25,390 and 54,389
records/s against a threshold of 1,000), yet its 30 s of probe after the warm-up, a fall
among them, read as "not saturated, 100,246 records/s per instance" and predicted one
instance where two were needed. So on such a lag
the probe goes on until it has seen :data:`bench.slo.lag_batches.MIN_DRAINS` commits after its warm-up (at most an
experiment's duration) and measures the growth from the first commit to the last,
whole batches only; a probe that sees fewer is inconclusive and predicts nothing
(:class:`ProbeInconclusive`), rather than a figure that is silently wrong.

Where the SUT reports its batches itself (a Spark driver on a local platform:
``spark-input-rows`` and ``spark-batch-end``), what it processed is the rows read
between the first and the last batch end after the warm-up, an exact span
(:mod:`bench.slo.batch_progress`); the lag's growth between two sampled commits is off
by up to a sampling interval at each end of the span. Far above its capacity a
micro-batch SUT's batches grow by the overload's factor each, and one batch end after
the warm-up is all a probe may see: then that one whole batch, measured from the end
before it (never the query's first two batches, its start-up), is the figure
(:func:`last_batch_read`). Exact is not the same as
representative: a SUT that reads more per second in larger batches (UC4) reads more in
a saturated probe's growing batches than in the short ones of a run that keeps up, so
its demands are predicted low (UC4 at 7 levels: 8,566 records/s per instance, 2
predicted, 4 measured). The search measures every entry all the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench import slo_math
from bench.api import Series
from bench.slo.batch_progress import BatchRate, batch_ends, rate_between_ends
from bench.slo.lag_batches import MIN_DRAINS, commit_times, rises_between_commits

#: a lag growing slower than this share of the input rate: the probe did not saturate the SUT
SATURATION_SHARE = 0.02
#: a micro-batch SUT behind all along that read more than this x what was written was
#: catching up, in batches larger than a steady run's: a lower bound, the input's figure
#: (docs/performance.md, "Loads sized for the machine")
CATCHING_UP = 1.1
#: seconds of samples after the warm-up the probe needs at least
MIN_PROBE_SPAN_S = 30.0
#: how far below the true per-instance rate a probe may measure it: the calibrated SUT's
#: 1,000 records/s came out as 997, so a load of exactly two instances'
#: records/s asked for three. A load within this share above a whole number of instances
#: is predicted at that number; a wrong guess at a boundary costs the same experiments
#: either way (the search confirms a pass by its lower neighbour's failure).
RATE_TOLERANCE = 0.02
FILE = "exp{id}-prediction.json"


@dataclass
class Probe:
    """What the probe measured."""

    load: float
    resources: float
    #: the records/s the load asks for
    load_rate: float
    lag_slope: float
    per_instance_rate: float
    saturated: bool
    seconds: float
    #: the records/s the generators wrote during the probe (the slope of their count after
    #: the warm-up), which the lag's growth is measured against; the load's rate where the
    #: platform does not count them
    input_rate: float | None = None
    #: on a micro-batch lag, the commits seen after the warm-up, whose first and last
    #: bound the span the growth was measured over; None: a lag consumed continuously
    batch_ends: int | None = None
    #: where the processed records/s came from: "committed" (the growth of the SUT's
    #: committed offsets over the window), "lag" (input rate minus the lag's growth, where
    #: the platform samples no ``processed-rate``) or "batches" (the rows the SUT's
    #: micro-batches read between their ends)
    source: str = "lag"


class ProbeInconclusive(ValueError):
    """The probe saw too few of a micro-batch SUT's commits to tell its rate."""


@dataclass
class Prediction:
    metric: str
    probe: Probe
    #: load -> predicted demand (or resources -> predicted capacity); None: beyond the values given
    predicted: dict[float, float | None]
    #: filled once the table is measured
    measured: dict[float, float | None] = field(default_factory=dict)

    @property
    def hits(self) -> dict[float, bool]:
        """Per entry, whether the prediction was the measured value."""
        return {k: self.predicted.get(k) == v for k, v in self.measured.items()}

    def hit_rate(self) -> float | None:
        hits = self.hits
        return sum(hits.values()) / len(hits) if hits else None

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "probe": asdict(self.probe),
            "entries": [
                {"key": k, "predicted": self.predicted.get(k), "measured": self.measured.get(k),
                 "hit": self.hits.get(k)}
                for k in self.predicted
            ],
            "hitRate": self.hit_rate(),
        }


def probe_duration(duration: float, warmup: float, interval: float) -> float:
    """The probe's length: the warm-up and enough samples for a slope, never more than an experiment."""
    return min(float(duration), float(warmup) + max(MIN_PROBE_SPAN_S, 6.0 * float(interval)))


#: a generator writing less than this share of the load's records/s fell behind in the probe
GENERATOR_SHARE = 0.95


def measure(lag: Series, warmup: float, load: float, resources: float, rate: float,
            generated: Series | None = None, rows: Series | None = None,
            ends: Series | None = None, processed: Series | None = None) -> Probe:
    """The per-instance rate from the probe's lag: ``(input rate - lag growth) / instances``.

    The input rate is what the generators wrote (``generated``, their cumulative count),
    not what the load asks for: a generator that fell behind on a loaded machine would
    otherwise have its shortfall counted as processed, and every demand predicted too low.
    On a micro-batch lag the growth is measured between the first and the last commit
    after the warm-up (whole batches), and fewer than :data:`MIN_DRAINS` commits raise
    :class:`ProbeInconclusive` (see the module's docstring). With the SUT's own batch
    report (``rows`` and ``ends``, :mod:`bench.slo.batch_progress`) and :data:`MIN_DRAINS`
    batch ends after the warm-up, the processed records/s are the rows read between the
    first and the last of them, and the lag's growth is what the input did not get.
    """
    t, v = slo_math.after_warmup(lag, warmup)
    slope, _ = slo_math.slope(t, v)  # raises InsufficientData for fewer than two samples
    written = written_rate(generated, warmup)
    source = rate if written is None else written
    read = batches_read(lag, warmup, rows, ends)
    if read is not None:
        behind = backlogged(v, read.rate, read.seconds) and read.rate <= CATCHING_UP * source
        # behind all along, what it read is what it can (its batches took all that waited)
        taken = read.rate if behind else min(read.rate, source)
        growth = max(source - read.rate, 0.0)
        return Probe(load=float(load), resources=float(resources), load_rate=float(rate), lag_slope=growth,
                     per_instance_rate=taken / max(float(resources), 1e-9),
                     saturated=growth > SATURATION_SHARE * source or behind, seconds=read.seconds,
                     input_rate=written, batch_ends=read.ends, source="batches")
    batch_count: int | None = None
    span = (float(t[0]), float(t[-1])) if t.size else (0.0, 0.0)
    commits = batch_commits(lag, warmup, source)
    steady = committed_rate(processed, *span, grid=lag)
    if commits is not None and steady is not None and steady > 0 and commits.size < MIN_DRAINS:
        # a lag rising at nearly the whole input rate, yet the SUT committed all along: a
        # heavily saturated consumer, not one long micro-batch
        commits = None
    if commits is not None:
        batch_count = int(commits.size)
        if batch_count < MIN_DRAINS:
            raise ProbeInconclusive(
                f"its lag rose at the whole input rate ({source:,.0f} records/s) between commits and fell "
                f"{batch_count} time(s) in {float(t[-1] - t[0]):.0f} s after the warm-up: a micro-batch longer "
                f"than the probe, whose rate {MIN_DRAINS} commits are needed to tell")
        first, last = float(commits[0]), float(commits[-1])
        slope = (float(v[t == last][0]) - float(v[t == first][0])) / (last - first)
        span = (first, last)
    committed = committed_rate(processed, *span, grid=lag)
    if committed is not None:
        # what the SUT committed over the window itself: no input rate of another window
        # (the generators' count) enters the figure
        processed_rate, how = committed, "committed"
    else:
        processed_rate, how = max(source - max(slope, 0.0), 0.0), "lag"
    per_instance = processed_rate / max(float(resources), 1e-9)
    behind = backlogged(v, processed_rate, span[1] - span[0])
    return Probe(load=float(load), resources=float(resources), load_rate=float(rate), lag_slope=float(slope),
                 per_instance_rate=per_instance, saturated=slope > SATURATION_SHARE * source or behind,
                 seconds=float(t[-1] - t[0]) if t.size else 0.0, input_rate=written, batch_ends=batch_count,
                 source=how)


def backlogged(lag_values: np.ndarray, read_rate: float, seconds: float) -> bool:
    """Whether the SUT was behind all the window long (its lag at the end holds more than
    it read in the window): it reads as fast as it can, whether or not the lag still grows.
    UC1's two quarter-core instances read 40,102 records/s of 40,000 in a probe's window,
    while their start-up left a backlog of 2.5 million records (62 s of input) unread."""
    return lag_values.size > 0 and read_rate > 0 and seconds > 0 and float(lag_values[-1]) > read_rate * seconds


def committed_rate(processed: Series | None, start: float, end: float,
                   grid: Series | None = None) -> float | None:
    """The records/s the SUT committed between the sample times ``start`` and ``end``,
    from its ``processed-rate`` SLI (each sample: the growth of the group's committed
    offsets since the previous sample, per second); None without samples covering at
    least half of the window.

    Summing rate x interval over the samples inside the window telescopes to the
    committed offsets' growth over exactly that window: the same window as the lag's,
    so the figure does not depend on how the generators' count was sampled. The old
    figure, the generators' count slope minus the lag's slope, read 892 records/s of a
    calibrated SUT of 1,100 probed at 5,200 (docs/measurements-log.md).

    ``grid``: the series sampled at every sample time (the lag), whose previous time
    bounds each rate's interval; the first rate has no previous sample of its own."""
    if processed is None or end <= start:
        return None
    t = np.asarray(processed.timestamps, dtype=float)
    v = np.asarray(processed.values, dtype=float)
    if t.size < 1 or t.shape != v.shape:
        return None
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    times = np.unique(np.concatenate([t, np.asarray(grid.timestamps if grid is not None else [], dtype=float)]))
    eps = 1e-6
    total = covered = 0.0
    for ti, vi in zip(t, v, strict=True):
        before = times[times < ti]
        if before.size == 0 or not math.isfinite(vi):
            continue
        previous = float(before[-1])
        if previous >= start - eps and ti <= end + eps:
            total += float(vi) * (float(ti) - previous)
            covered += float(ti) - previous
    if covered <= 0 or covered < 0.5 * (end - start):
        return None
    return max(total / covered, 0.0)


def batches_read(lag: Series, warmup: float, rows: Series | None, ends: Series | None) -> BatchRate | None:
    """The rows the SUT's own batch report says it read after the warm-up (counted from
    the lag's first sample, as every series of the probe), where it holds the
    :data:`MIN_DRAINS` batch ends the probe needs; else the last whole batch that ended
    after the warm-up (:func:`last_batch_read`); None otherwise (the lag decides)."""
    if not lag.timestamps:
        return None
    read = rate_between_ends(rows, ends, float(min(lag.timestamps)) + float(warmup))
    if read is not None and read.ends >= MIN_DRAINS:
        return read
    return last_batch_read(lag, warmup, rows, ends)


def last_batch_read(lag: Series, warmup: float, rows: Series | None, ends: Series | None) -> BatchRate | None:
    """The rows per second of the one whole batch that ended after the warm-up: from the
    batch end before it to its own, where that earlier end is not the SUT's first.

    Far above its capacity a micro-batch SUT reads all that waits, so each batch takes
    the load's multiple of the last one's time (at twice its capacity, twice as long):
    after a start-up batch of ~20 s, a 60-s probe sees one batch end after its warm-up.
    The committed offsets' growth over the window then counts one or two batches of
    hundreds of thousands of records whole or not at all: UC1 at a quarter core read
    9,764 records/s, at 0.204 core 4,827, where 7,200 then passed on one instance. That
    one batch's rows over its own time is exact. The first batch end (the query's
    start) and the batch after it (the JVM warming up: 16,000 rows in 22 s where the
    next read 265,000 in 35 s) are not the SUT's rate."""
    if not lag.timestamps:
        return None
    pairs = batch_ends(rows, ends, float("-inf"))
    after = float(min(lag.timestamps)) + float(warmup)
    later = [i for i, (t, _) in enumerate(pairs) if t >= after]
    if not later or later[0] < 2:
        return None
    (t0, r0), (t1, r1) = pairs[later[0] - 1], pairs[-1]
    if t1 <= t0:
        return None
    return BatchRate(rate=max(r1 - r0, 0.0) / (t1 - t0), ends=len(pairs) - later[0] + 1, seconds=t1 - t0)


def batch_commits(lag: Series, warmup: float, rate: float) -> np.ndarray | None:
    """The commit times after the warm-up of a micro-batch lag (one that rises at nearly
    the whole input rate between its falls); None for a lag consumed continuously."""
    if not rises_between_commits(lag, warmup, rate):
        return None
    return commit_times(*slo_math.after_warmup(lag, warmup))


def written_rate(generated: Series | None, warmup: float) -> float | None:
    """The records/s the generators wrote after the warm-up (the slope of their count), or
    None without enough of their samples."""
    if generated is None:
        return None
    gt, gv = slo_math.after_warmup(generated, warmup)
    if gt.size < slo_math.MIN_SAMPLES or float(gt[-1] - gt[0]) <= 0:
        return None
    return max(slo_math.slope(gt, gv)[0], 0.0)


def probe_complete(series: Mapping[str, Series], warmup: float, rate: float) -> bool:
    """Whether the probe has what :func:`measure` needs: a lag consumed continuously needs
    nothing more than the probe's length; a micro-batch SUT needs :data:`MIN_DRAINS`
    batch ends after the warm-up, from its own report or else from its lag's commits."""
    lag = series.get("lag")
    if lag is None:
        return True
    if batches_read(lag, warmup, series.get("spark-input-rows"), series.get("spark-batch-end")) is not None:
        return True
    written = written_rate(series.get("generated-records"), warmup)
    commits = batch_commits(lag, warmup, rate if written is None else written)
    return commits is None or commits.size >= MIN_DRAINS


def generator_behind(probe: Probe) -> bool:
    """Whether the probe's generators wrote clearly less than the load asks for."""
    return probe.input_rate is not None and probe.input_rate < GENERATOR_SHARE * probe.load_rate


def predict_demand(rates: Mapping[float, float], resources: Sequence[float], per_instance: float
                   ) -> dict[float, float | None]:
    """Per load, the least resource amount whose instances process its records/s.

    The amount needed is compared with the resource values as it is, not rounded up to
    a whole number first: a resource type of cores per instance (0.25, 0.5, ...) needs
    0.5 for 0.375 of the probe's unit, where rounding up asked for 1."""
    out: dict[float, float | None] = {}
    for load, rate in rates.items():
        if per_instance <= 0:
            out[load] = None
            continue
        need = rate / (per_instance * (1.0 + RATE_TOLERANCE))
        out[load] = next((r for r in sorted(resources) if r >= need * (1.0 - 1e-9)), None)
    return out


def predict_capacity(rates: Mapping[float, float], resources: Sequence[float], per_instance: float
                     ) -> dict[float, float | None]:
    """Per resource amount, the heaviest load whose records/s its instances process."""
    out: dict[float, float | None] = {}
    for r in resources:
        fits = [load for load, rate in rates.items() if rate <= r * per_instance * (1.0 + RATE_TOLERANCE)]
        out[r] = max(fits, key=lambda load: rates[load]) if fits else None
    return out


def guesses(prediction: Mapping[float, float | None], values: Sequence[float]) -> dict[float, int]:
    """The search's start index per key: the predicted value's index among ``values``;
    a prediction beyond them starts at the last one."""
    index = {v: i for i, v in enumerate(values)}
    return {k: index.get(p, len(values) - 1) if p is not None else len(values) - 1 for k, p in prediction.items()}


def write(path: Path, prediction: Prediction) -> None:
    path.write_text(json.dumps(prediction.to_json(), indent=2, sort_keys=False) + "\n", encoding="utf-8")


def stored_probe(data: Mapping[str, Any] | None) -> Probe | None:
    """The probe of a stored prediction file, or None when there is none or it does not
    read as one: ``--resume`` then probes again rather than predict from a broken file."""
    raw = (data or {}).get("probe")
    if not isinstance(raw, Mapping):
        return None
    try:
        probe = Probe(**{k: raw[k] for k in Probe.__dataclass_fields__ if k in raw})
    except TypeError:  # a field missing
        return None
    numbers = (probe.load, probe.resources, probe.load_rate, probe.lag_slope, probe.per_instance_rate, probe.seconds)
    if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in numbers):
        return None
    if not isinstance(probe.saturated, bool) or probe.per_instance_rate < 0 or not isinstance(probe.source, str):
        return None
    return probe


def read(path: Path) -> dict[str, Any] | None:
    """The stored prediction file, or None when the run had none (or it is unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def describe(prediction: Prediction) -> str:
    """One line for the printed table: each predicted entry, whether it was right, the hit rate."""
    def value(v: float | None) -> str:
        return "none" if v is None else f"{v:g}"

    def mark(k: float) -> str:
        # an entry the run never measured (a lower bound found nothing) is neither right nor wrong
        hit = prediction.hits.get(k)
        return " (not measured)" if hit is None else "" if hit else " (wrong)"

    entries = ", ".join(f"{k:g}: {value(v)}{mark(k)}" for k, v in prediction.predicted.items())
    rate = prediction.hit_rate()
    bound = "" if prediction.probe.saturated else ", probe not saturated: a lower bound, demands over-estimated"
    if generator_behind(prediction.probe):
        bound += (f", its generators wrote {prediction.probe.input_rate:,.0f} of the load's "
                  f"{prediction.probe.load_rate:,.0f} records/s")
    return (f"  predicted ({prediction.probe.per_instance_rate:,.0f} records/s per instance{bound}): {entries}; "
            f"right {sum(prediction.hits.values())} of {len(prediction.hits)}"
            + ("" if rate is None else f" ({rate:.0%})"))
