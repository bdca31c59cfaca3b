"""A sample with no data is missing, never zero (issue 22, item 1): an all-NaN Prometheus
answer is no lag of 0, a series without a single value leaves no file of NaN, and the
report says why such an SLI is absent; the report shows the informational SLIs and
writes numbers as people do (10,000, not 1e+04)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bench.analysis.report import build_report
from bench.analysis.runs import open_run
from bench.api import Series
from bench.results.info import NO_DATA, summarise, write_info
from bench.results.store import ResultStore
from bench.runtime.prometheus import PrometheusSource

from tests.unit.test_report import make_report_run


async def test_an_all_nan_prometheus_answer_is_missing_not_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    source = PrometheusSource("http://prometheus.invalid")

    async def answer(query: str, at: float | None = None) -> list[tuple[str, float, float]]:
        return [("partition=0", 1.0, math.nan), ("partition=1", 1.0, math.nan)]

    monkeypatch.setattr(source, "query", answer)
    assert math.isnan(await source.value("lag"))

    async def partly(query: str, at: float | None = None) -> list[tuple[str, float, float]]:
        return [("partition=0", 1.0, math.nan), ("partition=1", 1.0, 7.0)]

    monkeypatch.setattr(source, "query", partly)
    assert await source.value("lag") == 7.0


def test_a_series_without_data_leaves_no_file_and_the_summary_says_why(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    empty = Series([1.0, 2.0, 3.0], [math.nan] * 3)
    full = Series([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    written = write_info(store, 1000, 1, 0, {"latency-p99": empty, "input-rate": full})
    assert [p.name for p in written] == ["exp0_1000_1_info_input-rate_0.csv"]
    summary = summarise({"latency-p99": [empty], "input-rate": [full]}, warmup=0.0)
    assert summary["latency-p99"] == {"samples": 0, "repetitions": 1, "absent": NO_DATA}
    assert summary["input-rate"]["samples"] == 3


def _with_info(folder: Path) -> None:
    """The report run plus informational series and summaries, as bench run writes them."""
    make_report_run(folder, 0, capacity=10_000, seed=1)
    path = folder / "exp0-result.json"
    doc = json.loads(path.read_text())
    store = ResultStore(folder, 0)
    for e in doc["experiments"]:
        rate = Series([1.0, 2.0, 3.0], [12_345.6, 12_345.6, 12_345.6])
        write_info(store, e["load"], e["resources"], 0, {"input-rate": rate})
        e["info"] = summarise({"input-rate": [rate], "latency-p50": [Series([1.0], [math.nan])]}, 0.0)
    path.write_text(json.dumps(doc))


def test_the_report_shows_informational_slis_and_why_some_are_absent(tmp_path: Path) -> None:
    _with_info(tmp_path)
    run = open_run(tmp_path)
    assert {f.name for f in run.info} == {"input-rate"}
    html = build_report([run])
    assert "no other SLIs stored" not in html
    assert "informational SLIs" in html and "input-rate" in html
    assert "latency-p50: no series stored: sampled, but no sample had a value" in html


def test_the_report_writes_loads_and_rates_as_people_do(tmp_path: Path) -> None:
    _with_info(tmp_path)
    html = build_report([open_run(tmp_path)])
    assert "12,346" in html  # the input rate's mean
    assert ">1,000</td>" in html and ">3,000</td>" in html  # loads and target records/s
    assert "e+0" not in html


def test_an_older_run_s_files_of_nan_are_reported_absent(tmp_path: Path) -> None:
    make_report_run(tmp_path, 0, capacity=1000, seed=1)
    (tmp_path / "exp0_1000_1_info_latency-p99_0.csv").write_text(
        "labels,timestamp,value\n,1.000,nan\n,2.000,nan\n")
    html = build_report([open_run(tmp_path)])
    assert "latency-p99: no series stored: sampled, but no sample had a value" in html
