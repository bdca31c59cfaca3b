"""What ended each repetition, kept and judged with, end to end on the real parts: the
CLI, the engine, the calibrated SUT on Apache Kafka, the result files, ``bench analyze``.

tests/unit/test_confidence_evidence.py checks the rules on given numbers and the engine
on the fake platform. Here one experiment of three repetitions, judged by the lag trend
and the dropped records: 500 records/s on one instance of 1,000 keeps up, so the first
two repetitions settle the lag trend and the third runs for the dropped records alone.
Its repetition file must say so, the verdict must keep it, and ``bench analyze`` must
judge the run's files the way the run judged them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.builtin.calibrated import default_benchmark
from e2e_procs import bench_run

pytestmark = pytest.mark.e2e


def test_a_repetition_run_for_another_slo_is_kept_as_such_and_judged_alike(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    bench = default_benchmark()
    bench["slos"] = [*bench["slos"], {"name": "dropped-records", "sloType": "dropped-records", "properties": {}}]
    bench_file = tmp_path / "benchmark.yaml"
    bench_file.write_text(json.dumps(bench))  # JSON is YAML
    results = tmp_path / "results"
    out = bench_run("--bootstrap-servers", kafka_bootstrap, "--results", str(results), "--plugin", "calibrated",
                    "--benchmark", str(bench_file), "--set", "capacity=1000", "--loads", "500", "--resources", "1",
                    "--duration", "40", "--warmup", "5", "--sample-interval", "1", "--repetitions", "3",
                    timeout=400)
    assert out.returncode == 0, out.stderr[-3000:]
    docs = [json.loads((results / f"exp0_500_1_generator_{rep}.json").read_text()) for rep in range(3)]
    assert docs[0]["waited_for"] is None
    assert docs[2]["waited_for"] == ["dropped-records"], [d["waited_for"] for d in docs]
    assert docs[2]["early_stopped"], docs[2]  # ended by the dropped records' decision
    (record,) = json.loads((results / "exp0-result.json").read_text())["experiments"]
    assert record["passed"] is True, record
    name, lag = next((name, details) for name, details in record["slos"].items() if "slopes" in details)
    found = lag.get("repetition_evidence") or [{}, {}, {}]
    for doc, kept in zip(docs, found, strict=True):
        if doc["waited_for"] is not None and name not in doc["waited_for"] and doc["early_stopped"]:
            assert kept == {"incidental": True}, (doc, kept)
        elif name in doc["decided"]:
            assert kept == {"decided": doc["decided"][name]}, (doc, kept)
        else:
            assert kept == {}, (doc, kept)
    done = subprocess.run([sys.executable, "-m", "bench.cli", "analyze", str(results)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (analyzed,) = json.loads((results / "exp0-analysis.json").read_text())["experiments"]
    flags = ("disagree", "inside_noise", "step", "unstable")
    assert {k: analyzed["confidence"][k] for k in flags} == {k: lag["confidence"][k] for k in flags}, \
        (analyzed["confidence"], lag["confidence"])
    assert not lag["confidence"]["disagree"], lag["confidence"]  # the incidental third does not count
