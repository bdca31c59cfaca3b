"""The informational SLIs a platform samples beside lag: latency, processed rate, CPU, memory.

One object per repetition, so that a platform adds them with a single call in its
``sample()``. Informational means: nothing here may fault a repetition. A failed
latency read or /proc read is logged once and the sample goes on without those values
(lag sampling, which decides, has its own fault handling). The latency SLO, if a
benchmark has one, then sees fewer samples and says so in its verdict.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence

from bench.runtime.host.stats import HostStats
from bench.runtime.kafka.latency import LatencySampler

log = logging.getLogger(__name__)

#: how long one latency sample may take before it is given up for this interval (s)
LATENCY_TIMEOUT_S = 5.0


class InfoSampler:
    """``sample(committed)`` -> latency percentiles, ``output-rate``, ``processed-rate``, host and SUT stats.

    ``committed``: the sum of the SUT group's committed offsets (the lag sampler reads
    them anyway); its growth per second is ``processed-rate``, the records the SUT
    finished, for any SUT that commits, Spark or not.
    """

    def __init__(self, bootstrap_servers: str, output_topics: Sequence[str],
                 groups: Callable[[], Iterable[int]] = tuple, clock: Callable[[], float] = time.monotonic) -> None:
        self.latency = LatencySampler(bootstrap_servers, output_topics) if output_topics else None
        self.host = HostStats(groups)
        self.clock = clock
        self._started = False
        self._committed: tuple[float, int] | None = None
        self._failed: set[str] = set()

    def _once(self, what: str, exc: BaseException) -> None:
        if what not in self._failed:
            self._failed.add(what)
            log.warning("informational SLI %s not sampled: %s: %s", what, type(exc).__name__, exc)

    async def sample(self, committed: int | None = None) -> dict[str, float]:
        values: dict[str, float] = {}
        try:
            values.update(self.host.sample())
        except Exception as exc:  # noqa: BLE001 - informational only
            self._once("host", exc)
        now = self.clock()
        if committed is not None:
            if self._committed is not None and now > self._committed[0]:
                values["processed-rate"] = max(0, committed - self._committed[1]) / (now - self._committed[0])
            self._committed = (now, committed)
        if self.latency is not None:
            try:
                if not self._started:
                    await asyncio.wait_for(self.latency.start(), LATENCY_TIMEOUT_S)
                    self._started = True
                values.update(await asyncio.wait_for(self.latency.sample(), LATENCY_TIMEOUT_S))
            except Exception as exc:  # noqa: BLE001 - informational only; the next sample tries again
                self._once("latency", exc)
        return values

    async def close(self) -> None:
        if self.latency is not None:
            await self.latency.close()
