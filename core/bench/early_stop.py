"""Early stopping of a repetition once the lag trend is decided with confidence.

Off by default (``execution.earlyStop`` / ``--early-stop``): it only earns its place
where it is shown to give the same verdicts as full-length experiments
(benchmarks/time_to_verdict.py measures that).
"""

from __future__ import annotations

from typing import Any

from bench.api import Series


def decided(slos: Any, registry: Any, series: dict[str, Series], execution: Any, spec: Any, elapsed: float) -> bool:
    return False
