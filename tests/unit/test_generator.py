"""The active-power generator's pure parts: schedule, encoding, partitioning."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from aiokafka.partitioner import DefaultPartitioner
from bench.api import sensor_keys, split_keys
from bench.plugins import load_plugins
from bench.runtime.calibrated_sut import Pacer
from bench.runtime.load.generator import Schedule, assign_partitions, encode_record, partition_of
from bench.runtime.load.generator_main import spec_from_json


def test_schedule_every_key_once_per_period_in_phase_order() -> None:
    schedule = Schedule(50, 1000.0, random.Random(1))
    first = schedule.take(1000.0, 10_000)
    assert sorted(i for i, _ in first) == list(range(50))  # each key exactly once in one period
    dues = [d for _, d in first]
    assert dues == sorted(dues) and all(0 <= d < 1000 for d in dues)
    second = schedule.take(2000.0, 10_000)
    by_key_first = {i: d for i, d in first}
    assert all(abs(d - by_key_first[i] - 1000.0) < 1e-9 for i, d in second)  # fixed period per key


def test_schedule_count_over_a_run_matches_rate() -> None:
    # open model: what is due in T seconds is keys x T / period, +- one record per key
    schedule = Schedule(300, 500.0, random.Random(7))
    due = schedule.take(10_000.0, 10**6)
    assert abs(len(due) - 300 * 20) <= 300


def test_schedule_respects_limit_and_resumes() -> None:
    schedule = Schedule(10, 100.0, random.Random(3))
    part1 = schedule.take(1000.0, 25)
    part2 = schedule.take(1000.0, 10**6)
    assert len(part1) == 25
    assert len(part1) + len(part2) == 100
    assert schedule.next_due() > 1000.0


def test_empty_schedule() -> None:
    schedule = Schedule(0, 1000.0, random.Random())
    assert schedule.take(10_000.0, 100) == []
    assert schedule.next_due() == float("inf")


def test_phases_are_random_not_aligned() -> None:
    a = Schedule(20, 1000.0, random.Random(1)).phases
    b = Schedule(20, 1000.0, random.Random(2)).phases
    assert a != b
    assert len({round(p, 6) for p in a}) == 20


def test_record_is_active_power_json() -> None:
    raw = encode_record(json.dumps('s_"1'), 1_700_000_000_123, 10)
    record = json.loads(raw)
    assert record == {"identifier": 's_"1', "timestamp": 1_700_000_000_123, "valueInW": 10.0}
    assert list(record) == ["identifier", "timestamp", "valueInW"]


def test_murmur2_partitioning_matches_kafka_default() -> None:
    parts = list(range(7))
    for key in (b"s_0", b"s_1", b"s_12345", b"sensor-x"):
        assert partition_of(key, 7) == DefaultPartitioner()(key, parts, parts)
    keys = [k.encode() for k in sensor_keys(100)]
    assert assign_partitions(keys, parts, {}) == [partition_of(k, 7) for k in keys]


def test_round_robin_partitioning_is_balanced_across_instances() -> None:
    keys = sensor_keys(1003)
    parts = list(range(60))
    counts: Counter[int] = Counter()
    offset = 0
    for chunk in split_keys(keys, 3):
        counts.update(
            assign_partitions([k.encode() for k in chunk], parts, {"partitioner": "round-robin", "keyOffset": offset})
        )
        offset += len(chunk)
    assert sum(counts.values()) == 1003
    assert max(counts.values()) - min(counts.values()) <= 1


def test_unknown_partitioner_is_rejected() -> None:
    with pytest.raises(ValueError, match="partitioner"):
        assign_partitions([b"a"], [0], {"partitioner": "nope"})


def test_generator_is_registered_and_spec_round_trips() -> None:
    registry = load_plugins()
    gen = registry.generators["active-power"]
    assert gen.keys is not None and gen.keys(3, {}) == ["s_0", "s_1", "s_2"]
    spec = spec_from_json({"bootstrap_servers": "h:1", "topic": "t", "keys": ["a"], "period_ms": 250})
    assert spec.period_ms == 250.0 and spec.duration_s is None and spec.params == {}


def test_calibrated_use_case_is_registered() -> None:
    uc = load_plugins().use_cases["calibrated"]
    assert uc.sut_process == "bench.runtime.calibrated_sut" and uc.topology is None
    bench = uc.default_benchmark()
    assert bench["sut"]["resources"][0]["spec"]["params"]["capacity"] == 1000
    assert bench["kafkaConfig"]["topics"][0]["numPartitions"] >= 12


async def test_pacer_accumulates_cost_without_unbounded_credit(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr("bench.runtime.calibrated_sut.time.monotonic", lambda: clock[0])
    monkeypatch.setattr("bench.runtime.calibrated_sut.asyncio.sleep", fake_sleep)
    pacer = Pacer(1000.0, burst_s=0.1)
    clock[0] += 60.0  # idle for a minute: only 0.1 s of credit may be saved
    await pacer.take(100)
    assert slept == []  # 100 records = 0.1 s, covered by the credit
    await pacer.take(500)
    assert slept and abs(sum(slept) - 0.5) < 1e-9  # then exactly 1 ms per record


def test_a_record_function_becomes_a_template_of_one_key() -> None:
    from bench.runtime.load.generator import RecordCall

    assert RecordCall(lambda key, ts: f"{key}@{ts}", "s_1") % 5 == b"s_1@5"
    assert RecordCall(lambda key, ts: b"\x00" + key.encode(), "k") % 0 == b"\x00k"
    with pytest.raises(TypeError, match="returned dict for key 's_1'; return bytes or str"):
        RecordCall(lambda key, ts: {"k": key}, "s_1") % 0  # type: ignore[arg-type,return-value]
