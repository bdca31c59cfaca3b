"""Time attributes of a record's timestamp, in a configurable time zone.

Spark's ``hour()``/``dayofweek()`` read the session time zone, which belongs to the
runtime, not to the use case. So the local wall-clock time is computed explicitly:
``from_utc_timestamp(ts, zone)`` shifts the instant by the zone's offset at that
instant (DST included), and the shifted epoch milliseconds are then split with plain
integer arithmetic, which no session setting can change. Days of the week are ISO
(1 = Monday ... 7 = Sunday; 1970-01-01 was a Thursday); hour of week is
``(dayOfWeek - 1) * 24 + hourOfDay`` (0 = Monday 00:00-01:00).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from pyspark.sql import Column

HOUR_MS = 3_600_000
DAY_MS = 86_400_000


def time_attribute_column(timestamp: Column, attribute: str, zone: str) -> Column:
    """An int column with the value of ``attribute`` for each timestamp."""
    from pyspark.sql import functions as F

    local_ms = F.unix_millis(F.from_utc_timestamp(timestamp, zone))
    hour_of_day = F.pmod(F.floor(local_ms / HOUR_MS), F.lit(24))
    day_of_week = F.pmod(F.floor(local_ms / DAY_MS) + 3, F.lit(7)) + 1
    if attribute == "hourOfDay":
        column = hour_of_day
    elif attribute == "dayOfWeek":
        column = day_of_week
    elif attribute == "hourOfWeek":
        column = (day_of_week - 1) * 24 + hour_of_day
    else:
        raise ValueError(f"unknown time attribute {attribute!r}")
    return column.cast("int")


def time_attribute_value(epoch_ms: int, attribute: str, zone: str) -> int:
    """The same attribute in plain Python (the reference for tests and documentation)."""
    local = datetime.fromtimestamp(epoch_ms / 1000, ZoneInfo(zone))
    if attribute == "hourOfDay":
        return local.hour
    if attribute == "dayOfWeek":
        return local.isoweekday()
    if attribute == "hourOfWeek":
        return (local.isoweekday() - 1) * 24 + local.hour
    raise ValueError(f"unknown time attribute {attribute!r}")
