"""The latency SLI's pieces without a broker: event times, percentiles, the ``latency`` SLO."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from aiokafka import TopicPartition
from bench.api import Series, SloContext
from bench.builtin.slos import check_latency, latency_sli, validate_latency
from bench.plugins import load_plugins
from bench.runtime.kafka.latency import LatencySampler, event_time_ms, latency_stats, sample_runs


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b'{"identifier":"s_1","timestamp":1700000000123,"valueInW":5.0}', 1700000000123.0),
        # a window result: its latest event time wins over any other time field
        (b'{"identifier":"s_1","windowEnd":1700000060000,"latestEventTime":1700000059999,"timestamp":1}',
         1700000059999.0),
        (b'{"identifier": "s_1", "latestEventTime": 42}', 42.0),
        (b'{"identifier":"s_1"}', None),
        (b"", None),
        (None, None),
    ],
)
def test_event_time_of_an_output_value(value: bytes | None, expected: float | None) -> None:
    assert event_time_ms(value) == expected


def test_stats_of_one_interval() -> None:
    stats = latency_stats(list(range(1, 101)), seconds=2.0)
    assert stats["latency-p50"] == pytest.approx(50.5)
    assert stats["latency-p99"] == pytest.approx(99.01)
    assert stats["latency-max"] == 100.0
    assert stats["output-rate"] == 50.0


def test_an_interval_without_output_is_nan_not_zero() -> None:
    stats = latency_stats([], seconds=5.0)
    assert all(math.isnan(stats[k]) for k in ("latency-p50", "latency-p95", "latency-p99", "latency-max"))
    assert stats["output-rate"] == 0.0


@pytest.mark.parametrize(("percentile", "sli"), [(99, "latency-p99"), ("p95", "latency-p95"), ("50", "latency-p50"),
                                                  ("max", "latency-max"), (99.0, "latency-p99")])
def test_the_percentile_names_the_series(percentile: object, sli: str) -> None:
    props = {"percentile": percentile, "threshold": 2000}
    validate_latency(props)
    assert latency_sli(props) == sli
    assert load_plugins().slos["latency"].sli_name(props) == sli


@pytest.mark.parametrize(
    ("props", "error"),
    [({"percentile": 98, "threshold": 1}, "percentile"), ({"percentile": True, "threshold": 1}, "percentile"),
     ({}, "threshold"), ({"threshold": "soon"}, "threshold"), ({"threshold": -1}, "threshold"),
     ({"threshold": 1, "queryAggregation": "trend"}, "queryAggregation"),
     ({"threshold": 1, "aggregation": "max"}, "aggregation: not a property")],
)
def test_bad_properties_are_refused_naming_the_property(props: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        validate_latency(props)


def _series(values: list[float], step: float = 5.0) -> Series:
    return Series([1000.0 + i * step for i in range(len(values))], values)


def _ctx(threshold: float, warmup: float = 10.0, **props: object) -> SloContext:
    return SloContext(load=100, resources=1, warmup=warmup, properties={"threshold": threshold, **props})


def test_a_steady_latency_below_the_bound_passes() -> None:
    verdict = check_latency([_series([5000, 4000, 300, 320, 310, 290]), _series([math.nan, 280, 300, 330, 300])],
                            _ctx(1000))
    assert verdict.passed, verdict.details
    assert verdict.details["unit"] == "ms"
    assert verdict.details["aggregate"] == pytest.approx(302.5)  # median of 305 and 300


def test_a_growing_latency_fails() -> None:
    verdict = check_latency([_series([300, 900, 1500, 2100, 2700, 3300])], _ctx(1000))
    assert not verdict.passed
    assert verdict.details["aggregate"] == pytest.approx(2400.0)


def test_the_warmup_counts_from_the_first_sample_even_if_it_had_no_output() -> None:
    # a windowed use case: no output in the first intervals; the warm-up still ends 10 s after the start
    series = _series([math.nan, math.nan, 700, 800, math.nan, 900])
    verdict = check_latency([series], _ctx(1000, warmup=10.0, queryAggregation="max"))
    assert verdict.passed
    assert verdict.details["samples"] == [3]


def test_no_output_after_the_warmup_fails_and_says_why() -> None:
    verdict = check_latency([_series([100, math.nan, math.nan, math.nan])], _ctx(1000))
    assert not verdict.passed
    assert "no output" in verdict.details["error"]


def test_strimzi_output_topics_take_the_brokers_clock() -> None:
    from bench.api import ExperimentSpec, TopicSpec
    from bench.builtin.calibrated import CALIBRATED
    from bench.platforms.kubernetes.platform import KubernetesPlatform

    spec = ExperimentSpec("e1", CALIBRATED, [], [TopicSpec("input", "in-e1"), TopicSpec("output", "out-e1")], {}, 1, 1)
    topics = {t["spec"]["topicName"]: t["spec"] for t in KubernetesPlatform({"topics": "strimzi"}).kafka_topics(spec)}
    assert topics["out-e1"]["config"] == {"message.timestamp.type": "LogAppendTime"}
    assert "config" not in topics["in-e1"]


def test_an_interval_within_the_budget_is_read_whole() -> None:
    assert sample_runs(100, 150, budget=50) == [(100, 50)]
    assert sample_runs(7, 7) == []


def test_a_busy_interval_is_read_as_evenly_spaced_runs_inside_it() -> None:
    runs = sample_runs(1_000, 101_000, budget=2_000, segments=10)
    assert [offset for offset, _ in runs] == [1_000 + 10_000 * i for i in range(10)]
    assert {count for _, count in runs} == {200}
    assert all(offset + count <= 101_000 for offset, count in runs)
    # just over the budget: the runs still stay inside the interval and do not overlap
    runs = sample_runs(0, 11, budget=10, segments=10)
    assert all(a + n <= b for (a, n), (b, _) in zip(runs, runs[1:], strict=False)) and runs[-1][0] + runs[-1][1] <= 11


def test_a_sampled_interval_s_output_rate_counts_every_record() -> None:
    stats = latency_stats([10.0, 20.0, 30.0], seconds=5.0, records=5_000)
    assert stats["output-rate"] == 1_000.0
    assert stats["latency-p50"] == 20.0
    assert stats["latency-share"] == pytest.approx(3 / 5_000)  # the percentiles say what they rest on


class _Record:
    def __init__(self, topic: str, offset: int) -> None:
        self.topic, self.offset = topic, offset
        self.value = b'{"identifier":"s_1","timestamp":1000}'
        self.timestamp, self.timestamp_type = 1010, 1  # the broker's clock: 10 ms after the event


class _EndlessOutput:
    """An output partition a SUT writes to all the time: every fetch finds a new record."""

    def __init__(self, tp: object, end: int) -> None:
        self.tp, self.end, self.next = tp, end, 0

    async def end_offsets(self, partitions: list[object]) -> dict[object, int]:
        return {self.tp: self.end}

    async def position(self, tp: object) -> int:
        return self.next

    async def getmany(self, *partitions: object, timeout_ms: int = 0,
                      max_records: int = 0) -> dict[object, list[_Record]]:
        await asyncio.sleep(0.005)
        self.next += 1
        return {self.tp: [_Record("out", self.next - 1)]}


async def test_a_sample_reads_to_the_end_offsets_it_took_not_for_its_whole_budget() -> None:
    # A SUT that never stops writing left no empty fetch: each sample read for its whole
    # budget (1.5 s) and a 1-s sample interval became 1.5 s.
    tp = TopicPartition("out", 0)
    sampler = LatencySampler("127.0.0.1:9", ["out"], read_budget_s=5.0)
    sampler._consumer = _EndlessOutput(tp, end=20)  # type: ignore[assignment]
    sampler._assigned = [tp]
    started = time.monotonic()
    latencies, read = await sampler.read()
    assert time.monotonic() - started < 2.0
    assert read == 20 and latencies == [10.0] * 20
