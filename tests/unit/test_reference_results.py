"""bench analyze reads result folders the reference wrote, in both of its namings.

The files are written here as the reference writes them: repetitions from 1, the
Prometheus label map in ``labels``, whole-second timestamps; the current naming
``exp<id>_<load>_<res>_sli_<slug>_<rep>.csv`` and the older
``exp<id>_<load>_<res>_<slo-type-slug>_<index>_<rep>.csv``. bench's analysis must
find every series and decide as the reference's lag-trend rule decides.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
from bench.analysis.analyze import analyze, run_settings
from bench.analysis.reference_names import parse, slo_name, slug
from bench.analysis.runs import open_run

SLOPES = {(1000, 1): 2.0, (1000, 2): -1.0, (4000, 1): 40.0, (4000, 2): 3.0}


def write(path: Path, slope: float, t0: int = 1_700_000_000, labels: str = "{group=app}") -> None:
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["labels", "timestamp", "value"])
        for i in range(0, 301, 5):
            out.writerow([labels, t0 + i, str(int(500 + slope * i + (7 if (i // 5) % 2 else 0)))])


def reference_folder(tmp_path: Path, current: bool) -> Path:
    for (load, res), rate in SLOPES.items():
        for rep in (1, 2):
            name = (f"exp3_{load}_{res}_sli_consumer_lag_{rep}.csv" if current
                    else f"exp3_{load}_{res}_lag-trend_{rep - 1}_{rep}.csv")
            write(tmp_path / name, rate + (0.1 if rep == 2 else 0.0))
    slo = ({"name": "lag-growth", "sli": "consumer_lag", "warmupSeconds": 30, "threshold": 5} if current
           else {"name": "lag trend", "sloType": "lag trend", "properties": {"threshold": 5, "warmup": 30}})
    slis = [{"name": "consumer_lag", "provider": "prometheus",
             "query": "sum by(group)(kafka_consumergroup_group_lag >= 0)"}]
    (tmp_path / "exp3-benchmark-configuration.json").write_text(json.dumps({"name": "b", "slis": slis,
                                                                            "slos": [slo]}))
    (tmp_path / "exp3-execution-configuration.json").write_text(json.dumps({
        "load": {"loadType": "NumSensors", "loadValues": [1000, 4000]},
        "resources": {"resourceType": "Instances", "resourceValues": [1, 2]},
        "execution": {"strategy": "FullSearch", "duration": 300, "repetitions": 2}}))
    return tmp_path


def test_names_of_both_generations_parse() -> None:
    assert parse("exp3_1000_2_sli_consumer_lag_1.csv") == (3, 1000.0, 2.0, "consumer_lag", 1)
    assert parse("exp0_50000_1_lag-trend_0_1.csv") == (0, 50000.0, 1.0, "lag-trend", 1)
    assert parse("exp0_50000_1_dropped-records_1_lag_2.csv") == (0, 50000.0, 1.0, "dropped-records", 2)
    assert parse("exp0_demand.csv") is None and parse("exp0_1_1_generator_0.json") is None
    assert slug("lag trend") == "lag-trend" and slug("Consumer Lag!") == "consumer-lag"
    assert slo_name("lag-trend", [{"name": "x", "sloType": "lag trend"}]) == "x"


@pytest.mark.parametrize("current", [False, True])
def test_analyze_reads_a_reference_folder(tmp_path: Path, current: bool) -> None:
    folder = reference_folder(tmp_path, current)
    run = open_run(folder)
    files = run.trend_files()
    assert sorted(files) == sorted((float(lo), float(r)) for lo, r in SLOPES)
    assert all([f.repetition for f in group] == [1, 2] for group in files.values())
    result = analyze(run, run_settings(run, threshold=5.0, warmup=30.0))
    expected = {lo: min((r for (l2, r), s in SLOPES.items() if l2 == lo and statistics.median([s, s + 0.1]) < 5),
                        default=None) for lo in (1000, 4000)}
    assert {int(k): (int(v) if v is not None else None) for k, v in result.table.items()} == expected
