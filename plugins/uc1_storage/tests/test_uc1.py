"""UC1 end to end: harness run with the log store, and the Spark driver process with sqlite."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from bench.testing import committed_offsets, create_topics, end_offsets, produce, run_topology
from bench_uc1 import UC1

pytestmark = pytest.mark.e2e


def _records(n: int) -> list[tuple[str, str, int]]:
    out = []
    for i in range(n):
        key = f"s_{i % 10}"
        out.append((key, json.dumps({"identifier": key, "timestamp": 1000 * i, "valueInW": i / 2}), 1000 * i))
    return out


def test_uc1_logs_one_json_document_per_record(kafka_bootstrap: str, spark: Any, tmp_path: Path) -> None:
    records = _records(500)
    run_topology(
        UC1,
        {"input": records},
        bootstrap_servers=kafka_bootstrap,
        spark=spark,
        params={"sink": "log", "path": str(tmp_path)},
    )
    lines = [line for f in tmp_path.glob("uc1-*.log*") for line in f.read_text().splitlines()]
    docs = sorted((json.loads(line)["timestamp"], json.loads(line)["identifier"], json.loads(line)["valueInW"])
                  for line in lines)
    assert docs == sorted((ts, k, json.loads(v)["valueInW"]) for k, v, ts in records)


def test_spark_driver_runs_uc1_into_sqlite_and_stops_on_sigterm(kafka_bootstrap: str, tmp_path: Path) -> None:
    n = 400
    suffix = uuid.uuid4().hex[:8]
    topics = {"input": f"input-{suffix}", "output": f"output-{suffix}"}
    create_topics(kafka_bootstrap, {topics["input"]: 2, topics["output"]: 2})
    produce(kafka_bootstrap, topics["input"], [*_records(n), ("bad", "{oops", 0)])
    db = tmp_path / "uc1.sqlite"
    spec = {
        "use_case": "uc1",
        "bootstrap_servers": kafka_bootstrap,
        "topics": topics,
        "group_id": f"sut-{suffix}",
        "params": {"sink": "sqlite", "path": str(db)},
        "instances": 1,
        "spark_master": None,
        "trigger_seconds": 0.5,
        "max_records_per_trigger": 150,
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "connector": "python",
    }
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.runtime.spark.driver", str(spec_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    events: list[dict] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            events.append(event)
            assert event["event"] != "error", event
            if event["event"] == "progress" and sum(e.get("numInputRows", 0) for e in events) >= n + 1:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert events[0]["event"] == "started"
    assert events[0]["warmupSeconds"] > 0  # warmed up before "started"; the count below: it stored nothing
    progress = [e for e in events if e["event"] == "progress"]
    assert {"batchId", "inputRowsPerSecond", "processedRowsPerSecond", "batchDurationMs", "droppedByWatermark",
            "timestamp"} <= set(progress[-1])
    assert progress[-1]["malformed"] == 1
    assert max(e["numInputRows"] for e in progress) <= 150
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == n
    assert committed_offsets(kafka_bootstrap, str(spec["group_id"]), topics["input"]) == end_offsets(
        kafka_bootstrap, topics["input"]
    )
