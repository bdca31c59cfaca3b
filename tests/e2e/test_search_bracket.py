"""The default search (bracket) end to end on the real parts: the CLI, the engine, the
calibrated SUT on Apache Kafka, the result files.

tests/unit/test_search_bracket.py checks which experiments it asks for on tables of
verdicts, tests/unit/test_tables_agree.py that every form of its table agrees. Here a
flat table (both loads within one instance's 1,000 records/s) must be one experiment on
the real broker, the heavier load's, and the lighter load's entry must say in every
file that no experiment measured it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from e2e_procs import bench_run

pytestmark = pytest.mark.e2e


def test_a_flat_table_is_one_experiment_and_the_rest_is_marked_inferred(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    out = bench_run("--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path), "--plugin", "calibrated",
                    "--set", "capacity=1000", "--loads", "500,800", "--resources", "1,2", "--duration", "20",
                    "--warmup", "5", "--sample-interval", "1", "--repetitions", "1", timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    experiments = json.loads((tmp_path / "exp0-result.json").read_text())["experiments"]
    assert [(e["load"], e["resources"], e["passed"]) for e in experiments] == [(800.0, 1.0, True)], experiments
    with open(tmp_path / "exp0_demand.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows == [["load", "resources", "note"], ["500", "1", "inferred"], ["800", "1", ""]], rows
    table = json.loads((tmp_path / "exp0-result.json").read_text())["table"]
    assert [(r["key"], r["value"], r["inferred"]) for r in table] == [(500.0, 1.0, True), (800.0, 1.0, False)]
    printed = out.stdout + out.stderr
    assert "1 (inferred)" in printed and "a heavier load's" in printed, printed[-2000:]
