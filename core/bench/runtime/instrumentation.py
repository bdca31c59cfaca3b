"""An internal switch that runs the SUT without bench's instrumentation, for measuring its cost.

``benchmarks/observer_effect.py`` compares the SUT's maximum throughput with all of
bench's instrumentation (offset commits to the SUT's consumer group, lag sampling, the
latency and informational samplers) against the same SUT with none of it. With
:data:`ENV` set to ``1`` in the environment of the platform and its children (they
inherit it), the SUT's readers commit no offsets and the local platforms sample only
what Spark reports of itself (its micro-batch progress) and the generators' progress.
No verdict can be taken so (there is no lag): it is not an option of ``bench run``.
"""

from __future__ import annotations

import os

ENV = "BENCH_NO_INSTRUMENTATION"


def enabled() -> bool:
    """False when the environment switched bench's instrumentation off (:data:`ENV`)."""
    return os.environ.get(ENV, "") not in ("1", "true", "yes")
