"""The early-stopping decision on synthetic lag series with known slopes and noise."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from bench.api import Series
from bench.config.base import ExecutionParams, SloDef
from bench.plugins import load_plugins
from bench.slo import early_rules, early_stop

LOAD = 1000.0  # records/s; thresholdRelToRate 0.01 -> 10 records/s
#: each SLO type decides for itself whether and how it stops early
REGISTRY = load_plugins()


def series(slope: float, seconds: float = 60.0, step: float = 1.0, noise: float = 0.0, seed: int = 1,
           sawtooth: float = 0.0, period: float = 5.0) -> Series:
    rng = random.Random(seed)
    t = [1_700_000_000.0 + i * step for i in range(int(seconds / step) + 1)]
    v = [
        max(0.0, 5000.0 + slope * (x - t[0]) + rng.gauss(0.0, noise) + sawtooth * (((x - t[0]) % period) / period))
        for x in t
    ]
    return Series(t, v)


@dataclass
class Spec:
    load: float = LOAD
    resources: float = 1.0
    objects: list[dict[str, Any]] = field(
        default_factory=lambda: [{"kind": "BenchGenerator", "spec": {"sensors": LOAD, "periodMs": 1000}}]
    )


def lag_slo(**props: Any) -> SloDef:
    return SloDef(name="lag-trend", sloType="lag-trend", properties={"thresholdRelToRate": 0.01, **props})


def execution(warmup: float = 10.0, repetitions: int = 3) -> ExecutionParams:
    return ExecutionParams(duration=300, warmup=warmup, sampleInterval=1, earlyStop=True, repetitions=repetitions)


def decide_one(s: Series, slo: SloDef | None = None, warmup: float = 10.0) -> early_stop.Decision:
    [d] = early_stop.decide([slo or lag_slo()], REGISTRY, {"lag": s}, execution(warmup), Spec(), 0.0)
    return d


def test_clear_growth_decides_fail() -> None:
    d = decide_one(series(slope=500.0, seconds=40, noise=200.0))
    assert d.passed is False
    assert d.low is not None and d.low >= 10.0


def test_flat_lag_decides_pass() -> None:
    d = decide_one(series(slope=0.0, seconds=60, noise=2.0))
    assert d.passed is True
    assert d.high is not None and d.high < 10.0


def test_slope_at_threshold_never_decides() -> None:
    # The interval always contains the threshold when the slope sits on it.
    for seconds in (30, 60, 120, 240):
        assert decide_one(series(slope=10.0, seconds=seconds, noise=100.0, seed=seconds)).passed is None


def test_noisy_flat_lag_waits_for_more_samples() -> None:
    noisy = series(slope=0.0, seconds=35, noise=300.0, seed=3)
    assert decide_one(noisy).passed is None
    assert decide_one(series(slope=0.0, seconds=900, noise=300.0, seed=3)).passed is True


def test_nothing_decided_inside_warmup_or_below_min_samples() -> None:
    s = series(slope=5000.0, seconds=15)  # only 5 s after a 10 s warm-up
    assert decide_one(s).passed is None
    assert "need" in decide_one(s).reason
    assert decide_one(series(slope=5000.0, seconds=15), warmup=0.0).passed is None  # span < 20 s


def test_min_samples_property() -> None:
    s = series(slope=500.0, seconds=40, step=4.0)  # 8 samples after warm-up; the SUT consumes half
    assert decide_one(s).passed is None
    assert decide_one(s, lag_slo(earlyStopMinSamples=5)).passed is False


def test_autocorrelated_sawtooth_widens_the_interval() -> None:
    # A micro-batch saw-tooth: residuals are strongly autocorrelated; the naive
    # standard error would call this decided much earlier than the corrected one.
    s = series(slope=0.0, seconds=30, step=0.5, sawtooth=2000.0, period=10.0)
    t, v = early_stop.slo_math.after_warmup(s, 10.0)
    fit = early_stop.fit(t, v)
    assert fit.effective_samples < fit.samples / 3
    assert decide_one(s).passed is None


def alternating(height: float, step: float, **kw: Any) -> Series:
    """A micro-batch lag sampled at an odd multiple of half its cycle (high, low, high,
    ...): :func:`series` with a saw-tooth two samples long."""
    return series(step=step, sawtooth=2 * height, period=2 * step, **kw)


def test_alternating_residuals_shrink_the_error_down_to_the_floor() -> None:
    s = alternating(5000.0, 5.0, slope=0.0, seconds=195)
    t, v = early_stop.slo_math.after_warmup(s, 0.0)
    fit = early_stop.fit(t, v)
    b, a = early_stop.slo_math.slope(t, v)
    r = v - (a + b * t)
    white = math.sqrt(float(r @ r) / (t.size - 2) / float(((t - t.mean()) ** 2).sum()))
    floor = early_rules.MIN_AUTOCORRELATION
    assert fit.stderr == pytest.approx(white * math.sqrt((1 + floor) / (1 - floor)))
    assert fit.effective_samples == fit.samples  # never more degrees of freedom than samples


def test_alternating_recorded_samples_agree_with_a_dense_pass_sooner(monkeypatch: pytest.MonkeyPatch) -> None:
    # UC1's recorded lag on 2 instances: 12.5k, 7.5k, ... every 5 s, flat.
    # 15 samples after the warm-up: its 95 % interval lies below 50 only with the floor.
    recorded = alternating(5000.0, 5.0, slope=0.0, seconds=75, noise=20.0)

    def sure() -> bool | None:
        return early_stop.decide_series(recorded, 0.0, 50.0, confidence=early_stop.REPORTED_CONFIDENCE,
                                        min_samples=3, min_span=0.0).passed

    assert sure() is True
    monkeypatch.setattr(early_rules, "MIN_AUTOCORRELATION", 0.0)
    assert sure() is None


def test_absolute_threshold_and_nan_samples() -> None:
    s = series(slope=0.0, seconds=60, noise=1.0)
    s.values[20] = float("nan")
    d = decide_one(s, SloDef(name="lag-trend", sloType="lag-trend", properties={"threshold": 50.0}))
    assert d.passed is True and d.threshold == 50.0


def test_every_slo_must_be_decided() -> None:
    dropped = SloDef(name="dropped", sloType="dropped-records", properties={})
    s = series(slope=500.0, seconds=40)
    assert early_stop.decided([lag_slo()], REGISTRY, {"lag": s}, execution(), Spec(), 0.0)
    assert not early_stop.decided([lag_slo(), dropped], REGISTRY, {"lag": s}, execution(), Spec(), 0.0)
    assert not early_stop.decided([], REGISTRY, {"lag": s}, execution(), Spec(), 0.0)
    assert not early_stop.decided([lag_slo()], REGISTRY, {}, execution(), Spec(), 0.0)


def test_with_one_repetition_a_decided_fail_is_final() -> None:
    """UC2/UC3 also count dropped records, which no early rule decides: an over-loaded
    single repetition still ends early (it fails whatever the count), a passing one
    runs to the end (the count could still break its bound)."""
    dropped = SloDef(name="dropped", sloType="dropped-records", properties={})
    growing, flat = series(slope=500.0, seconds=40), series(slope=0.0, seconds=60, noise=1.0)
    one = execution(repetitions=1)
    assert early_stop.decided([lag_slo(), dropped], REGISTRY, {"lag": growing}, one, Spec(), 0.0)
    assert early_stop.decide([lag_slo()], REGISTRY, {"lag": flat}, one, Spec(), 0.0)[0].passed is True
    assert not early_stop.decided([lag_slo(), dropped], REGISTRY, {"lag": flat}, one, Spec(), 0.0)
    two = execution(repetitions=2)
    assert not early_stop.decided([lag_slo(), dropped], REGISTRY, {"lag": growing}, two, Spec(), 0.0)


def test_generic_trend_slo_with_operators() -> None:
    s = series(slope=-50.0, seconds=60, noise=5.0)
    for operator, expected in (("lt", True), ("lte", True), ("gt", False), ("gte", False)):
        slo = SloDef(name="g", sloType="generic", properties={
            "sli": "lag", "queryAggregation": "trend", "operator": operator, "threshold": 0.0,
        })
        assert early_stop.decide([slo], REGISTRY, {"lag": s}, execution(), Spec(), 0.0)[0].passed is expected
    mean = SloDef(name="g", sloType="generic", properties={"sli": "lag", "threshold": 0.0})
    assert early_stop.decide([mean], REGISTRY, {"lag": s}, execution(), Spec(), 0.0)[0].passed is None


def test_slo_warmup_property_overrides_execution() -> None:
    s = series(slope=500.0, seconds=40)
    assert decide_one(s, lag_slo(warmup=30.0)).passed is None  # 10 s left
    assert decide_one(s, lag_slo(warmup=5.0)).passed is False


@pytest.mark.parametrize(("p", "dof", "exact"), [(0.995, 5, 4.0321), (0.995, 10, 3.1693), (0.975, 30, 2.0423),
                                                 (0.995, 1000, 2.5808)])
def test_t_quantile(p: float, dof: float, exact: float) -> None:
    assert early_stop.t_quantile(p, dof) == pytest.approx(exact, rel=0.01)


@pytest.mark.parametrize("alternate", [False, True], ids=["noise", "alternating"])
@pytest.mark.parametrize("seed", range(20))
def test_early_verdict_matches_full_length_verdict(seed: int, alternate: bool) -> None:
    """Stopping at the first decision gives the verdict the whole series would give, also
    where the residuals alternate (their autocorrelation floored, not clipped at zero)."""
    rng = random.Random(seed)
    slope = rng.choice([0.0, 2.0, 30.0, 200.0, -5.0])
    full = (alternating(3000.0, 1.0, slope=slope, seconds=300, noise=150.0, seed=seed) if alternate
            else series(slope=slope, seconds=300, noise=150.0, seed=seed))
    for end in range(12, len(full.values)):
        prefix = Series(full.timestamps[:end], full.values[:end])
        d = decide_one(prefix)
        if d.passed is not None:
            assert d.passed is (slope < 10.0), (slope, end, d)
            break


def _checker(*slos: tuple[str, str, dict[str, Any]]) -> Any:
    """check(collected) -> {slo: passed} with the real SLO types, as the engine builds it."""
    from bench.api import SloContext

    registry = REGISTRY

    def check(collected: dict[str, list[Series]]) -> dict[str, bool]:
        out = {}
        for name, slo_type, props in slos:
            kind = registry.slos[slo_type]
            ctx = SloContext(load=LOAD, resources=1.0, warmup=10.0, properties=props, load_rate=LOAD)
            out[name] = kind.check(collected[kind.sli or props["sli"]], ctx).passed
        return out

    return check


def test_a_settled_median_skips_the_remaining_repetitions() -> None:
    check = _checker(("lag", "lag-trend", {"thresholdRelToRate": 0.01}))
    grow, flat = series(slope=500.0), series(slope=0.0, noise=1.0)
    assert early_stop.settled_verdict(check, {"lag": [grow]}, ["lag"], remaining=2) is None
    assert early_stop.settled_verdict(check, {"lag": [grow, grow]}, ["lag"], remaining=1) is False
    assert early_stop.settled_verdict(check, {"lag": [flat, flat]}, ["lag"], remaining=1) is True
    assert early_stop.settled_verdict(check, {"lag": [flat, grow]}, ["lag"], remaining=1) is None
    assert early_stop.settled_verdict(check, {"lag": [flat, flat, flat]}, ["lag"], remaining=0) is None


def test_worst_repetition_slos_settle_on_a_fail_only() -> None:
    check = _checker(("lag", "lag-trend", {"thresholdRelToRate": 0.01}), ("dropped", "dropped-records", {}))
    flat = series(slope=0.0, noise=1.0)
    no_drops = Series(list(flat.timestamps), [0.0] * len(flat.timestamps))
    drops = Series(list(flat.timestamps), [float(i * 100) for i in range(len(flat.timestamps))])
    both = ["lag", "dropped-records"]
    # the lag trend passes for sure, but a later repetition could still drop records
    assert early_stop.settled_verdict(check, {"lag": [flat, flat], "dropped-records": [no_drops] * 2}, both, 1) is None
    # one repetition dropping too many fails the experiment whatever the others do
    assert early_stop.settled_verdict(check, {"lag": [flat], "dropped-records": [drops]}, both, 2) is False
    # what keeps it open is named: the dropped records, not the settled lag trend
    assert early_stop.still_open(check, {"lag": [flat, flat], "dropped-records": [no_drops] * 2}, both, 1) == [
        "dropped"]
    # per SLO: the lag trend is open although the drops settled the experiment (the engine
    # asks only about an experiment that is not settled)
    assert early_stop.still_open(check, {"lag": [flat], "dropped-records": [drops]}, both, 2) == ["lag"]
    assert early_stop.still_open(check, {"lag": [flat, flat], "dropped-records": [no_drops] * 2}, both, 0) == []


def test_dropped_records_by_the_median_settle_as_the_lag_trend_does() -> None:
    """UC2's and UC3's default (the reference's UC2 aggregation): two passing repetitions
    of three settle the experiment; two dropping too many fail it; one of each waits."""
    median = {"repetitionAggregation": "median"}
    check = _checker(("lag", "lag-trend", {"thresholdRelToRate": 0.01}), ("dropped", "dropped-records", median))
    flat = series(slope=0.0, noise=1.0)
    no_drops = Series(list(flat.timestamps), [0.0] * len(flat.timestamps))
    drops = Series(list(flat.timestamps), [float(i * 100) for i in range(len(flat.timestamps))])
    both = ["lag", "dropped-records"]
    assert early_stop.settled_verdict(check, {"lag": [flat, flat], "dropped-records": [no_drops] * 2}, both, 1) is True
    assert early_stop.settled_verdict(check, {"lag": [flat, flat], "dropped-records": [drops] * 2}, both, 1) is False
    assert early_stop.settled_verdict(check, {"lag": [flat], "dropped-records": [drops]}, both, 2) is None
    assert early_stop.still_open(check, {"lag": [flat, flat], "dropped-records": [no_drops, drops]}, both, 1) == [
        "dropped"]


def test_a_mean_across_repetitions_never_settles_early() -> None:
    props = {"sli": "lag", "threshold": 1e9, "operator": "lt"}
    mean = _checker(("mean-lag", "generic", {**props, "repetitionAggregation": "mean"}))
    median = _checker(("median-lag", "generic", props))  # across repetitions: median by default
    flat = series(slope=0.0)
    assert early_stop.settled_verdict(mean, {"lag": [flat, flat]}, ["lag"], remaining=1) is None
    assert early_stop.settled_verdict(median, {"lag": [flat, flat]}, ["lag"], remaining=1) is True


def test_an_slo_type_brings_its_own_early_rule() -> None:
    """The core knows no SLO by name: a third-party type decides through its own hook."""
    from bench.api import EarlyDecision, SloType, SloVerdict
    from bench.plugins import Registry

    def always_fail(s: Series, ctx: Any) -> EarlyDecision:
        return EarlyDecision(False, f"{len(s.values)} samples, warm-up {ctx.warmup:g} s")

    registry = Registry(slos={"mine": SloType("mine", "test", lambda s, c: SloVerdict(False), sli="lag",
                                              decide_early=always_fail)})
    slo = SloDef(name="m", sloType="mine", properties={"warmup": 3})
    [d] = early_stop.decide([slo], registry, {"lag": series(0.0, seconds=5)}, execution(), Spec(), 0.0)
    assert (d.slo, d.passed, d.reason) == ("m", False, "6 samples, warm-up 3 s")
    plain = Registry(slos={"plain": SloType("plain", "test", lambda s, c: SloVerdict(False), sli="lag")})
    no_rule = SloDef(name="n", sloType="plain", properties={})
    [d] = early_stop.decide([no_rule], plain, {"lag": series(0.0)}, execution(), Spec(), 0.0)
    assert d.passed is None and "cannot stop early" in d.reason


def test_an_early_decision_uses_the_verdicts_threshold_form() -> None:
    """10 sensors sending 100 records/s each: the load value is 10, the rate 1000. A lag
    growing 5 records/s passes 1 % of the rate (10) and fails 1 % of the load value (0.1),
    early as at the end."""
    spec = Spec(load=10.0, objects=[{"kind": "BenchGenerator", "spec": {"sensors": 10, "periodMs": 10}}])
    s = series(slope=5.0, seconds=120, noise=0.5)
    decide = lambda slo: early_stop.decide([slo], REGISTRY, {"lag": s}, execution(), spec, 0.0)[0]  # noqa: E731
    by_rate = decide(SloDef(name="lag-trend", sloType="lag-trend", properties={"thresholdRelToRate": 0.01}))
    by_load = decide(SloDef(name="lag-trend", sloType="lag-trend", properties={"thresholdRelToLoad": 0.01}))
    assert by_rate.passed is True
    assert by_load.passed is False
