"""Two load dimensions on the real parts: the calibrated SUT's capacity model over keys
and message period (bench.builtin.calibrated: a cost per key) must come out of ``bench
run --load2-type`` exactly at every grid point, in fewer experiments than points x
resources.

Keys 400 and 800 (NumSensors) each sending every 1,000 or 500 ms (MessagePeriod),
capacity 1,500 records/s per instance, keyCost 0.0005: the demand is 1 at every point
but the heaviest (800 keys every 500 ms: 1,600 records/s at 1.4 x the cost per record,
2,240 of capacity, so 2). Every point sits at most at 75 % of its instances' capacity or
above 140 % of one instance's, so no verdict is close. The grid search measures the
heaviest point at 2 and at 1 instance, and each other point once at 1 instance (its
bounds are 1 and 2): 5 experiments of 8. Ten one-second samples after a 4-s warm-up
decide each (the capacity is paced, so its verdicts need no longer).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from bench.builtin.calibrated import model_demand
from e2e_procs import bench_run

pytestmark = pytest.mark.e2e

KEYS, PERIODS, CAPACITY, KEY_COST = (400, 800), (500, 1000), 1500, 0.0005


def test_the_grid_gives_the_capacity_model_at_every_point(kafka_bootstrap: str, tmp_path: Path) -> None:
    out = bench_run("--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path), "--plugin", "calibrated",
                    "--set", f"capacity={CAPACITY}", "--set", f"keyCost={KEY_COST}",
                    "--loads", ",".join(map(str, KEYS)), "--load2-type", "MessagePeriod",
                    "--loads2", ",".join(map(str, PERIODS)), "--resources", "1,2", "--cost", "L1*1000/L2",
                    "--duration", "14", "--warmup", "4", "--sample-interval", "1", "--repetitions", "1",
                    timeout=420)
    assert out.returncode == 0, out.stderr[-3000:]
    grid = json.loads((tmp_path / "exp0_grid.json").read_text())
    found = {(p["load"], p["load2"]): p["resources"] for p in grid["points"]}
    expected = {(float(k), float(p)): float(model_demand(k, p, CAPACITY, KEY_COST)) for k in KEYS for p in PERIODS}
    assert found == expected, (found, expected, out.stderr[-4000:])
    assert grid["experiments"] < len(KEYS) * len(PERIODS) * 2, grid["experiments"]
    for slice_ in grid["slices"]:  # each slice's table in the reference's format, under both names
        with open(tmp_path / f"exp0_demand_MessagePeriod-{slice_['load2']:g}.csv") as fh:
            rows = list(csv.reader(fh))
        assert rows[0][:2] == ["load", "resources"] and len(rows) == 1 + len(KEYS)
        assert (tmp_path / f"exp{slice_['exp']}_demand.csv").read_text() == "".join(
            ",".join(r) + "\n" for r in rows)
    assert "NumSensors \\ MessagePeriod" in out.stdout and "collapse" not in out.stderr
    assert "points" in out.stdout and "Spearman" in out.stdout, out.stdout
