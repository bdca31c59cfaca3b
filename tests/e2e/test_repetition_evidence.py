"""What ended each repetition, kept with the verdict, on real parts (Apache Kafka, the
embedded platform, the engine through ``bench run``).

A third repetition that runs only for an SLO judged by its worst repetition, after two
passing lag trends have already fixed the median of three, is ended as soon as that
SLO is decided. Its few lag samples then say nothing about the lag trend, and the
verdict's confidence must not count them ("incidental", docs/analysis.md, "What ended
each repetition counts too").

The calibrated SUT is used, not UC2 or UC3 whose dropped-records SLO keeps a third
repetition open the same way: the path is the engine's and the same for any SLO judged
by its worst repetition, and the calibrated SUT with a processing delay gives one (a
latency SLO with ``repetitionAggregation: max``) in a minute and a half instead of five.
Load 500 records/s against a capacity of 1,000: the lag falls at once, the delay of
300 ms sits far below the 1,500-ms bound, so every rule decides on its first samples.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.builtin.calibrated import default_benchmark

pytestmark = pytest.mark.e2e


def test_a_third_repetition_run_for_another_slo_is_kept_as_incidental(kafka_bootstrap: str, tmp_path: Path) -> None:
    bench = default_benchmark()
    bench["slos"] = [*bench["slos"], {"name": "latency", "sloType": "latency", "properties": {
        "percentile": 99, "threshold": 1500, "repetitionAggregation": "max"}}]
    bench_file = tmp_path / "benchmark.yaml"
    bench_file.write_text(json.dumps(bench))  # JSON is YAML
    results = tmp_path / "results"
    cmd = [str(Path(sys.executable).parent / "bench"), "run", "--plugin", "calibrated", "--benchmark", str(bench_file),
           "--loads", "500", "--resources", "1", "--duration", "60", "--warmup", "6", "--repetitions", "3",
           "--sample-interval", "1", "--set", "capacity=1000", "--set", "delayMs=300", "--results", str(results),
           "--bootstrap-servers", kafka_bootstrap]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    reps = [json.loads((results / f"exp0_500_1_generator_{rep}.json").read_text()) for rep in range(3)]
    lag_trend = next(s["name"] for s in bench["slos"] if s["name"] != "latency")
    # the first waits for every SLO, the second for both (one repetition fixes neither
    # the median nor the worst of three), the third for the latency SLO alone
    assert [r["early_stopped"] for r in reps] == [True, True, True], (reps, done.stdout)
    waited = [sorted(r["waited_for"]) if r["waited_for"] is not None else None for r in reps]
    assert waited == [None, sorted([lag_trend, "latency"]), ["latency"]], (waited, done.stdout)
    assert lag_trend in reps[0]["decided"] and lag_trend in reps[1]["decided"], reps
    assert lag_trend not in reps[2]["decided"], reps

    result = json.loads((results / "exp0-result.json").read_text())
    (experiment,) = result["experiments"]
    assert experiment["passed"] is True, experiment
    verdict = experiment["slos"][lag_trend]
    evidence = verdict["repetition_evidence"]
    assert [sorted(e) for e in evidence] == [["decided"], ["decided"], ["incidental"]], evidence
    assert evidence[2] == {"incidental": True}
    for rep, found in zip(reps[:2], evidence[:2], strict=True):
        assert found["decided"] == rep["decided"][lag_trend]
        low, high = found["decided"]
        assert low <= high < verdict["threshold"], (found, verdict["threshold"])
    assert verdict["confidence"]["disagree"] is False, verdict
