"""Loads sized for the machine on the real parts (issue 67): the calibrated use case on
Apache Kafka, whose capacity per instance is known by construction (1,000 records/s).

With no loads given bench probes two instances first; the probe must read its capacity
within 5 % whatever load it probes at (it probes far above it, the lag growing by ~95 %
of the input, then at twice what it read), place the loads between the capacity
boundaries and measure distinct demands; ``--predict`` predicts them from that probe.
``--set sut.cpuPerInstance=0.5`` is a limit the user gave: kept, said, and the curve
still shows. Short experiments and two resource amounts keep it near a minute. Asked
again in the same folder, a sized run takes an earlier run's loads where its probe puts
them in the same demands (bench.execution.earlier_sizing).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from e2e_procs import bench_run, demand_rows

pytestmark = pytest.mark.e2e

CAPACITY = 1000


def test_a_run_without_loads_is_sized_by_a_probe_that_reads_the_capacity(kafka_bootstrap: str,
                                                                          tmp_path: Path) -> None:
    args = ("--plugin", "calibrated", "--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path),
            "--set", f"capacity={CAPACITY}", "--set", "sut.cpuPerInstance=0.5", "--resources", "1,2",
            "--duration", "20", "--warmup", "5", "--sample-interval", "1", "--repetitions", "1")
    out = bench_run(*args, "--predict", timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    sizing = json.loads((tmp_path / "exp0-sizing.json").read_text())
    probe = sizing["probes"][-1]
    # the first probe floods two instances (40,000 records/s against 2,000), the second
    # asks twice what they read: each reads the capacity, whatever the load
    assert [p["load"] for p in sizing["probes"]][0] == 40_000 and len(sizing["probes"]) == 2, sizing
    for each in sizing["probes"]:
        assert each["per_instance_rate"] == pytest.approx(CAPACITY, rel=0.05), sizing
        assert each["saturated"] is True and each["cpu"] == 0.5, sizing  # the given limit is kept
    assert sizing["resources"] is None and sizing["cpuLoweredFrom"] is None, sizing
    # about 0.2 and 1.3 capacities (the roundest values near those of the probe's figure):
    # clear of the boundary at one capacity, so their demands are 1 and 2
    low, high = (float(v) for v in sizing["loads"])
    assert 0.15 * CAPACITY <= low <= 0.3 * CAPACITY and 1.15 * CAPACITY <= high <= 1.6 * CAPACITY, sizing
    assert probe["instances"] == 2, sizing  # the given amount nearest two
    # the probe's own verdict: two instances failed the lighter of its loads, surely; it
    # answers no experiment here, every sized load being lighter still
    fail = sizing["probeFail"]
    # (its rate is what the generators wrote: 3,794 of the probe's 4,000 records/s in one run here)
    assert fail["instances"] == 2 and fail["rate"] == pytest.approx(probe["load_rate"], rel=0.1), sizing
    assert fail["low"] >= fail["threshold"] and fail["cpu"] == 0.5, sizing
    assert "not measured: the sizing probe" not in out.stderr
    table = {float(r["load"]): r["resources"] for r in demand_rows(tmp_path)}
    assert table == {low: "1", high: "2"}, out.stdout[-2000:]
    assert "sized for this machine" in out.stderr and "sized for this machine" in out.stdout
    # --predict takes the sizing probe's figure (no probe of its own) and is right for every load
    predicted = json.loads((tmp_path / "exp0-prediction.json").read_text())
    assert predicted["probe"]["per_instance_rate"] == probe["per_instance_rate"], predicted
    entries = {float(e["key"]): (e["predicted"], e["measured"]) for e in predicted["entries"]}
    assert entries == {low: (1, 1), high: (2, 2)} and predicted["hitRate"] == 1.0, predicted
    # asked again in this folder, whose earlier run had chosen loads a probe's spread apart
    # from this probe's own (as UC3's round loads followed its figure): the run takes them
    earlier = {0.25 * CAPACITY: 1, 1.2 * CAPACITY: 2}
    per_value = {float(v): float(r) / float(v) for v, r in sizing["rates"]}
    assert len(set(per_value.values())) == 1 and set(earlier).isdisjoint(per_value), sizing  # records/s per value
    factor = next(iter(per_value.values()))
    (tmp_path / "exp0-sizing.json").write_text(json.dumps(
        {**sizing, "loads": [v / factor for v in earlier], "rates": [[v / factor, v] for v in earlier]}))
    again = bench_run(*args, timeout=300)  # the same question, without --predict
    assert again.returncode == 0, again.stderr[-3000:]
    second = json.loads((tmp_path / "exp1-sizing.json").read_text())
    assert second["loads"] == [v / factor for v in earlier] and "the loads of exp0" in second["reason"], second
    with open(tmp_path / "exp1_demand.csv") as fh:
        rows = {float(r["load"]) * factor: r["resources"] for r in csv.DictReader(fh)}
    assert rows == {v: str(d) for v, d in earlier.items()}, again.stdout[-2000:]
    assert "the loads of exp0" in again.stderr


def test_an_instance_four_times_slower_still_shows_a_curve(kafka_bootstrap: str, tmp_path: Path) -> None:
    """The instance's records/s follow its CPU here (``workUs``: each record costs CPU
    time, no pacing), as a real job's do: at an eighth of a core, a quarter of the limit
    above, the probe reads what that CPU gives and the sized loads still need 1 and 2
    instances."""
    work_us, cpu = 400, 0.125
    out = bench_run("--plugin", "calibrated", "--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path),
                    "--set", "capacity=1000000", "--set", f"workUs={work_us}", "--set", f"sut.cpuPerInstance={cpu}",
                    "--resources", "1,2", "--duration", "20", "--warmup", "5", "--sample-interval", "1",
                    "--repetitions", "1", timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    sizing = json.loads((tmp_path / "exp0-sizing.json").read_text())
    probe = sizing["probes"][-1]
    ceiling = cpu * 1e6 / work_us  # what the CPU allows at most: 312.5 records/s
    assert 0.3 * ceiling <= probe["per_instance_rate"] <= 1.1 * ceiling, sizing
    assert probe["saturated"] is True and sizing["cpuLoweredFrom"] is None, sizing  # the given limit is kept
    table = {float(r["load"]): r["resources"] for r in demand_rows(tmp_path)}
    assert len(table) == 2 and set(table.values()) == {"1", "2"}, out.stdout[-2000:]


def test_a_flat_table_measures_one_heavier_load(kafka_bootstrap: str, tmp_path: Path) -> None:
    """One instance alone processes 0.16 of its capacity (``soloShare``), as one Spark
    instance at an eighth of a core failed 0.2 x what each of two read. The probe of two
    reads 2,200 each (one probe: 40,000 is less than ten times what they read); the sized
    loads, 400 and 3,000 (two demands for experiments of 100 s or more), both need two
    instances. The run adds 5,000, above what two read, which needs three. Early stopping
    ends each clear verdict in seconds: one instance alone still reads more than a tenth
    of 3,000 records/s, so its lag does not rise like a micro-batch's that has not yet
    committed (bench.slo.lag_batches.NOTHING_CONSUMED), which no early "fail" ends."""
    capacity = 2200
    out = bench_run("--plugin", "calibrated", "--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path),
                    "--set", f"capacity={capacity}", "--set", "soloShare=0.16", "--set", "sut.cpuPerInstance=0.5",
                    "--duration", "100", "--warmup", "4", "--sample-interval", "1", "--repetitions", "1",
                    timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    sizing = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert len(sizing["probes"]) == 1, sizing
    assert sizing["probes"][0]["per_instance_rate"] == pytest.approx(capacity, rel=0.05), sizing
    added = sizing["added"]
    assert added is not None and added["load"] == 5000 and "every load needs 2 instance(s)" in added["why"], sizing
    assert sizing["loads"] == [400, 3000, 5000] and max(sizing["resources"]) >= 4, sizing
    table = {float(r["load"]): r["resources"] for r in demand_rows(tmp_path)}
    assert table == {400.0: "2", 3000.0: "2", 5000.0: "3"}, out.stdout[-2000:]
    assert "the measured table shows 1 demand(s)" in out.stderr + out.stdout


def test_a_probe_whose_instances_kept_up_answers_a_lighter_loads_pass(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Two instances of 0.55 x the probe's records/s each keep up with it (the first probe,
    at this machine's 20,000 records/s per core), so a load of 0.7 x it passes on two
    and is not measured there; on one it fails, measured. The table, the result file's
    ``answered`` and the sizing file's ``probePass`` say so."""
    probe = 20_000 * (os.cpu_count() or 1)
    capacity, load = int(0.55 * probe), int(0.7 * probe)
    out = bench_run("--plugin", "calibrated", "--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path),
                    "--set", f"capacity={capacity}", "--set", "sut.cpuPerInstance=0.5", "--loads", str(load),
                    "--duration", "20", "--warmup", "5", "--sample-interval", "1", "--repetitions", "1",
                    timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    sizing = json.loads((tmp_path / "exp0-sizing.json").read_text())
    first = sizing["probes"][0]
    assert first["saturated"] is False and first["load"] == probe, sizing
    passed = sizing["probePass"]
    assert passed["instances"] == 2 and passed["cpu"] == 0.5 and passed["rate"] >= load, sizing
    result = json.loads((tmp_path / "exp0-result.json").read_text())
    assert [(e["load"], e["resources"], e["passed"]) for e in result["experiments"]] == [(load, 1, False)], result
    assert {(a["load"], a["resources"], a["passed"]) for a in result["answered"]} >= {(load, 2, True)}, result
    assert f"load={load} resources=2: PASS, not measured" in out.stderr
    rows = demand_rows(tmp_path)
    assert [(float(r["load"]), r["resources"]) for r in rows] == [(load, "2")], rows
    assert "inferred" in (rows[0].get("note") or ""), rows
