"""Records of one range as Arrow record batches, only the columns asked for.

Why Arrow: a Python data source may yield ``pyarrow.RecordBatch`` objects, which Spark
takes over column by column instead of converting one Python row at a time. Batches of
:data:`ARROW_ROWS` let the JVM start on the first rows while Python reads the next
(docs/performance.md, "Spark Kafka source").
"""

from __future__ import annotations

from typing import Any

from bench.runtime.kafka.source.ranges import KafkaRange

#: rows per Arrow batch a range reader yields
ARROW_ROWS = 8192


def strings(pa: Any, items: list[bytes | None]) -> Any:
    """Keys or values as an Arrow string column; bytes that are not UTF-8 are decoded
    with replacement, so the row stays and the topology's parsing rejects it."""
    try:
        return pa.array(items, pa.binary()).cast(pa.string())
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return pa.array([None if b is None else b.decode("utf-8", "replace") for b in items], pa.string())


def record_batch(
    pa: Any,
    rng: KafkaRange,
    keys: list[bytes | None],
    values: list[bytes | None],
    offsets: list[int],
    stamps: list[int],
) -> Any:
    """One batch of ``rng.columns``; ``keys``, ``values`` and ``stamps`` (ms) hold data
    only for the columns asked for, ``offsets`` always."""
    n = len(offsets)
    build = {
        "key": lambda: strings(pa, keys),
        "value": lambda: strings(pa, values),
        "topic": lambda: pa.array([rng.topic] * n, pa.string()),
        "partition": lambda: pa.array([rng.partition] * n, pa.int32()),
        "offset": lambda: pa.array(offsets, pa.int64()),
        "timestamp": lambda: pa.array([s * 1000 for s in stamps], pa.timestamp("us", tz="UTC")),
    }
    return pa.RecordBatch.from_arrays([build[name]() for name in rng.columns], names=list(rng.columns))
