"""UC3's time attributes in plain Python, the reference the Spark column is checked against."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bench_uc3.time_attr import time_attribute_value


def ms(text: str, zone: str = "UTC") -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp() * 1000)


def test_reference_time_attributes_are_iso() -> None:
    monday = ms("2026-03-30T05:10:00")
    assert time_attribute_value(monday, "dayOfWeek", "UTC") == 1
    assert time_attribute_value(monday, "hourOfWeek", "UTC") == 5
    assert time_attribute_value(ms("2026-03-29T23:10:00"), "hourOfWeek", "UTC") == 6 * 24 + 23
