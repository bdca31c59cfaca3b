"""Batches filled through aiokafka's wrapped record builder equal public-API batches."""

from __future__ import annotations

from typing import Any

from aiokafka.producer.message_accumulator import BatchBuilder
from bench.runtime.load.record_batches import NO_HEADERS, BatchFiller, direct_append_works


class _Producer:
    """Just the part of AIOKafkaProducer a filler uses: small batches, to see them fill."""

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(2_048, 0)


def _fill(filler: BatchFiller, records: list[tuple[int, bytes, bytes]]) -> list[tuple[int, bytes]]:
    """(record count, built bytes) of each batch the records fill, as the generator fills them."""
    out: list[tuple[int, bytes]] = []
    batch, append = filler.open()
    n = 0
    for ts, key, value in records:
        if append(n, ts, key, value, NO_HEADERS) is None:
            filler.seal(batch, n)
            out.append((batch.record_count(), bytes(batch._build())))
            batch, append = filler.open()
            n = 0
            assert append(n, ts, key, value, NO_HEADERS) is not None
        n += 1
    filler.seal(batch, n)
    out.append((batch.record_count(), bytes(batch._build())))
    return out


def _records(count: int) -> list[tuple[int, bytes, bytes]]:
    value = b'{"identifier":"s_%d","valueInW":%d.0}'
    return [(1_764_000_000_000 + 3 * i, b"s_%d" % i, value % (i, i)) for i in range(count)]


def test_the_installed_aiokafka_supports_the_direct_path() -> None:
    # if this fails after an aiokafka upgrade, the generator silently takes the public
    # (slower) path: update record_batches for the new private layout
    assert direct_append_works()


def test_direct_and_public_batches_are_byte_identical_across_full_batches() -> None:
    records = _records(200)
    direct = _fill(BatchFiller(_Producer(), direct=True), records)
    public = _fill(BatchFiller(_Producer(), direct=False), records)
    assert len(direct) > 3  # several batches filled up and were split
    assert direct == public
    assert sum(count for count, _ in direct) == 200


def test_a_sealed_batch_takes_no_more_records() -> None:
    filler = BatchFiller(_Producer(), direct=True)
    batch, append = filler.open()
    append(0, 1, b"k", b"v", NO_HEADERS)
    filler.seal(batch, 1)
    any_batch: Any = batch
    assert any_batch.closed()
    assert any_batch.append(key=b"k", value=b"v", timestamp=2) is None
    assert any_batch.record_count() == 1
