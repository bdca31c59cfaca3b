"""The default UC3 Benchmark: what `bench run --plugin uc3` measures without a file."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, param_load_type, standard_benchmark, windowed_slos

from bench_uc3.params import DAY_MS

TOPICS = {"input": 4, "output": 4}


def load_types() -> list[dict[str, Any]]:
    """Besides NumSensors (from standard_benchmark)."""
    return [
        param_load_type("WindowSize", "windowSizeMs"),
        param_load_type("Advance", "advanceMs", "decreasing"),  # a shorter advance: more windows per record
        # k overlapping windows: advanceMs = windowSizeMs / k (see bench_uc3.params)
        param_load_type("NumOverlappingWindows", "numOverlappingWindows"),
        # 24, 7 or 168 values: hourOfDay, dayOfWeek, hourOfWeek
        param_load_type("NumTimeAttributeValues", "timeAttribute"),
        message_period_load_type(),
        # the reference's UC3 load type: the aggregation window in days
        {"typeName": "AggregationDurationDays", "patchers": [
            {"type": "ParamPatcher", "resource": "sut", "properties": {"key": "windowSizeMs", "factor": DAY_MS}}]},
    ]


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark("uc3", TOPICS, load_types=load_types(), slos=windowed_slos())
