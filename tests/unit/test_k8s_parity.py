"""Kubernetes parity: the SUT exports dropped and malformed records to Prometheus, the
Kubernetes platform reads them back (and the generators' achieved rate), so UC2 and UC3
can be decided there as on the embedded platform."""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from typing import Any

from bench import metrics
from bench.runtime.broker import free_port
from prometheus_client import REGISTRY


def value(name: str, group: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"experiment": "exp9", "group": group})


def test_exporting_is_a_no_op_without_a_port() -> None:
    lines: list[Mapping[str, Any]] = []
    assert metrics.exporting(lines.append, {"group_id": "g"}) == lines.append


def test_progress_lines_become_sut_gauges_from_zero() -> None:
    served: list[tuple[int, str]] = []
    lines: list[Mapping[str, Any]] = []
    emit = metrics.exporting(
        lines.append,
        {"metrics_port": 9404, "experiment": "exp9", "group_id": "g-1"},
        serve=lambda port, addr: served.append((port, addr)),
    )
    assert served == [(9404, "0.0.0.0")]
    assert value("bench_sut_dropped_records", "g-1") == 0.0, "0 before the first batch, not absent"
    emit({"event": "started"})
    emit({"event": "progress", "droppedByWatermark": 7, "malformed": 2, "inputRowsPerSecond": 10.0})
    emit({"event": "progress", "droppedByWatermark": 9, "malformed": 2, "processedRowsPerSecond": 12.5})
    assert [e["event"] for e in lines] == ["started", "progress", "progress"], "stdout unchanged"
    assert value("bench_sut_dropped_records", "g-1") == 9.0, "cumulative, as the driver counts"
    assert value("bench_sut_malformed_records", "g-1") == 2.0
    assert value("bench_sut_processed_rows_per_second", "g-1") == 12.5
    assert value("bench_sut_batches", "g-1") == 2.0


def test_the_real_exporter_serves_the_sut_gauges() -> None:
    port = free_port()
    emit = metrics.exporting(lambda e: None, {"metrics_port": port, "experiment": "exp9", "group_id": "g-2"})
    emit({"event": "progress", "droppedByWatermark": 3, "malformed": 0})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:  # noqa: S310
        text = resp.read().decode()
    assert 'bench_sut_dropped_records{experiment="exp9",group="g-2"} 3.0' in text
