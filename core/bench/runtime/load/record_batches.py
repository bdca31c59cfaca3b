"""Filling aiokafka batches without its per-record Python wrapper.

``BatchBuilder.append`` is a Python method that takes keywords, checks for serializers
and the closed flag, then calls the Cython record builder it wraps. In a saturated
generator that wrapper cost more than the record builder itself (docs/performance.md,
"Generator"). So the generator appends through the wrapped builder and keeps the
batch's record count itself.

That reaches into two private attributes of aiokafka's ``BatchBuilder`` (``_builder``
and ``_relative_offset``). :func:`direct_append_works` checks once per process that a
batch filled this way builds byte-identical to one filled through the public
``append``; if it does not (another aiokafka), :class:`BatchFiller` uses the public
method, slower but correct.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Protocol

#: ``append(offset, timestamp_ms, key, value, headers)``: a record's metadata, or None
#: when the batch is full
Append = Callable[[int, int, bytes, bytes, list[Any]], object | None]

#: the headers every generated record has (none); the record builder wants a list
NO_HEADERS: list[Any] = []


class _Producer(Protocol):
    def create_batch(self) -> Any: ...


class BatchFiller:
    """Opens batches of one producer and seals them with their record count.

    Usage: ``batch, append = filler.open()``; call ``append(n, ts, key, value,
    NO_HEADERS)`` with n = 0, 1, ... until it returns None (full) or the records run
    out; then ``filler.seal(batch, n)`` before ``send_batch``.
    """

    def __init__(self, producer: _Producer, direct: bool | None = None) -> None:
        self.producer = producer
        self.direct = direct_append_works() if direct is None else direct

    def open(self) -> tuple[Any, Append]:
        batch = self.producer.create_batch()
        if self.direct:
            return batch, batch._builder.append
        public = batch.append

        def append(offset: int, timestamp: int, key: bytes, value: bytes, headers: list[Any]) -> object | None:
            return public(key=key, value=value, timestamp=timestamp, headers=headers)

        return batch, append

    def seal(self, batch: Any, count: int) -> None:
        """Record ``count`` as the batch's size (the producer numbers idempotent
        sequences by it) and close it to further appends."""
        if self.direct:
            batch._relative_offset = count
        batch.close()


@cache
def direct_append_works() -> bool:
    """Whether appending through ``BatchBuilder._builder`` builds the same bytes as the
    public ``append`` in the installed aiokafka."""
    try:
        from aiokafka.producer.message_accumulator import BatchBuilder

        records = [(1_764_000_000_000 + i, b"k%d" % i, b'{"v":%d}' % i) for i in range(3)]
        public = BatchBuilder(16_384, 0)
        for ts, key, value in records:
            public.append(key=key, value=value, timestamp=ts)
        direct = BatchBuilder(16_384, 0)
        append = direct._builder.append
        for n, (ts, key, value) in enumerate(records):
            append(n, ts, key, value, NO_HEADERS)
        direct._relative_offset = len(records)
        direct.close()
        return bool(direct.record_count() == public.record_count() and bytes(direct._build()) == bytes(public._build()))
    except Exception:  # noqa: BLE001 - any mismatch in private API means: use the public one
        return False
