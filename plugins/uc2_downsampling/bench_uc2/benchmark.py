"""The default UC2 Benchmark: what `bench run --plugin uc2` measures without a file."""

from __future__ import annotations

from typing import Any

from bench.api import message_period_load_type, param_load_type, standard_benchmark, windowed_slos

TOPICS = {"input": 4, "output": 4}


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark(
        "uc2",
        TOPICS,
        load_types=[param_load_type("WindowSize", "windowSizeMs"), message_period_load_type()],
        slos=windowed_slos(),
    )
