"""Window statistics shared by the aggregating use cases (UC2, UC3).

One definition so that every use case reports the same statistics under the same
names (count, sum, min, max, mean, populationVariance), as the reference does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column


def statistics_columns(value: str = "valueInW") -> list[Column]:
    """Spark aggregate expressions of the downsampling statistics, named as in the output JSON."""
    from pyspark.sql import functions as F

    v = F.col(value)
    return [
        F.count(v).alias("count"),
        F.sum(v).alias("sum"),
        F.min(v).alias("min"),
        F.max(v).alias("max"),
        F.avg(v).alias("mean"),
        F.var_pop(v).alias("populationVariance"),
    ]
