"""`bench report`: one offline HTML page with every section, from synthetic runs."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from bench.analysis.commands import bench_add_commands
from bench.analysis.runs import open_run
from bench.analysis.scaling import scaling_rows
from bench.cli.commands import cli as bench_cli
from click.testing import CliRunner

from tests.unit.test_analyze import write_lag


def make_report_run(folder: Path, exp_id: int, capacity: float, seed: int, environment: bool = True) -> None:
    """A demand run: lag files, result JSON with generator reports, configs, environment."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    loads, resources = [1000, 2000, 3000], [1, 2, 3, 4]
    experiments, table = [], {}
    for load in loads:
        table[load] = None
        for res in resources:
            for rep in range(3):
                write_lag(folder, exp_id, load, res, rep, rng)
            passed = load <= capacity * res
            experiments.append({
                "load": load, "resources": res, "passed": passed, "valid": True, "slos": {},
                "generators": [{"repetition": r, "target_rate": float(load), "achieved_rate": load * 0.995,
                                "records": load * 300, "seconds": 300.0} for r in range(3)],
            })
            if passed and table[load] is None:
                table[load] = res
        for res in resources:
            path = folder / f"exp{exp_id}_{load}_{res}_sli_dropped-records_0.csv"
            path.write_text("labels,timestamp,value\n,1700000000.000,0.0\n,1700000005.000,2.0\n")
    (folder / f"exp{exp_id}-result.json").write_text(json.dumps({
        "id": exp_id, "metric": "demand", "experiments": experiments,
        "table": [{"key": k, "value": v} for k, v in table.items()],
    }))
    (folder / f"exp{exp_id}-execution-configuration.json").write_text(json.dumps({
        "load": {"loadType": "NumSensors", "loadValues": loads},
        "resources": {"resourceType": "Instances", "resourceValues": resources},
        "execution": {"metric": "demand", "duration": 300, "warmup": 60, "repetitions": 3, "sampleInterval": 5},
        "slos": [],
    }))
    (folder / f"exp{exp_id}-benchmark-configuration.json").write_text(json.dumps({
        "name": f"uc1-seed{seed}",
        "slos": [{"name": "lag-trend", "sloType": "lag-trend", "properties": {"threshold": 500}}],
    }))
    if environment:
        (folder / f"exp{exp_id}-environment.json").write_text(json.dumps(
            {"spark": {"version": "3.5.1", "triggerIntervalMs": 1000}, "cpu": "test cpu <&>", "cores": 2}))


def test_report_has_every_section_and_nothing_external(tmp_path: Path) -> None:
    make_report_run(tmp_path / "a", 0, capacity=1000, seed=1)
    make_report_run(tmp_path / "b", 3, capacity=1000, seed=2, environment=False)
    out_file = tmp_path / "report.html"
    bench_add_commands(bench_cli)
    out = CliRunner().invoke(bench_cli, ["report", str(tmp_path / "a"), f"{tmp_path / 'b'}:3", "-o", str(out_file)])
    assert out.exit_code == 0, out.output
    html = out_file.read_text()
    for needle in ("scalability", "linear (a/exp0)", "a/exp0", "b/exp3", "scaling efficiency",
                   "core-seconds per million records", "generator accuracy", "99.50 %", "dropped-records",
                   "spark.version", "test cpu &lt;&amp;&gt;", "no exp3-environment.json", "interval",
                   "margin", "end of warm-up", "multiple of the trigger interval"):
        assert needle in html, needle
    assert html.count("<svg") == 1 + 2 * 12  # one scalability graph, one lag chart per experiment
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched at view time
    assert "http://www.w3.org/2000/svg" in html  # the SVG namespace is the only URL


def test_scaling_efficiency_and_cost(tmp_path: Path) -> None:
    make_report_run(tmp_path, 0, capacity=1000, seed=1)
    run = open_run(tmp_path)
    rows = scaling_rows(run, {1000.0: 1.0, 2000.0: 2.0, 3000.0: 4.0, 4000.0: None})
    assert [r.efficiency for r in rows] == [1.0, 1.0, 0.75]
    # 1 instance, one core, 1000 records/s: 1000 core-seconds per million records
    assert rows[0].core_seconds_per_million == 1000.0
    assert rows[2].core_seconds_per_million == 4 / 3000 * 1e6
