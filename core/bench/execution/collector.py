"""The SLI samples of one repetition: the sampling loop and the series it fills.

The loop samples every ``sampleInterval`` seconds from the moment the generators
started until ``duration`` has passed, or until the SLO evaluator says the rest of the
repetition can no longer change the verdict (early stopping; denser samples in between
feed that decision only, ``earlySampleInterval``). Sleeps are measured
against the start, not chained, so slow samples do not stretch the repetition.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bench.api import EarlyDecision, ExperimentSpec, Platform, Series
from bench.config.base import ExecutionParams
from bench.execution.config import ProgressFn
from bench.slo.early_stop import described
from bench.slo.evaluator import SloEvaluator

#: (the series so far, seconds since the start) -> whether the samples suffice
Until = Callable[[dict[str, Series], float], bool]


@dataclass
class Samples:
    """One repetition's series by SLI name, and whether early stopping ended it."""

    series: dict[str, Series] = field(default_factory=dict)
    early: bool = False
    #: with early stopping on, why the repetition ended early, or what was still
    #: undecided when it ran its full duration ("SLO: reason", ``early_stop.described``)
    early_decisions: list[str] = field(default_factory=list)
    #: SLO name -> [low, high] of each trend decision that ended the repetition
    decided: dict[str, list[float]] = field(default_factory=dict)

    def add(self, values: dict[str, float], timestamp: float, labels: str) -> None:
        for name, value in values.items():
            s = self.series.setdefault(name, Series([], [], labels=labels))
            s.timestamps.append(timestamp)
            s.values.append(float(value))


class SliCollector:
    def __init__(
        self,
        platform: Platform,
        evaluator: SloEvaluator,
        settings: ExecutionParams,
        progress: ProgressFn,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
        eta: Callable[[float], str],
    ) -> None:
        self.platform = platform
        self.evaluator = evaluator
        self.settings = settings
        self.progress = progress
        self.clock = clock
        self.sleep = sleep
        #: the time left for the whole run, given the seconds spent in this repetition
        self.eta = eta

    async def collect(self, spec: ExperimentSpec, label: str, deciding: Sequence[str] | None = None,
                      until: Until | None = None) -> Samples:
        """Sample the running SUT and generators until the repetition is over, or until
        ``until(series, elapsed)`` says the samples suffice (the prediction's probe).

        With early stopping and ``earlySampleInterval`` shorter than ``sampleInterval``,
        the loop ticks ``k`` times per recorded sample; every tick feeds the early
        decision, every ``k``-th (and the last) is recorded, at the times the plain
        loop would record them. ``deciding``: the SLOs whose decisions end the repetition
        early (None: every SLO)."""
        ex = self.settings
        samples, dense = Samples(), Samples()
        per_record = self.ticks_per_sample()
        step = ex.sampleInterval / per_record
        started = self.clock()
        next_tick = started
        tick = 0
        open_decisions: list[EarlyDecision] = []  # the SLOs the last early check left undecided
        while True:
            raise_if_cancelled()
            sample = await self.platform.sample(spec)
            elapsed = self.clock() - started
            if tick % per_record == 0 or elapsed >= ex.duration:
                samples.add(sample.values, sample.timestamp, spec.group_id)
            if per_record > 1:
                dense.add(sample.values, sample.timestamp, spec.group_id)
            lag = sample.values.get("lag")
            self.progress(
                f"{label}: {elapsed:5.0f}/{ex.duration:g} s"
                + (f"  lag={lag:,.0f}" if lag is not None and math.isfinite(lag) else "")
                + f"  ({self.eta(elapsed)} left at most)",
                True,
            )
            if until is not None and until(samples.series, elapsed):
                return samples
            if elapsed >= ex.duration:
                if open_decisions:
                    samples.early_decisions = described(open_decisions)
                    self.progress(f"{label}: ran its full {ex.duration:g} s, undecided early: "
                                  + "; ".join(samples.early_decisions), False)
                return samples
            if ex.earlyStop:
                over, decisions = self.evaluator.early_state(samples.series, spec, elapsed,
                                                             dense.series if per_record > 1 else None, deciding)
                if over:
                    samples.early_decisions = described([d for d in decisions if d.passed is not None])
                    samples.decided = decided_bounds(decisions)
                    self.progress(f"{label}: {', '.join(self.evaluator.early_deciders(deciding))} decided early at "
                                  f"{elapsed:.0f} s (" + "; ".join(samples.early_decisions) + ")", False)
                    samples.early = True
                    return samples
                open_decisions = [d for d in decisions if d.passed is None]
            tick += 1
            next_tick += step
            await self.sleep(max(0.0, min(next_tick - self.clock(), ex.duration - elapsed)))

    def ticks_per_sample(self) -> int:
        """How many samples the loop takes per recorded one: 1 unless early stopping
        asks for denser samples (``earlySampleInterval``), rounded so that the
        recorded ones keep their ``sampleInterval`` grid."""
        ex = self.settings
        if (not ex.earlyStop or not ex.earlySampleInterval or ex.earlySampleInterval >= ex.sampleInterval
                or not self.evaluator.wants_dense()):
            return 1
        return math.ceil(ex.sampleInterval / ex.earlySampleInterval - 1e-9)


def decided_bounds(decisions: Sequence[EarlyDecision]) -> dict[str, list[float]]:
    """The bounds of what each decision that ended a repetition judged (a trend's slope),
    by SLO: what the repetition showed with confidence, kept because its recorded
    samples (one per ``sampleInterval``) may be too few to show it again when the
    verdict's confidence is judged (``bench.analysis.confidence``)."""
    return {d.slo: [float(d.low), float(d.high)] for d in decisions
            if d.passed is not None and d.slo and d.low is not None and d.high is not None
            and math.isfinite(d.low) and math.isfinite(d.high)}


def raise_if_cancelled() -> None:
    """Raise the cancellation (Ctrl-C, SIGTERM) an awaited call swallowed.

    ``asyncio.wait_for`` in Python 3.11 returns its inner call's result when that call
    finishes in the same step as the cancellation, and the cancellation is lost: a
    ``kill`` of a run under a loaded test suite left it sampling on to the end of its
    experiment. The task still counts the request (``cancelling()``), so the sampling loop
    checks it once per sample."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
