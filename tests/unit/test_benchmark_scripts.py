"""The measuring scripts of issue 26 ask for what they claim, and judge their results right.

The measurements themselves take minutes to hours on Spark (benchmarks/); here the
procedures they configure are resolved as ``bench run`` would resolve them, and their
comparisons run on made-up records.
"""

from __future__ import annotations

import argparse
import importlib
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from bench.cli.launch import resolve_run
from bench.execution.deployment import build_objects
from bench.results.store import ExperimentRecord
from bench.runtime import instrumentation

from tests.unit import verdict_runs

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def script(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A script run as a user runs it (its own parser, its own process)."""
    return subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def ttv_args(**over: Any) -> argparse.Namespace:
    base = {"capacity": 1000.0, "cpu_per_instance": 0.25, "duration": 300.0, "warmup": 60.0, "repetitions": 3,
            "predict": False, "conf": []}
    return argparse.Namespace(**{**base, **over})


@pytest.mark.parametrize("plugin", ["calibrated", "uc1", "uc3"])
def test_the_reference_procedure_and_benchs_default_differ_only_where_they_should(plugin: str,
                                                                                  tmp_path: Path) -> None:
    ttv = script("time_to_verdict")
    registry = verdict_runs.registry()
    resolved = {}
    for mode in ("reference", "default", "predict"):
        opts = ttv.options(ttv_args(), plugin, mode, tmp_path / mode, tmp_path / "none.yaml", [10000.0, 40000.0],
                           [1.0, 2.0, 3.0])
        opts.pop("execution_file")
        opts["dry_run"] = True
        resolved[mode] = (resolve_run(registry, opts), opts)
    ref, default = resolved["reference"][0].execution.execution, resolved["default"][0].execution.execution
    assert (ref.earlyStop, default.earlyStop) == (False, True)
    assert ref.strategy.resolved() == ("linear", True)
    assert ref.repetitions == default.repetitions == 3 and ref.duration == default.duration == 300
    assert resolved["predict"][1]["predict"] and not resolved["default"][1]["predict"]
    prepared = resolved["reference"][0]
    objects = build_objects(registry, prepared.benchmark, prepared.execution, prepared.params, 10000.0, 1.0)
    sut = next(o for o in objects if o.get("kind") == "BenchSut")
    assert sut["spec"].get("cpuPerInstance") == (0 if plugin == "calibrated" else 0.25)


def test_a_spark_setting_given_to_the_scripts_reaches_every_procedures_sut(tmp_path: Path) -> None:
    ttv = script("time_to_verdict")
    registry = verdict_runs.registry()
    jit = "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"
    for mode in ("reference", "default"):
        opts = ttv.options(ttv_args(conf=[jit]), "uc3", mode, tmp_path / mode, tmp_path / "none.yaml", [1500.0],
                           [1.0])
        opts.pop("execution_file")
        opts["dry_run"] = True
        conf = resolve_run(registry, opts).platform_options["spark_conf"]
        assert conf["spark.driver.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"


def record(load: float, resources: float, passed: bool, **slo: Any) -> ExperimentRecord:
    r = ExperimentRecord(load=load, resources=resources, passed=passed, started=0.0)
    r.outcome, r.finished, r.slos = ("passed" if passed else "failed"), 10.0, {"lag": {"median": 1.5, **slo}}
    return r


def test_every_differing_verdict_is_listed_with_both_sides() -> None:
    ttv = script("time_to_verdict")
    result = ttv.UseCaseResult("uc1")
    reference = ttv.Run("reference", 100.0, {1.0: 2.0}, [record(1, 1, False), record(1, 2, True, slope=3.0)], "", "")
    ours = ttv.Run("default", 20.0, {1.0: 1.0}, [record(1, 1, True), record(1, 2, True)], "", "")
    ttv.compare(result, ours, reference, "round 1 uc1")
    assert result.compared == 2 and result.tables_same == 0 and result.pairs == 1
    [line] = result.differing
    assert "load 1 x 1: passed" in line and "reference: load 1 x 1: failed" in line
    result.runs["reference"].append(reference)
    result.runs["default"].append(ours)
    assert "| uc1 | 100.0 s | 20.0 s | **0.200** | 2 | 1 | 0 of 1 |" in ttv.table_line("uc1", result)


def test_reproducibility_checks_the_differences_against_the_flags() -> None:
    repro = script("reproducibility")
    same = [repro.Run({1.0: 1.0, 2.0: 2.0}, set(), 1.0, "", "") for _ in range(3)]
    assert repro.agreement(same)[:3] == (1.0, [], True)
    flagged = [*same[:2], repro.Run({1.0: 1.0, 2.0: 3.0}, {2.0}, 1.0, "", "")]
    assert repro.agreement(flagged)[:3] == (0.5, [2.0], True)
    unflagged = [*same[:2], repro.Run({1.0: 1.0, 2.0: 3.0}, set(), 1.0, "", "")]
    assert repro.agreement(unflagged)[:3] == (0.5, [2.0], False)
    assert repro.never_flagged([2.0], set()) == [2.0]
    # UC1 at its defaults (docs/measurements-log.md): 1.0 flagged but agreed, 2.0 differed and was flagged
    cautious = [*flagged[:2], repro.Run({1.0: 1.0, 2.0: 3.0}, {1.0, 2.0}, 1.0, "", "")]
    rate, differing, exact, flags = repro.agreement(cautious)
    assert (rate, differing, exact) == (0.5, [2.0], False) and repro.never_flagged(differing, flags) == []
    # a flagged entry that agreed is caution; "NO" is for a difference no run flagged
    assert repro.flags_cell(exact, repro.never_flagged(differing, flags)) == "no: flagged, agreed"
    assert repro.flags_cell(False, [2.0]) == "NO" and repro.flags_cell(True, []) == "yes"


def test_the_bare_sut_switch_and_the_observer_scripts_window(monkeypatch: pytest.MonkeyPatch) -> None:
    observer = script("observer_effect")
    assert instrumentation.enabled()
    monkeypatch.setenv(instrumentation.ENV, "1")
    assert not instrumentation.enabled()
    samples = [(0.0, {"input-rate": 0.0}), (10.0, {"input-rate": 500.0}), (30.0, {"input-rate": 900.0}),
               (40.0, {"input-rate": 1100.0})]
    assert observer.after_warmup(samples, 20.0, "input-rate") == [900.0, 1100.0]


def test_the_switch_turns_off_one_part_or_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits and samplers can be switched off one by one, to tell which costs what."""
    monkeypatch.setenv(instrumentation.ENV, "commits")
    assert not instrumentation.enabled("commits") and instrumentation.enabled("samplers")
    assert not instrumentation.enabled()  # not everything is on
    monkeypatch.setenv(instrumentation.ENV, "samplers")
    assert instrumentation.enabled("commits") and not instrumentation.enabled("samplers")
    monkeypatch.setenv(instrumentation.ENV, "1")
    assert not any(instrumentation.enabled(p) for p in instrumentation.PARTS)
    monkeypatch.delenv(instrumentation.ENV)
    assert all(instrumentation.enabled(p) for p in instrumentation.PARTS) and instrumentation.enabled()


def test_the_observer_script_counts_batch_ends_not_samples() -> None:
    """One batch sampled many times is one end; a window without enough ends has no rate
    (one UC1 batch outlasting the window gave "0 records/s read, 28 batches")."""
    observer = script("observer_effect")
    one_long_batch = [(float(t), 65_577.0) for t in range(60, 120, 2)]
    assert observer.batch_ends(one_long_batch) == 0
    steady = [(float(t), 1_000.0 * (t // 6)) for t in range(60, 120, 2)]
    assert observer.batch_ends(steady) == 9
    assert observer.batch_ends(steady) >= observer.MIN_BATCH_ENDS


def test_the_observer_script_divides_rows_by_the_drivers_batch_ends() -> None:
    """Batches of 6,000 rows ending every 6.5 s, sampled every 2 s: 923 records/s between
    the first and the last end after the warm-up, wherever the samples fall; without the
    driver's batch ends, the sampled count's slope."""
    observer = script("observer_effect")
    ends = [6.5 * k for k in range(1, 20)]
    samples = []
    for t in range(0, 120, 2):
        done = [e for e in ends if e <= t]
        samples.append((float(t), {"spark-input-rows": 6_000.0 * len(done),
                                   "spark-batch-end": done[-1] if done else 0.0}))
    rows = observer.after_warmup_points(samples, 40.0, "spark-input-rows")
    rate, counted = observer.window_rate(samples, 40.0, rows)
    assert rate == pytest.approx(6_000.0 / 6.5) and counted == len([e for e in ends if 40.0 <= e <= 118.0])
    without = [(t, {"spark-input-rows": v["spark-input-rows"]}) for t, v in samples]
    rate, counted = observer.window_rate(without, 40.0, rows)
    assert counted == 0 and rate == pytest.approx(observer.slope(rows))


def test_the_observer_script_cancels_the_order_of_a_pairs_runs() -> None:
    """A first run that reads 10 % more, whichever side it is, and instrumentation that
    costs 2 %: pairs in one order read 0.98 x 1.1, in the other 0.98 / 1.1. The median of
    three pairs, two in one order, says 1.078; the balanced ratio says 0.98."""
    observer = script("observer_effect")
    pairs = [(0.98 * 1.1, True), (0.98 / 1.1, False), (0.98 * 1.1, True)]
    ratio, order = observer.order_balanced(pairs)
    assert ratio == pytest.approx(0.98) and order == pytest.approx(1.1)
    assert observer.order_balanced([(1.0, True), (0.9, True)]) is None  # one order only: nothing cancels


def test_the_observer_scripts_interval_pools_the_noise_around_each_orders_mean() -> None:
    """Three pairs of a 2 % effect and a 10 % order effect, the two first-order pairs 1 %
    either side of their mean: the interval is centred on 0.98 in log terms, its width
    that noise at one degree of freedom, and the order's 10 % adds nothing to it."""
    pairs = script("_pairs")
    e = pytest.approx
    ratios = [(0.98 * 1.1 * math.exp(0.01), True), (0.98 * 1.1 * math.exp(-0.01), True), (0.98 / 1.1, False)]
    low, high = pairs.balanced_interval(ratios)
    half = 12.706 * math.sqrt(0.01**2 * 2 / 1 * (1 / 2 + 1)) / 2
    assert (math.log(low), math.log(high)) == (e(math.log(0.98) - half, rel=1e-3), e(math.log(0.98) + half, rel=1e-3))
    # the same spread with twice the pairs: narrower, about the same centre
    others = [(0.98 / 1.1 * math.exp(0.01), False), (0.98 / 1.1 * math.exp(-0.01), False), (0.98 * 1.1, True)]
    more = pairs.balanced_interval(ratios + others)
    assert more[0] > low and more[1] < high and math.sqrt(more[0] * more[1]) == e(0.98, rel=1e-3)
    assert pairs.balanced_interval(ratios[:2]) is None  # one order only
    assert pairs.balanced_interval([ratios[0], ratios[2]]) is None  # two pairs leave no degree of freedom


def test_the_observer_scripts_goal_is_met_missed_or_not_told_apart() -> None:
    pairs = script("_pairs")
    assert pairs.against_goal((0.985, 1.02), 0.98).endswith(": met")
    assert pairs.against_goal((0.90, 0.97), 0.98).endswith(": missed")
    assert "not told apart from 0.98" in pairs.against_goal((0.93, 1.03), 0.98)
    assert "smaller than 7.0%" in pairs.against_goal((0.93, 1.03), None)  # an A/A run: what it can see
    assert "1 lies outside it" in pairs.against_goal((1.05, 1.20), None)  # a setting's A/B run, or a biased A/A
    assert "fewest" in pairs.against_goal(None, 0.98)


def test_the_observer_script_marks_a_sut_that_kept_up() -> None:
    """A SUT that read all that was written was not saturated: its rate is the generators',
    and a ratio of two such rates says nothing of the instrumentation's cost."""
    observer = script("observer_effect")
    kept = observer.Measured("bare", 19_900.0, 0.0, 9, "", "", written=20_000.0)
    behind = observer.Measured("bare", 12_000.0, 0.0, 9, "", "", written=20_000.0)
    unknown = observer.Measured("bare", 12_000.0, 0.0, 9, "", "")
    assert kept.kept_up and not behind.kept_up and not unknown.kept_up
    counts = [(float(t), 20_000.0 * t) for t in range(40, 120, 2)]
    assert observer.slope(counts) == pytest.approx(20_000.0)


def test_the_observer_scripts_sides_together_differ_only_in_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run at once on one platform, the bare side's SUT is spawned and sampled with the
    switch set and the instrumented side's without it; both are sampled over the same
    window, and the switch is unset after (a leak would make every later run bare)."""
    import asyncio
    import os
    from types import SimpleNamespace

    observer = script("observer_effect")
    seen: list[tuple[str, str, str | None]] = []

    class Platform:
        async def open(self) -> None: ...
        async def close(self) -> None: ...
        async def reset_topics(self, spec: Any) -> None: ...
        async def delete_topics(self, spec: Any) -> None: ...
        async def stop_sut(self, spec: Any) -> None: ...
        async def start_generators(self, spec: Any) -> None: ...
        async def stop_generators(self, spec: Any) -> list[Any]:
            return []

        async def start_sut(self, spec: Any) -> None:
            seen.append(("start", spec, os.environ.get(instrumentation.ENV)))

        async def sample(self, spec: Any) -> Any:
            seen.append(("sample", spec, os.environ.get(instrumentation.ENV)))
            return SimpleNamespace(timestamp=float(len(seen)), values={})

    monkeypatch.delenv(instrumentation.ENV, raising=False)
    monkeypatch.setattr(observer, "experiment", lambda registry, opts, mode, cap: (mode, {"platform": "fake"}))
    registry = SimpleNamespace(platforms={"fake": SimpleNamespace(create=lambda options, registry: Platform())})
    for bare_first in (False, True):
        seen.clear()
        both = asyncio.run(observer.measure_together(registry, {}, 0.05, 0.0, 0.01, bare_first, off="commits"))
        assert {m.mode for m in both.values()} == {"instrumented", "bare"}
        starts = [(spec, env) for what, spec, env in seen if what == "start"]
        assert starts == ([("bare", "commits"), ("instrumented", None)] if bare_first
                          else [("instrumented", None), ("bare", "commits")])
        sampled = {(spec, env) for what, spec, env in seen if what == "sample"}
        assert sampled == {("bare", "commits"), ("instrumented", None)}
        assert instrumentation.ENV not in os.environ
    seen.clear()  # an A/A run: both sides spawned and sampled with everything on
    asyncio.run(observer.measure_together(registry, {}, 0.05, 0.0, 0.01, False, off=observer.AA))
    assert {env for _, _, env in seen} == {None} and {spec for _, spec, _ in seen} == {"instrumented", "bare"}
    seen.clear()  # one side alone (the sequential pairs) takes the same path
    bare = asyncio.run(observer.measure(registry, {}, 0.05, 0.0, 0.01, "bare", off="1"))
    assert bare.mode == "bare" and {env for _, _, env in seen} == {"1"}
    assert instrumentation.ENV not in os.environ


def test_the_observer_script_runs_both_sides_at_once_by_default_with_each_use_case_s_cap(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without options a pair runs together (sequential pairs drifted by more than the effect)
    and each use case gets its own per-trigger cap; --no-together and --max-per-trigger
    still choose otherwise. The table's ratio comes from what was measured."""
    observer = script("observer_effect")
    calls: list[tuple[str, str, int | None]] = []

    def measured(mode: str, rate: float) -> Any:
        return observer.Measured(mode, rate, rate, 5, "load average 1.00 1.00 1.00 on 2 cores",
                                 "load average 2.00 2.00 2.00 on 2 cores", written=10 * rate)

    async def together(registry: Any, opts: dict[str, Any], *args: Any, cap: int | None = None,
                       **kw: Any) -> dict[str, Any]:
        calls.append(("together", opts["plugin"], cap))
        return {"instrumented": measured("instrumented", 990.0), "bare": measured("bare", 1000.0)}

    async def alone(registry: Any, opts: dict[str, Any], seconds: float, warmup: float, interval: float,
                    mode: str, cap: int | None = None, off: str = "1") -> Any:
        calls.append(("alone", opts["plugin"], cap))
        return measured(mode, 990.0 if mode == "instrumented" else 1000.0)

    monkeypatch.setattr(observer, "measure_together", together)
    monkeypatch.setattr(observer, "measure", alone)
    monkeypatch.setattr("bench.plugins.load_plugins", lambda: None)
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc1,uc4", "--pairs", "2"])
    assert observer.main() == 0  # 0.990 >= 0.98
    assert calls == [("together", "uc1", 200_000), ("together", "uc4", 50_000)] * 2
    out = capsys.readouterr().out
    assert "both sides at once" in out and "**0.990**" in out
    assert "1.00 1.00 1.00 / 2.00 2.00 2.00; 1.00 1.00 1.00 / 2.00 2.00 2.00 |" in out  # one note per pair
    calls.clear()
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc2", "--pairs", "1", "--no-together",
                                      "--max-per-trigger", "1000"])
    observer.main()
    assert calls == [("alone", "uc2", 1000)] * 2
    seen: list[tuple[str, float, float]] = []

    async def quick(registry: Any, opts: dict[str, Any], seconds: float, warmup: float, *args: Any,
                    **kw: Any) -> dict[str, Any]:
        seen.append((opts["loads"], seconds, warmup))
        return await together(registry, opts, cap=kw.get("cap"))

    monkeypatch.setattr(observer, "measure_together", quick)
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--quick"])
    assert observer.main() == 0
    # both sides at once at a load that leaves them the cores, past the instances' start
    assert seen == [("20000", 75.0, 45.0)]
    confs: list[tuple[str, ...]] = []

    async def with_conf(registry: Any, opts: dict[str, Any], *args: Any, **kw: Any) -> dict[str, Any]:
        confs.append(opts["spark_conf"])
        return await together(registry, opts, cap=kw.get("cap"))

    monkeypatch.setattr(observer, "measure_together", with_conf)
    jit = "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc3", "--pairs", "2", "--conf", jit])
    observer.main()
    assert confs == [(jit,), (jit,)]  # both pairs' sides get the setting
    assert f"--conf {jit}" in capsys.readouterr().out
    jit_key, jit_value = jit.split("=", 1)
    opts = {"plugin": "uc3", "loads": "20000", "resources": "1", "platform_name": "embedded",
            "spark_conf": ("spark.sql.shuffle.partitions=3",), "bare_conf": (jit,)}
    sides = {mode: observer.experiment(verdict_runs.registry(), opts, mode, None) for mode in observer.MODES}
    inst, bare = (sides[mode][0].spark_conf(sides[mode][1]) for mode in observer.MODES)
    assert jit_key not in inst and bare[jit_key] == jit_value  # --bare-conf reaches the bare side only
    assert inst["spark.sql.shuffle.partitions"] == bare["spark.sql.shuffle.partitions"] == "3"  # --conf both


def test_a_local_platform_samples_nothing_of_its_own_with_the_instrumentation_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.platforms import children

    assert children.bare_sample([], [], "e1") is None  # every ordinary run: lag and samplers as always
    monkeypatch.setenv(instrumentation.ENV, "1")
    bare = children.bare_sample([], [], "e1")
    assert bare is not None and "lag" not in bare.values and not any(k.startswith("latency") for k in bare.values)


def test_the_prediction_line_counts_time_saved_and_right_predictions() -> None:
    from bench.search.prediction import Prediction, Probe

    ttv = script("time_to_verdict")
    result = ttv.UseCaseResult("calibrated")
    probe = Probe(2500.0, 1.0, 2500.0, 1500.0, 1000.0, True, 30.0)
    prediction = Prediction("demand", probe, {1500.0: 2.0, 2500.0: 2.0}, {1500.0: 2.0, 2500.0: 3.0})
    note = "load average {} 0.50 0.40 on 2 cores"
    result.runs["default"].append(ttv.Run("default", 200.0, {1500.0: 2.0, 2500.0: 3.0}, [], note.format("0.10"),
                                          note.format("1.10")))
    result.runs["predict"].append(ttv.Run("predict", 150.0, {1500.0: 2.0, 2500.0: 3.0}, [], note.format("1.10"),
                                          note.format("2.20"), prediction))
    assert ttv.predict_line("calibrated", result) == (
        "| calibrated | 200.0 s | 150.0 s | 25.0% | 1 of 2 | 1 of 1 | "
        "0.10 0.50 0.40 / 1.10 0.50 0.40; 1.10 0.50 0.40 / 2.20 0.50 0.40 |")


def test_an_unpaired_reference_is_scaled_to_the_experiments_measured() -> None:
    """UC2 at 43c7424 measured three experiments (one instance failed 20,000 records/s)
    against an earlier reference run of two: the whole-run ratio compared different work."""
    ttv = script("time_to_verdict")
    ours = ttv.Run("default", 1500.0, {}, [record(1, 1, True), record(2, 1, False), record(2, 2, True)], "", "")
    scaled = ttv.unpaired_reference(2000.0, 2, ours)
    assert scaled.seconds == 3000.0 and "estimated: 3 experiments x 1,000.0 s" in scaled.after
    assert ttv.unpaired_reference(2000.0, 3, ours).seconds == 2000.0
    assert ttv.unpaired_reference(2000.0, None, ours).seconds == 2000.0


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCHMARKS.glob("*.py") if not p.stem.startswith("_")))
def test_every_script_has_a_quick_mode_its_help_explains(name: str) -> None:
    """What CI and a reviewer can afford to run: every measuring script has --quick, and
    its --help (the script's own parser, run as a user would) says so."""
    done = run_script(name, "--help")
    assert done.returncode == 0, done.stderr
    assert "--quick" in done.stdout


@pytest.mark.parametrize(("given", "said"), [
    (["--no-reference"], "give --predict too"),
    (["--no-reference", "--predict", "--reference-seconds", "100"], "the first runs no reference"),
])
def test_the_prediction_alone_is_asked_for_consistently(given: list[str], said: str) -> None:
    """--no-reference measures the prediction's saving against bench's default: without
    --predict it would measure nothing, and beside --reference-seconds it contradicts it."""
    done = run_script("time_to_verdict", *given)
    assert done.returncode == 2 and said in done.stderr, done.stderr


def test_an_a_a_run_prints_its_ratio_as_the_comparisons_error_not_against_the_goal(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """With --off none both sides are instrumented: a ratio of 0.9 then is the comparison's
    own spread, so it is printed as such (exit status 0), never as a missed goal."""
    observer = script("observer_effect")
    offs: list[str] = []

    async def together(registry: Any, opts: dict[str, Any], *args: Any, off: str = "1", **kw: Any) -> dict[str, Any]:
        offs.append(off)
        return {mode: observer.Measured(mode, rate, rate, 5, "", "", written=10 * rate)
                for mode, rate in (("instrumented", 900.0), ("bare", 1000.0))}

    monkeypatch.setattr(observer, "measure_together", together)
    monkeypatch.setattr("bench.plugins.load_plugins", lambda: None)
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc1", "--pairs", "1", "--off", "none"])
    assert observer.main() == 0
    out = capsys.readouterr().out
    assert offs == [observer.AA] and "instrumented too (an A/A run)" in out
    assert "A/A run (--off none), both sides instrumented: 0.900" in out and "goal >= 0.98" not in out
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc1", "--pairs", "1"])
    assert observer.main() == 1  # the same figures as an A/B run miss the goal
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc1", "--pairs", "4"])
    assert observer.main() == 1
    assert "uc1: 95 % interval [0.900, 0.900] against the goal of 0.98: missed" in capsys.readouterr().out


def test_an_unstable_verdict_names_the_rule_that_flagged_it() -> None:
    ttv = script("time_to_verdict")
    flagged = record(1, 1, True, confidence={"disagree": True, "inside_noise": False, "step": True})
    flagged.unstable = True
    line = ttv.describe(flagged)
    assert "(unstable: lag: repetitions disagree; lag: one half of a repetition says otherwise)" in line
    assert "margin inside the noise" not in line
    bare = record(1, 1, True)
    bare.unstable = True
    assert "(unstable)" in ttv.describe(bare)
    assert "unstable" not in ttv.describe(record(1, 1, True))


def test_keep_refuses_a_folder_that_holds_files(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}")
    done = run_script("time_to_verdict", "--keep", str(tmp_path))
    assert done.returncode == 2
    assert f"--keep {tmp_path}: the folder is not empty" in done.stderr
    assert (tmp_path / "old.json").read_text() == "{}"
    afile = tmp_path / "old.json"
    done = run_script("time_to_verdict", "--keep", str(afile))
    assert done.returncode == 2 and "a file, not a folder" in done.stderr


def test_keep_leaves_every_runs_results_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ttv = script("time_to_verdict")

    async def fake_run(registry: Any, opts: dict[str, Any], mode: str) -> Any:
        Path(opts["results_dir"]).mkdir(parents=True)
        Path(opts["results_dir"], "exp0.json").write_text(mode)
        return ttv.Run(mode, 10.0, {1000.0: 1.0}, [], "", "")

    monkeypatch.setattr(ttv, "one_run", fake_run)
    keep = tmp_path / "kept"
    monkeypatch.setattr(sys, "argv", ["time_to_verdict.py", "--plugin", "calibrated", "--rounds", "1",
                                      "--loads", "1000", "--keep", str(keep)])
    assert ttv.main() == 0
    assert (keep / "calibrated-reference-0" / "exp0.json").read_text() == "reference"
    assert (keep / "calibrated-default-0" / "exp0.json").read_text() == "default"
    assert f"kept under {keep}" in capsys.readouterr().out


def test_the_observer_script_reads_a_suts_cpu_by_part_from_proc(tmp_path: Path) -> None:
    """The JVM, the Python driver, its Kafka client's threads (librdkafka names them
    ``rdk:``) and the Python workers are told apart by command line and thread name,
    and the instrumentation's share is the driver side's extra CPU over the quota."""
    sut_cpu = script("_sut_cpu")

    def process(pid: int, cmdline: list[str], threads: dict[str, tuple[int, int]]) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in cmdline) + b"\0")
        for n, (name, (utime, stime)) in enumerate(threads.items()):
            task = tmp_path / str(pid) / "task" / str(pid + n)
            task.mkdir(parents=True)
            (task / "comm").write_text(f"{name.split('#')[0]}\n")
            # the command name may hold spaces and parentheses: fields count after the last ")"
            (task / "stat").write_text(f"{pid + n} ({name} (x)) S 1 1 1 0 -1 0 0 0 0 0 {utime} {stime} 0 0 20 0 "
                                      "1 0 100 2000000 500 0\n")

    tck = sut_cpu.TICKS
    process(10, ["/usr/bin/python", "-m", "bench.runtime.spark.driver", "/tmp/spec.json"],
            {"python": (2 * tck, 0), "rdk:main": (tck, 0), "rdk:broker1": (0, tck)})
    process(11, ["/usr/lib/jvm/bin/java", "-cp", "x"], {"java": (50 * tck, 10 * tck), "C2 CompilerThre": (tck, 0)})
    process(12, ["/usr/bin/python", "-m", "pyspark.daemon"], {"python": (3 * tck, 0)})
    seen = sut_cpu.snapshot([10, 11, 12, 99], proc=str(tmp_path))  # 99: gone meanwhile
    assert seen == {"jvm": 61.0, "driver": 2.0, "kafka-client": 2.0, "workers": 3.0}
    later = {**seen, "driver": 3.0, "kafka-client": 2.5}
    assert sut_cpu.cores(seen, later, 10.0) == {"jvm": 0.0, "driver": 0.1, "kafka-client": 0.05, "workers": 0.0}
    assert all(math.isnan(v) for v in sut_cpu.cores(seen, later, 0.0).values())
    inst = {"jvm": 0.24, "driver": 0.004, "kafka-client": 0.001, "workers": 0.0}
    bare = {"jvm": 0.24, "driver": 0.004, "kafka-client": 0.0, "workers": 0.0}
    assert sut_cpu.instrumentation_share(inst, bare, 0.25) == pytest.approx(0.004)


def test_the_observer_script_prints_the_instrumentations_share_of_the_quota(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Each side's CPU by part is printed, and the share of the quota the instrumented
    side's driver and Kafka client used beyond the bare side's, with the bound it gives."""
    observer = script("observer_effect")
    spent = {"instrumented": (0.0040, 0.0010), "bare": (0.0035, 0.0)}

    async def together(registry: Any, opts: dict[str, Any], *args: Any, **kw: Any) -> dict[str, Any]:
        return {mode: observer.Measured(mode, 1000.0, 1000.0, 5, "b", "a", written=1e4,
                                        cpu={"jvm": 0.24, "driver": d, "kafka-client": k, "workers": 0.0})
                for mode, (d, k) in spent.items()}

    monkeypatch.setattr(observer, "measure_together", together)
    monkeypatch.setattr("bench.plugins.load_plugins", lambda: None)
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc3", "--pairs", "2"])
    observer.main()
    out = capsys.readouterr().out
    assert "SUT cores after the warm-up: jvm 0.2400, driver 0.0040, kafka-client 0.0010, workers 0.0000" in out
    # (0.0050 - 0.0035) / 0.25 = 0.6 % of the quota
    assert "+0.60% of 0.25 core" in out and "instrumented / bare >= 0.994 by accounting" in out
    # equal rates, the instrumented side 0.0015 cores more: it got more CPU and bought less with it
    assert "the CPU the SUTs got (instrumented / bare) 1.006, 1.006, their records per CPU-second 0.994, 0.994" in out
    monkeypatch.setattr(sys, "argv", ["observer_effect.py", "--plugin", "uc3", "--pairs", "2", "--off", "none"])
    observer.main()
    out = capsys.readouterr().out  # an A/A run's sides both commit: no share to take, the split still holds
    assert "by accounting" not in out and "the CPU the SUTs got" in out


def test_a_pairs_ratio_splits_into_the_cpu_got_and_the_records_per_cpu_second() -> None:
    sut_cpu = script("_sut_cpu")
    inst = {"jvm": 0.20, "driver": 0.004, "kafka-client": 0.0002, "workers": 0.0}
    bare = {"jvm": 0.23, "driver": 0.004, "kafka-client": 0.0, "workers": 0.0}
    got, per_cpu = sut_cpu.split_ratio(9000.0, inst, 10000.0, bare)
    assert got == pytest.approx(0.2042 / 0.234)
    assert got * per_cpu == pytest.approx(0.9)  # the factors multiply back to the throughput ratio
    assert sut_cpu.split_ratio(9000.0, {}, 10000.0, bare) is None
    assert sut_cpu.split_ratio(0.0, inst, 10000.0, bare) is None
