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


#: Quarter-core instances, as UC1's and UC2's. Measured 2026-11-27 (docs/performance.md,
#: "Each use case's defaults"): one instance keeps up with 9,000 records/s by growing its
#: micro-batches (18 s each) but fell behind at 18,000 by the full load (its first batch
#: of the experiment had not finished 54 s in); two drained 18,000 at ~3,900 records/s.
#: The experiment is long enough for about ten micro-batch periods after the warm-up.
CPU_PER_INSTANCE = 0.25
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [1500, 18000]},
    "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "sampleInterval": 2, "repetitions": 1, "afterTeardownDelay": 2},
}


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark("uc3", TOPICS, load_types=load_types(), slos=windowed_slos(),
                              cpu_per_instance=CPU_PER_INSTANCE, default_execution=MAIN_JOB)
