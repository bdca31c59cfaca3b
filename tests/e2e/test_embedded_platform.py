"""The embedded platform end to end: broker, SUT processes, generators, lag, teardown."""

from __future__ import annotations

import asyncio
import copy
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench import metrics
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.builtin.calibrated import default_benchmark
from bench.platforms.embedded import EmbeddedPlatform, PlatformError
from bench.runtime.host import procs
from e2e_specs import calibrated_spec

pytestmark = pytest.mark.e2e


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid``, from /proc (no psutil here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("PPid", "").strip() == str(pid) and not fields.get("State", "").startswith("Z"):
            found.append(int(entry.name))
    return found


async def run_experiment(
    platform: EmbeddedPlatform, spec: ExperimentSpec, seconds: float, interval: float = 2.0
) -> tuple[list[float], list[float], list[Any], dict[str, float]]:
    times: list[float] = []
    lags: list[float] = []
    last: dict[str, float] = {}
    await platform.reset_topics(spec)
    try:
        await platform.start_sut(spec)
        await platform.start_generators(spec)
        for _ in range(int(seconds / interval)):
            sample = await platform.sample(spec)
            times.append(sample.timestamp)
            lags.append(sample.values["lag"])
            last = sample.values
            await asyncio.sleep(interval)
        # what a Prometheus scrape sees during the experiment (its series go at teardown)
        last["exported-lag"] = metrics.CONSUMER_LAG.labels(spec.experiment_id, spec.group_id)._value.get()
        reports = list(await platform.stop_generators(spec))
    finally:
        try:
            await platform.stop_sut(spec)
        finally:
            await platform.delete_topics(spec)
    return times, lags, reports, last


def slope(times: list[float], lags: list[float], warmup: float) -> float:
    t = np.asarray(times) - times[0]
    keep = t >= warmup
    return float(np.polyfit(t[keep], np.asarray(lags)[keep], 1)[0])


async def test_calibrated_experiment_lag_grows_by_excess_load_and_nothing_remains() -> None:
    before, live_before = set(children_of(os.getpid())), procs.live()
    platform = EmbeddedPlatform({"broker": "tansu"})
    await platform.open()
    assert platform.broker is not None and platform.broker.alive()
    try:
        spec = calibrated_spec("plat1", sensors=1500, instances=1, capacity=1000)
        times, lags, reports, last = await run_experiment(platform, spec, seconds=30)
    finally:
        await platform.close()
    assert not platform.broker
    # one generator, asked for 1500 records/s, reports how much it achieved
    assert len(reports) == 1 and reports[0].target_rate == 1500
    assert reports[0].records > 0 and reports[0].behind < 0.05
    assert last["generated-records"] > 0 and last["generator-rate"] > 0
    assert len(lags) >= 10 and min(lags) >= 0
    # one instance processing 1000/s under 1500/s: lag grows by ~500 records/s
    assert 350 < slope(times, lags, warmup=8) < 650
    assert last["exported-lag"] == lags[-1]
    # the ended experiment's series are dropped: a run of hundreds held them all
    assert not [k for g in metrics.PER_EXPERIMENT for k in g._metrics if k[0] == "plat1"]
    # every child (broker, SUT, generator) is gone
    assert set(children_of(os.getpid())) <= before
    assert procs.live() == live_before


async def test_a_sut_that_cannot_start_is_a_clear_error(kafka_bootstrap: str) -> None:
    broken = UseCase("broken", "no such module", default_benchmark, sut_process="bench.no_such_module_for_tests")
    before = set(children_of(os.getpid()))
    # the session's broker: the SUT's failure is the point, not a broker of its own (5.3 s)
    platform = EmbeddedPlatform({"bootstrap_servers": kafka_bootstrap})
    await platform.open()
    try:
        spec = calibrated_spec("plat2", sensors=10, instances=2, capacity=1000, partitions=2)
        spec.use_case = broken
        await platform.reset_topics(spec)
        with pytest.raises(PlatformError, match="No module named"):
            await platform.start_sut(spec)
        await platform.delete_topics(spec)
    finally:
        await platform.close()
    assert set(children_of(os.getpid())) <= before


async def test_external_platform_uses_the_given_cluster(kafka_bootstrap: str) -> None:
    platform = EmbeddedPlatform({"platform": "external", "bootstrap_servers": kafka_bootstrap})
    await platform.open()
    try:
        assert platform.broker is None and platform.servers == kafka_bootstrap
        spec = calibrated_spec("plat3", sensors=200, instances=1, capacity=1000, partitions=4)
        times, lags, reports, _ = await run_experiment(platform, spec, seconds=8)
    finally:
        await platform.close()
    assert reports and reports[0].records > 0
    assert lags[-1] < 200 * 2  # capacity 1000 under 200/s: the SUT keeps up


@pytest.mark.skipif(
    not os.environ.get("BENCH_TEST_STANDALONE"),
    reason="opt-in (BENCH_TEST_STANDALONE=1): three extra JVMs; 1-6 min depending on machine load",
)
async def test_spark_sut_on_a_standalone_cluster_reports_progress() -> None:
    """UC1 through the platform on a one-worker standalone cluster: the driver
    starts, micro-batches report progress into the samples, and everything
    (master, worker, driver JVM, generator, broker) is gone afterwards."""
    from bench.plugins import load_plugins

    use_cases = load_plugins().use_cases
    if "uc1" not in use_cases:
        pytest.skip("uc1 plugin not installed")
    uc1 = use_cases["uc1"]
    bench = uc1.default_benchmark()
    sut = copy.deepcopy(bench["sut"]["resources"][0])
    gen = copy.deepcopy(bench["loadGenerator"]["resources"][0])
    gen["spec"]["sensors"] = 500
    spec = ExperimentSpec(
        experiment_id="plat4",
        use_case=uc1,
        objects=[sut, gen],
        topics=[TopicSpec(t["name"], f"{t['name']}-plat4", t["numPartitions"]) for t in bench["kafkaConfig"]["topics"]],
        params=dict(uc1.default_params),
        load=500,
        resources=1,
        group_id="sut-plat4",
    )
    before = set(children_of(os.getpid()))
    platform = EmbeddedPlatform({"spark_mode": "standalone", "trigger_seconds": 2})
    await platform.open()
    values: dict[str, float] = {}
    try:
        await platform.reset_topics(spec)
        try:
            await platform.start_sut(spec)
            await platform.start_generators(spec)
            for _ in range(150):  # until a micro-batch with input has reported (or give up)
                values = (await platform.sample(spec)).values
                if values.get("input-rate", 0) > 0:
                    break
                await asyncio.sleep(2)
            await platform.stop_generators(spec)
        finally:
            await platform.stop_sut(spec)
            await platform.delete_topics(spec)
    finally:
        await platform.close()
    assert values.get("input-rate", 0) > 0, values
    assert values["batch-duration"] > 0 and values["malformed-records"] == 0
    assert set(children_of(os.getpid())) <= before
