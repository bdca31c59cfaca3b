"""An internal switch that runs the SUT without bench's instrumentation, for measuring its cost.

``benchmarks/observer_effect.py`` compares the SUT's maximum throughput with all of
bench's instrumentation (offset commits to the SUT's consumer group, lag sampling, the
latency and informational samplers) against the same SUT with none of it. With
:data:`ENV` set to ``1`` in the environment of the platform and its children (they
inherit it), the SUT's readers commit no offsets and the local platforms sample only
what Spark reports of itself (its micro-batch progress) and the generators' progress.
No verdict can be taken so (there is no lag): it is not an option of ``bench run``.

To tell which part costs what, :data:`ENV` may also name parts, comma-separated:
``commits`` (the SUT's readers commit nothing; lag and samplers as always, the lag then
only grows) or ``samplers`` (the platform samples as with ``1``; offsets are
committed). ``1`` is both.
"""

from __future__ import annotations

import os

ENV = "BENCH_NO_INSTRUMENTATION"
#: the parts :data:`ENV` can switch off one by one
PARTS = ("commits", "samplers")


def enabled(part: str | None = None) -> bool:
    """False when the environment switched bench's instrumentation (or ``part`` of it) off
    (:data:`ENV`); ``part`` None asks whether every part is on."""
    off = {p.strip() for p in os.environ.get(ENV, "").split(",") if p.strip()}
    if off & {"1", "true", "yes"}:
        return False
    return not off if part is None else part not in off
