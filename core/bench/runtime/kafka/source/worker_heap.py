"""Keeping long-lived objects of a reused PySpark worker out of the garbage collector."""

from __future__ import annotations

_heap_frozen = False


def freeze_worker_heap() -> None:
    """Move everything imported so far out of the garbage collector's sight, once per process.

    Why: a reused PySpark worker runs a full ``gc.collect()`` after *every* task
    (pyspark/daemon.py). With pyarrow, pandas and confluent-kafka imported, a profile
    of the Python workers showed most of their CPU in that one line, and micro-batches
    got several times faster once it was gone (docs/performance.md, "Spark Kafka
    source"). Frozen objects (modules, classes, functions: they live as long as the
    process anyway) are skipped by every later collection.
    """
    global _heap_frozen
    if _heap_frozen:
        return
    _heap_frozen = True
    import gc

    import pyarrow  # noqa: F401 - imported to be frozen
    import pyarrow.compute  # noqa: F401

    try:
        import pandas  # noqa: F401 - pyarrow's casts import it on first use
    except ImportError:
        pass
    gc.collect()
    gc.freeze()
