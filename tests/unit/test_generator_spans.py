"""The generator's fast paths (spans, per-partition split, record templates) emit
exactly what the plain schedule and encoder define."""

from __future__ import annotations

import json
import random

import pytest
from bench.runtime.load.generator import Schedule, encode_record, record_template


def expand(schedule: Schedule, spans: list[tuple[int, int, int]], keys: list[int]) -> list[tuple[int, float]]:
    return [(keys[j], c * schedule.period_ms + schedule.phases[j]) for c, a, b in spans for j in range(a, b)]


@pytest.mark.parametrize(("count", "limit"), [(1, 7), (50, 10_000), (300, 37), (1000, 250)])
def test_spans_emit_what_take_emits(count: int, limit: int) -> None:
    plain, fast = Schedule(count, 500.0, random.Random(5)), Schedule(count, 500.0, random.Random(5))
    for until in (0.0, 120.0, 499.9, 500.0, 1700.0, 1700.0, 9000.0):
        while True:
            want = plain.take(until, limit)
            got = expand(fast, fast.spans(until, limit), fast.order)
            assert got == want
            if len(want) < limit:
                break
        assert fast.emitted == plain.emitted and fast.next_due() == plain.next_due()


def test_split_by_partition_emits_the_same_records() -> None:
    whole = Schedule(200, 1000.0, random.Random(9))
    groups = [i % 7 for i in range(200)]
    lanes = Schedule(200, 1000.0, random.Random(9)).split(groups)
    want = sorted(whole.take(5500.0, 10**6))
    got = sorted(e for sub, idx in lanes.values() for e in expand(sub, sub.spans(5500.0, 10**6), idx))
    assert got == want
    assert all(groups[i] == part for part, (_, idx) in lanes.items() for i in idx)
    assert min(sub.next_due() for sub, _ in lanes.values()) == whole.next_due()


@pytest.mark.parametrize("key", ["s_1", 's_"%d"', "s_100%"])
def test_template_matches_json(key: str) -> None:
    raw = record_template(json.dumps(key), 12.5) % 1_700_000_000_123
    assert raw == encode_record(json.dumps(key), 1_700_000_000_123, 12.5)
    assert json.loads(raw) == {"identifier": key, "timestamp": 1_700_000_000_123, "valueInW": 12.5}
