"""Loads sized for the machine on the real parts (issue 67): the calibrated use case on
Apache Kafka, whose capacity per instance is known by construction (1,000 records/s).

With no loads given bench probes two instances first; the probe must read its capacity
within 5 % whatever load it probes at (it probes far above it: the lag grows by ~95 % of
the input), place the loads between the capacity boundaries and measure distinct
demands. ``--set sut.cpuPerInstance=0.5`` is a limit the user gave: kept, said, and
the curve still shows. Short experiments and two resource amounts keep it near a minute.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_procs import bench_run, demand_rows

pytestmark = pytest.mark.e2e

CAPACITY = 1000


def test_a_run_without_loads_is_sized_by_a_probe_that_reads_the_capacity(kafka_bootstrap: str,
                                                                          tmp_path: Path) -> None:
    out = bench_run("--plugin", "calibrated", "--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path),
                    "--set", f"capacity={CAPACITY}", "--set", "sut.cpuPerInstance=0.5", "--resources", "1,2",
                    "--duration", "20", "--warmup", "5", "--sample-interval", "1", "--repetitions", "1",
                    timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    sizing = json.loads((tmp_path / "exp0-sizing.json").read_text())
    probe = sizing["probes"][-1]
    assert probe["per_instance_rate"] == pytest.approx(CAPACITY, rel=0.05), sizing
    assert probe["saturated"] is True and len(sizing["probes"]) == 1, sizing  # the given limit is kept
    assert sizing["resources"] is None and sizing["cpuLoweredFrom"] is None, sizing
    # about 0.3 and 1.3 capacities (rounded from the probe's figure): clear of the boundary
    # at one capacity, so their demands are 1 and 2
    low, high = (float(v) for v in sizing["loads"])
    assert 0.2 * CAPACITY <= low <= 0.45 * CAPACITY and 1.15 * CAPACITY <= high <= 1.45 * CAPACITY, sizing
    assert probe["instances"] == 2, sizing  # the given amount nearest two
    table = {float(r["load"]): r["resources"] for r in demand_rows(tmp_path)}
    assert table == {low: "1", high: "2"} or len(set(table.values())) >= 2, out.stdout[-2000:]
    assert "sized for this machine" in out.stderr and "sized for this machine" in out.stdout
