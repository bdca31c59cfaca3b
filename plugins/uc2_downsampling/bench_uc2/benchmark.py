"""The default UC2 Benchmark: what `bench run --plugin uc2` measures without a file."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, param_load_type, standard_benchmark, windowed_slos

TOPICS = {"input": 4, "output": 4}

#: An instance is a task slot limited to a quarter of a core, as UC1's (a Kubernetes CPU
#: limit of 250m); unlimited, one instance kept up with every load a 2-core laptop can
#: generate. Measured (docs/measurements-log.md, "Each use case's defaults"): one
#: quarter-core instance keeps up with 12,000 records/s by growing its micro-batches
#: (15 s each; ~6 s at 2,000: a windowed query's fixed cost per batch at a quarter core)
#: and reads ~14,000 records/s at most; two keep up with 24,000. The lag saw-tooth has
#: the batches' period: 90 s after the warm-up hold a dozen of them, and a sample every
#: 2 s resolves each.
CPU_PER_INSTANCE = 0.25
MAIN_JOB: dict[str, Any] = {
    "load": {"loadValues": [2000, 20000]},
    "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "sampleInterval": 2, "repetitions": 1, "afterTeardownDelay": 2},
}


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark(
        "uc2",
        TOPICS,
        load_types=[param_load_type("WindowSize", "windowSizeMs"), message_period_load_type()],
        slos=windowed_slos(),
        cpu_per_instance=CPU_PER_INSTANCE,
        default_execution=MAIN_JOB,
    )
