"""The rows of a topic as the bench-kafka source yields them, and column pruning."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("value", StringType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
    ]
)


def output_columns(schema: StructType | None) -> tuple[str, ...]:
    """The columns a reader produces for a user-specified ``schema`` (column pruning).

    Why: a Python data source gets no column pruning from Spark, and every column it
    yields is converted twice (Python -> Arrow -> JVM rows). Parsing measurements needs
    only ``value``, so ``read_topic(columns=...)`` asks for just that with
    ``.schema(...)``. Each requested field must be one of :data:`SCHEMA`'s, same type.
    """
    if schema is None:
        return tuple(SCHEMA.fieldNames())
    known = {f.name: f for f in SCHEMA.fields}
    for f in schema.fields:
        if f.name not in known:
            raise ValueError(f"bench-kafka has no column {f.name!r}; columns: {', '.join(known)}")
        if f.dataType != known[f.name].dataType:
            raise ValueError(
                f"bench-kafka column {f.name!r} is {known[f.name].dataType.simpleString()}, "
                f"not {f.dataType.simpleString()}"
            )
    wanted = set(schema.fieldNames())
    if len(wanted) != len(schema.fields):
        raise ValueError(f"bench-kafka schema names a column twice: {schema.simpleString()}")
    return tuple(name for name in SCHEMA.fieldNames() if name in wanted)


def select_columns(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` checked against :data:`SCHEMA` and put in its order."""
    known = SCHEMA.fieldNames()
    bad = [c for c in names if c not in known]
    if bad:
        raise ValueError(f"unknown topic column(s) {', '.join(map(repr, bad))}; columns: {', '.join(known)}")
    return tuple(c for c in known if c in names)


def schema_of(columns: tuple[str, ...]) -> StructType:
    return StructType([f for f in SCHEMA.fields if f.name in columns])
