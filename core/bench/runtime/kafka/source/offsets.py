"""The source's offsets: their JSON, and how far one micro-batch may read.

This source writes ``{"topic": name, "offsets": {"<partition>": next_offset, ...}}``
into Spark's offset log; :func:`parse_any_offset` also reads Spark's own ``kafka``
source's JSON, so that the offset committer serves both connectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def make_offset(topic: str, offsets: Mapping[int, int]) -> dict[str, Any]:
    return {"topic": topic, "offsets": {str(p): int(offsets[p]) for p in sorted(offsets)}}


def parse_offset(offset: Mapping[str, Any]) -> tuple[str, dict[int, int]]:
    return str(offset["topic"]), {int(p): int(v) for p, v in dict(offset["offsets"]).items()}


def parse_any_offset(offset: Mapping[str, Any]) -> dict[str, dict[int, int]]:
    """Topic -> partition -> next offset, from this source's or Spark's ``kafka`` source's JSON.

    Spark's connector writes ``{"topic": {"0": 12, "1": 7}}`` (several topics when it
    subscribes to several); this source writes ``{"topic": name, "offsets": {...}}``.
    """
    if isinstance(offset.get("topic"), str) and isinstance(offset.get("offsets"), Mapping):
        topic, offsets = parse_offset(offset)
        return {topic: offsets}
    return {str(t): {int(p): int(v) for p, v in dict(parts).items()} for t, parts in offset.items()}


def limit_ends(begin: Mapping[int, int], ends: dict[int, int], lows: Mapping[int, int], budget: int) -> dict[int, int]:
    """Share ``budget`` records over the partitions in proportion to what each has."""
    avail = {p: ends[p] - begin.get(p, lows.get(p, 0)) for p in ends}
    total = sum(avail.values())
    if total <= budget:
        return ends
    out = {}
    for p, a in avail.items():
        share = max(1, budget * a // total) if a > 0 else 0
        out[p] = begin.get(p, lows.get(p, 0)) + min(a, share)
    return out
