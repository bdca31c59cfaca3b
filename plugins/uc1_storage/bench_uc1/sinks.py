"""UC1's stores, run inside Spark tasks through ``mapInArrow`` from ``foreachBatch``.

Writing happens on the executors, partition by partition, with one write (or one
transaction) per Arrow batch, so the store scales with the SUT's instances and never
funnels every record through the driver.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

BatchSink = Callable[["DataFrame", int], None]


def write_log(batches: Iterator[Any], directory: str, max_bytes: int) -> int:
    """Append each document as one line to this task's log file; returns the count."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    part = ctx.partitionId() if ctx is not None else 0
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"uc1-{os.getpid()}-{part}.log")
    count = 0
    with open(path, "ab", buffering=1 << 20) as fh:
        for batch in batches:
            values = batch.column(batch.schema.names.index("value")).to_pylist()
            if not values:
                continue
            fh.write(("\n".join(values) + "\n").encode())
            count += len(values)
    if max_bytes > 0 and os.path.getsize(path) > max_bytes:
        os.replace(path, path + ".1")  # bounded disk: keep one rotated file
    return count


def write_sqlite(batches: Iterator[Any], path: str) -> int:
    """Insert each document as one row of table ``documents``; returns the count."""
    import sqlite3

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    conn = sqlite3.connect(path, timeout=60)
    count = 0
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS documents (id INTEGER PRIMARY KEY, identifier TEXT, doc TEXT)"
        )
        for batch in batches:
            names = batch.schema.names
            keys = batch.column(names.index("key")).to_pylist()
            values = batch.column(names.index("value")).to_pylist()
            with conn:
                rows = zip(keys, values, strict=True)
                conn.executemany("INSERT INTO documents (identifier, doc) VALUES (?, ?)", rows)
            count += len(values)
    finally:
        conn.close()
    return count


def make_sink(kind: str, path: str, log_max_mb: float = 256) -> BatchSink:
    """A ``foreachBatch`` function storing each row's ``value`` document."""
    if kind not in ("log", "sqlite"):
        raise ValueError(f"uc1 parameter sink must be 'log' or 'sqlite', got {kind!r}")
    max_bytes = int(log_max_mb * 1024 * 1024)

    def store(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from bench.services import freeze_worker_heap

        freeze_worker_heap()  # skip pyspark's per-task full gc over every imported module

        n = write_sqlite(batches, path) if kind == "sqlite" else write_log(batches, path, max_bytes)
        yield pa.RecordBatch.from_arrays([pa.array([n], pa.int64())], names=["n"])

    def sink(df: DataFrame, batch_id: int) -> None:
        df.select("key", "value").mapInArrow(store, "n long").collect()

    return sink
