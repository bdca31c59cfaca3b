"""The calibrated use case measures what it should: demand = ceil(load / capacity).

With load L and n instances of capacity C the lag grows by max(0, L - n*C) records/s.
Two experiments run side by side on one embedded broker (their own topics and
groups), so this costs one experiment's time: L = 2500/s, C = 1000/s, so
n = ceil(L/C) = 3 must pass a lag-trend threshold of 1 % of the load, and n - 1 = 2
(lag growing ~500/s) must fail it.

The broker is the default one: Apache Kafka when scripts/install fetched it (its
ListOffsets end offsets are exact, so a 1 % threshold is decided by the SUT, not by
the broker), the session's (``kafka_bootstrap``): the platform starting a broker of its
own is what every ``bench run`` of the e2e tests does, and here it cost 6.4 s.
"""

from __future__ import annotations

import asyncio

import pytest
from bench.api import ExperimentSpec, Series, SloContext
from bench.platforms.embedded import EmbeddedPlatform
from bench.plugins import load_plugins
from e2e_specs import calibrated_spec

pytestmark = pytest.mark.e2e

LOAD = 2500
CAPACITY = 1000
WARMUP = 12.0
DURATION = 40.0
INTERVAL = 2.0


def spec_for(exp: str, instances: int) -> ExperimentSpec:
    return calibrated_spec(exp, sensors=LOAD, instances=instances, capacity=CAPACITY)


async def lag_series(platform: EmbeddedPlatform, spec: ExperimentSpec) -> Series:
    series = Series([], [])
    await platform.reset_topics(spec)
    try:
        await platform.start_sut(spec)
        await platform.start_generators(spec)
        for _ in range(int(DURATION / INTERVAL)):
            sample = await platform.sample(spec)
            series.timestamps.append(sample.timestamp)
            series.values.append(sample.values["lag"])
            await asyncio.sleep(INTERVAL)
        reports = await platform.stop_generators(spec)
        assert all(r.behind < 0.01 for r in reports), reports  # the load really was L
    finally:
        try:
            await platform.stop_sut(spec)
        finally:
            await platform.delete_topics(spec)
    return series


async def test_demand_is_ceil_of_load_over_capacity(kafka_bootstrap: str) -> None:
    slo = load_plugins().slos["lag-trend"]
    platform = EmbeddedPlatform({"bootstrap_servers": kafka_bootstrap})  # the default broker: Apache Kafka
    await platform.open()
    try:
        enough, short = await asyncio.gather(
            lag_series(platform, spec_for("cal-enough", 3)), lag_series(platform, spec_for("cal-short", 2))
        )
    finally:
        await platform.close()

    def verdict(series: Series, n: int) -> tuple[bool, dict[str, object]]:
        ctx = SloContext(
            load=LOAD, resources=n, warmup=WARMUP, properties={"thresholdRelToLoad": 0.01}, load_rate=float(LOAD)
        )
        # warm-up counts from the first sample
        start = series.timestamps[0]
        v = slo.check([Series([t - start for t in series.timestamps], series.values)], ctx)
        return v.passed, v.details

    passed, details = verdict(enough, 3)
    assert passed, details
    passed, details = verdict(short, 2)
    assert not passed, details
