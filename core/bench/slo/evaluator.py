"""SLO verdicts: per SLO over all repetitions, and the early decisions that shorten a run.

Each SLO is judged by its registered type (``bench.api.SloType``); the evaluator only
collects the repetitions' series of the SLO's SLI and the context the type needs. The
early decisions, within a repetition and across repetitions, follow
:mod:`bench.slo.early_stop`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from bench.api import EarlyDecision, ExperimentSpec, Series, SloContext, SloVerdict
from bench.config.base import ExecutionParams, SloDef
from bench.config.slo_properties import warmup_of
from bench.numbers import readable
from bench.plugins import Registry
from bench.slo.early_stop import early_state, monotone, settlement


class SloEvaluator:
    def __init__(self, registry: Registry, slos: list[SloDef], settings: ExecutionParams) -> None:
        self.registry = registry
        self.slos = slos
        self.settings = settings

    def sli(self, slo: SloDef) -> str:
        """The name of the SLI whose series ``slo`` is judged on."""
        return self.registry.slos[slo.sloType].sli_name(slo.properties)

    def slis(self) -> dict[str, str]:
        """SLO name -> SLI name, as the result files name them."""
        return {slo.name: self.sli(slo) for slo in self.slos}

    def trend_slos(self) -> list[str]:
        """The SLOs whose verdict is a median of slopes below a threshold, by their types
        (``SloType.is_trend``): those the verdict confidence judges."""
        return [slo.name for slo in self.slos if self.registry.slos[slo.sloType].is_trend(slo.properties)]

    def slo_types(self) -> dict[str, str]:
        """SLO name -> its type's name."""
        return {slo.name: slo.sloType for slo in self.slos}

    def verdicts(
        self, collected: Mapping[str, list[Series]], load: float, resources: float, rate: float
    ) -> dict[str, SloVerdict]:
        """Every SLO's verdict over the repetitions' series (by SLI name), each series as
        its file keeps it (:func:`as_stored`): ``bench analyze`` and a resumed run read the
        files, and must reach this verdict."""
        verdicts: dict[str, SloVerdict] = {}
        for slo in self.slos:
            slo_type = self.registry.slos[slo.sloType]
            sli = self.sli(slo)
            reps = [as_stored(s) for s in collected.get(sli, [])]
            warmup = warmup_of(slo.properties, self.settings.warmup)
            ctx = SloContext(load=load, resources=resources, warmup=warmup, properties=slo.properties,
                             load_rate=rate)
            if not reps:
                verdicts[slo.name] = SloVerdict(False, {"error": f"no samples of SLI {sli!r} were recorded"})
                continue
            verdict = slo_type.check(reps, ctx)
            verdict.details.setdefault("warmup", warmup)
            verdicts[slo.name] = verdict
        return verdicts

    def early_state(self, series: dict[str, Series], spec: ExperimentSpec, elapsed: float,
                    dense: Mapping[str, Series] | None = None,
                    only: Sequence[str] | None = None) -> tuple[bool, list[EarlyDecision]]:
        """Whether the rest of this repetition can no longer change the experiment's verdict,
        and each SLO's decision so far (``dense``: the SLIs sampled between the recorded
        samples, see ``decide``; ``only``: the SLOs the earlier repetitions left open, the
        others being settled whatever this one shows)."""
        return early_state(self._only(only), self.registry, series, self.settings, spec, elapsed, dense)

    def _only(self, names: Sequence[str] | None) -> list[SloDef]:
        return self.slos if names is None else [slo for slo in self.slos if slo.name in names]

    def wants_dense(self) -> bool:
        """Whether denser samples could decide anything early (``SloType.uses_dense``)."""
        return any(slo.sloType in self.registry.slos and self.registry.slos[slo.sloType].uses_dense(slo.properties)
                   for slo in self.slos)

    def early_deciders(self, only: Sequence[str] | None = None) -> list[str]:
        """The names of the SLOs whose type can end a repetition early (for the progress line)."""
        return [slo.name for slo in self._only(only)
                if slo.sloType in self.registry.slos and self.registry.slos[slo.sloType].can_decide_early()]

    def settlement(
        self, collected: dict[str, list[Series]], load: float, resources: float, rate: float, remaining: int
    ) -> tuple[bool | None, list[str]]:
        """The experiment's verdict if the repetitions not yet run cannot change it (else
        None), and the SLOs they could still turn (why the experiment goes on)."""

        def check(reps: dict[str, list[Series]]) -> dict[str, bool]:
            return {name: v.passed for name, v in self.verdicts(reps, load, resources, rate).items()}

        unbracketed = [slo.name for slo in self.slos if not monotone(slo.properties)]
        return settlement(check, collected, [self.sli(slo) for slo in self.slos], remaining, unbracketed)


def as_stored(series: Series) -> Series:
    """The series as its SLI file holds it (``bench.results.store.series_csv``): timestamps
    to the millisecond, samples without a value left out. Judged in this form, a sample
    a fraction of a millisecond before the warm-up cut cannot count in the run and not
    in the analysis of its files (or the reverse)."""
    kept = [(float(f"{ts:.3f}"), float(v)) for ts, v in zip(series.timestamps, series.values, strict=True)
            if math.isfinite(float(v))]
    return Series([ts for ts, _ in kept], [v for _, v in kept], series.labels)


def summary(verdict: SloVerdict) -> str:
    """A verdict's main numbers for the progress line."""
    d = verdict.details
    if "error" in d:
        return f"error: {d['error']}"
    parts = []
    for key in ("median", "aggregate", "ratio", "max_ratio", "threshold"):
        if key in d and isinstance(d[key], int | float):
            parts.append(f"{key}={readable(d[key])}")
    return " ".join(parts) or ("pass" if verdict.passed else "fail")
