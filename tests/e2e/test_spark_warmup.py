"""The Spark SUT's warm-up on the real broker and a real SparkSession: UC1's own sink,
pointed at a throw-away directory (``UseCase.warmup_params``), stores every valid
warm-up record there, and the user's store gets none of them."""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from bench.runtime.spark.sut_query import WARMUP_ROUNDS, WARMUP_VALID_PER_PARTITION, warm_up
from bench.testing import create_topics
from bench_uc1 import UC1

pytestmark = pytest.mark.e2e


def stored(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted(directory.rglob("*.log")) for line in f.read_text().splitlines()]


def test_uc1_warms_its_store_on_valid_records_away_from_the_users(
        kafka_bootstrap: str, spark: Any, tmp_path: Path) -> None:
    topics = {"input": f"warm-in-{uuid.uuid4().hex[:6]}", "output": f"warm-out-{uuid.uuid4().hex[:6]}"}
    create_topics(kafka_bootstrap, {topics["input"]: 2, topics["output"]: 1})
    user, kept = tmp_path / "user-logs", tmp_path / "warm-logs"
    seen: list[str] = []

    def keep(params: Any, scratch: str) -> dict[str, Any]:
        # UC1's own redirection, then into a directory this test can read afterwards
        seen.append(str(UC1.warmup_params(params, scratch)["path"]).removeprefix(scratch))  # type: ignore[misc]
        return {**params, "path": str(kept)}

    use_case = dataclasses.replace(UC1, warmup_params=keep)
    seconds = warm_up(spark, use_case, kafka_bootstrap, topics, "warm-test",
                      {"sink": "log", "path": str(user)}, 1, "native")
    assert seconds > 0
    assert seen == ["/logs"]
    records = stored(kept)
    assert len(records) == WARMUP_ROUNDS * WARMUP_VALID_PER_PARTITION * 2  # every round, both partitions
    assert all(r["identifier"].startswith("warmup-") and "valueInW" in r for r in records)
    assert not user.exists() or not stored(user)
