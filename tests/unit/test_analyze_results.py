"""Result files of new runs: the demand and capacity tables (bench.results.tables), empty rows for
loads with no pass, confidence in the JSON."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from bench.analysis.confidence import annotate
from bench.api import Series
from bench.config.base import ConfigError
from bench.results import tables
from bench.results.store import ExperimentRecord, ResultStore
from bench.results.tables import write_run_table


def test_a_load_with_no_passing_resource_keeps_an_empty_row(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    write_run_table(store, "demand", {1000.0: 1.0, 2000.0: None, 3000.0: 3.0})
    rows = list(csv.reader(open(tmp_path / "exp0_demand.csv")))
    assert rows == [["load", "resources"], ["1000", "1"], ["2000", "null"], ["3000", "3"]]
    write_run_table(store, "capacity", {1.0: None, 2.0: 2000.0})
    rows = list(csv.reader(open(tmp_path / "exp0_capacity.csv")))
    assert rows == [["resource", "loads"], ["1", "null"], ["2", "2000"]]


VERDICTS = [(1000.0, 1.0, False), (1000.0, 2.0, True), (1000.0, 3.0, True), (2000.0, 1.0, False),
            (2000.0, 2.0, False), (3000.0, 3.0, True), (500.0, 2.0, True)]


def test_demand_is_the_least_passing_resources_per_load() -> None:
    table = tables.build("demand", reversed(VERDICTS))
    assert table == {500.0: 2.0, 1000.0: 2.0, 2000.0: None, 3000.0: 3.0}
    assert list(table) == sorted(table)


def test_capacity_is_the_greatest_passing_load_per_resource_amount() -> None:
    assert tables.build("capacity", VERDICTS) == {1.0: None, 2.0: 1000.0, 3.0: 3000.0}


@pytest.mark.parametrize("metric", ["demand", "capacity"])
def test_a_table_reads_back_as_it_was_written(tmp_path: Path, metric: str) -> None:
    table = {1.0: None, 2.5: 1500.0, 4.0: 2.0}
    tables.write_csv(tmp_path / "t.csv", metric, table)
    assert tables.read_csv(tmp_path / "t.csv") == (metric, table)
    assert tables.from_rows(json.loads(json.dumps(tables.to_rows(table)))) == table


def test_the_provisional_table_gives_way_to_the_final_one(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 4)
    write_run_table(store, "demand", {1000.0: None}, final=False)
    assert json.loads((tmp_path / "exp4-result.json").read_text())["complete"] is False
    write_run_table(store, "demand", {1000.0: 2.0})
    assert not (tmp_path / "exp4_demand.provisional.csv").exists()
    doc = json.loads((tmp_path / "exp4-result.json").read_text())
    assert doc["complete"] is True
    assert doc["table"] == [{"key": 1000.0, "value": 2.0, "inferred": False, "undecided": False}]


def _series(slope: float, seed: int, noise: float) -> Series:
    rng = np.random.default_rng(seed)
    t = 1_700_000_000.0 + np.arange(0, 300, 5.0)
    v = slope * (t - t[0]) + rng.normal(0, noise, t.size) + 10000
    return Series(list(t), list(v), "g")


def _record(store: ResultStore, slopes: list[float], threshold: float, noise: float) -> ExperimentRecord:
    fitted = []
    for rep, slope in enumerate(slopes):
        series = _series(slope, rep, noise)
        store.write_series(1000, 1, "lag-trend", rep, series)
        fitted.append(float(np.polyfit(np.asarray(series.timestamps) - series.timestamps[0], series.values, 1)[0]))
    details = {"passed": float(np.median(fitted)) < threshold, "slopes": fitted, "median": float(np.median(fitted)),
               "threshold": threshold, "warmup": 60.0, "intercepts": [0.0] * len(slopes)}
    record = ExperimentRecord(load=1000, resources=1, passed=bool(details["passed"]), slos={"lag-trend": details})
    annotate(record, store, ["lag-trend"])
    store.add_experiment(record)
    return record


def test_clear_verdict_is_stable_and_carries_its_interval(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    _record(store, [100.0, 110.0, 90.0], threshold=2000.0, noise=50.0)
    doc = json.loads((tmp_path / "exp0-result.json").read_text())
    exp = doc["experiments"][0]
    conf = exp["slos"]["lag-trend"]["confidence"]
    assert conf["low"] < conf["median"] < conf["high"] < 2000.0
    assert conf["margin"] == 2000.0 - conf["median"]
    assert exp["unstable"] is False and conf["unstable"] is False


def test_disagreeing_repetitions_are_unstable(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    record = _record(store, [500.0, 2500.0, 3000.0], threshold=2000.0, noise=10.0)
    assert record.unstable
    assert record.slos["lag-trend"]["confidence"]["disagree"] is True


def test_a_margin_inside_the_noise_is_unstable(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    record = _record(store, [1990.0, 1995.0, 1998.0], threshold=2000.0, noise=5000.0)
    conf = record.slos["lag-trend"]["confidence"]
    assert conf["inside_noise"] is True and record.unstable
    assert store.load_previous()[0].unstable  # and it survives --resume


def test_a_generic_trend_slo_gets_its_confidence_in_the_run_too(tmp_path: Path) -> None:
    """The calibrated use case states the lag trend with the ``generic`` type, whose
    verdict carries no ``median``: the engine names the SLOs to judge by their types
    (``SloType.is_trend``), where the verdict's form (a ``median``) left this one
    without a confidence (and without the unstable flag) in every run."""
    from bench.builtin.calibrated import default_benchmark
    from bench.config.base import ExecutionParams
    from bench.config.model import parse_benchmark
    from bench.plugins import load_plugins
    from bench.slo.evaluator import SloEvaluator

    store = ResultStore(tmp_path, 0)
    fitted = []
    for rep, slope in enumerate([500.0, 2500.0, 3000.0]):
        series = _series(slope, rep, 10.0)
        store.write_series(1000, 1, "lag-trend", rep, series)
        fitted.append(float(np.polyfit(np.asarray(series.timestamps) - series.timestamps[0], series.values, 1)[0]))
    details = {"passed": False, "sli": "lag", "queryAggregation": "trend", "repetitionAggregation": "median",
               "operator": "lt", "values": fitted, "aggregate": float(np.median(fitted)), "slopes": fitted,
               "threshold": 2000.0, "warmup": 60.0}
    record = ExperimentRecord(load=1000, resources=1, passed=False, slos={"lag-trend": dict(details)})
    annotate(record, store, [])
    assert "confidence" not in record.slos["lag-trend"]  # an SLO not named is not judged
    evaluator = SloEvaluator(load_plugins(), parse_benchmark(default_benchmark()).slos,
                             ExecutionParams(duration=300, warmup=60, sampleInterval=5))
    assert evaluator.trend_slos() == ["lag-trend"]
    annotate(record, store, evaluator.trend_slos())
    conf = record.slos["lag-trend"]["confidence"]
    assert conf["disagree"] is True and record.unstable
    assert conf["median"] == pytest.approx(details["aggregate"], rel=1e-3)  # fitted after the warm-up


def test_the_printed_table_names_unstable_experiments(tmp_path: Path, capsys: object) -> None:
    from bench.cli.output import print_table
    from bench.results.outcome import RunOutcome

    shaky = ExperimentRecord(load=2000, resources=1, passed=True, unstable=True, outcome="passed")
    firm = ExperimentRecord(load=4000, resources=2, passed=True, outcome="passed")
    print_table(RunOutcome(3, "demand", {2000: 1, 4000: 2}, [shaky, firm], tmp_path))
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "unstable: load=2000 resources=1 passed" in out
    assert "load=4000 resources=2 passed" not in out


def test_the_printed_unstable_line_says_which_slo_by_how_much_and_why(tmp_path: Path, capsys: object) -> None:
    """Not a generic "disagree, noise or step": the figures of the SLO that made it
    unstable, so a user sees whether the verdict missed by a little or by a lot."""
    from bench.cli.output import print_table
    from bench.results.outcome import RunOutcome

    record = _record(ResultStore(tmp_path, 0), [1990.0, 1995.0, 1998.0], threshold=2000.0, noise=5000.0)
    conf = record.slos["lag-trend"]["confidence"]
    print_table(RunOutcome(0, "demand", {1000: 1}, [record], tmp_path))
    line = next(x for x in capsys.readouterr().out.splitlines() if "unstable:" in x)  # type: ignore[attr-defined]
    assert f"lag-trend slope {conf['median']:.4g} in [{conf['low']:.4g}, {conf['high']:.4g}] against 2000" in line
    assert conf["disagree"] and conf["inside_noise"] and not conf["step"]
    assert "(repetitions disagree, margin inside the noise)" in line and "says otherwise" not in line, line


def test_samples_without_a_value_are_not_written_and_the_file_reads_back(tmp_path: Path) -> None:
    """A latency sampler reports NaN for an interval without records; bench's own
    readers refuse non-finite values, so the writer must leave such samples out."""
    from bench.results.store import read_series

    store = ResultStore(tmp_path, 0)
    series = Series([1.0, 2.0, 3.0, 4.0], [5.0, float("nan"), 7.0, float("inf")], "sut-1")
    path = store.write_series(2000, 1, "info_latency-max", 0, series)
    back = read_series(path)
    assert list(back.timestamps) == [1.0, 3.0] and list(back.values) == [5.0, 7.0], back



def test_informational_files_keep_their_gaps_and_pass_the_readers_check(tmp_path: Path) -> None:
    """UC3's latency-max had no value in intervals without output; the informational file
    keeps the gap as ``nan``, and bench analyze must not refuse the whole run for it.
    Infinity is still no sample bench writes."""
    from bench.analysis.inputs import check_series
    from bench.analysis.runs import SliFile
    from bench.results.info import write_info
    from bench.results.store import read_series

    store = ResultStore(tmp_path, 0)
    gaps = Series([1.0, 2.0, 3.0, 4.0], [float("nan"), 8937.0, float("nan"), float("inf")], "sut-1")
    [path] = write_info(store, 1500, 1, 0, {"latency-max": gaps})
    check_series(SliFile(1500, 1, "latency-max", 0, path), informational=True)
    back = read_series(path)
    assert list(back.timestamps) == [1.0, 2.0, 3.0] and back.values[1] == 8937.0
    assert math.isnan(back.values[0]) and math.isnan(back.values[2])
    with pytest.raises(ConfigError, match="value nan is not a finite number"):
        check_series(SliFile(1500, 1, "latency-max", 0, path))  # an SLO series may not
