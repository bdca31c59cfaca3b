"""Prometheus as an SLI source: range queries over a repetition's interval.

On Kubernetes the lag usually comes from a Kafka exporter scraped by Prometheus, not
from the framework itself, and dropped and malformed records from the SUT's driver,
which serves them (:func:`bench.metrics.exporting`); this module reads such series back
as ``bench.api.Series`` or instant values.
An empty answer is an error, never an empty series: an SLO checker given no data
would otherwise have nothing to fail on.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from bench.api import Series

#: the Kafka exporter's metric; the framework's own exporter publishes bench_consumer_lag
DEFAULT_LAG_QUERY = 'sum(kafka_consumergroup_lag{{consumergroup="{group}"}})'


#: SLIs the SUT's driver exports itself (bench.metrics.exporting) -> their metric; the
#: label ``group`` is the repetition's consumer group
SUT_SLIS = {"dropped-records": "bench_sut_dropped_records", "malformed-records": "bench_sut_malformed_records"}
SUT_QUERY = 'sum({metric}{{group="{group}"}})'


class PrometheusError(RuntimeError):
    """Prometheus could not answer (unreachable, bad query, error status)."""


class EmptyResultError(PrometheusError):
    """The query matched no series in the interval."""


def lag_query(group: str, template: str = DEFAULT_LAG_QUERY) -> str:
    """The lag query of a consumer group; ``template`` may use ``{group}``."""
    return template.format(group=group)


def sut_query(sli: str, group: str, template: str = SUT_QUERY) -> str:
    """The query of one SUT-exported SLI of a repetition (``template`` may use
    ``{metric}`` and ``{group}``)."""
    return template.format(metric=SUT_SLIS[sli], group=group)


def _labels(metric: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(metric.items()))


def _value(raw: Any) -> float:
    try:
        return float(raw)
    except (TypeError, ValueError):
        return math.nan


@dataclass
class PrometheusSource:
    """Range and instant queries against one Prometheus server (its base URL)."""

    url: str
    step: float = 5.0
    timeout: float = 10.0
    retries: int = 3
    retry_delay: float = 1.0

    async def query_range(
        self, query: str, start: float, end: float, step: float | None = None
    ) -> list[Series]:
        """One Series per result series between ``start`` and ``end`` (epoch seconds)."""
        if end < start:
            raise ValueError(f"end {end} lies before start {start}")
        params = {
            "query": query,
            "start": f"{start:.3f}",
            "end": f"{end:.3f}",
            "step": f"{step or self.step:g}",
        }
        data = await self._get("/api/v1/query_range", params, query)
        result = [
            Series(
                timestamps=[float(ts) for ts, _ in item.get("values", [])],
                values=[_value(v) for _, v in item.get("values", [])],
                labels=_labels(item.get("metric", {})),
            )
            for item in data.get("result", [])
        ]
        result = [s for s in result if s.timestamps]
        if not result:
            raise EmptyResultError(
                f"Prometheus returned no data for query {query!r} between {start:.0f} and {end:.0f}"
            )
        return result

    async def query(self, query: str, at: float | None = None) -> list[tuple[str, float, float]]:
        """Instant query: (labels, timestamp, value) per series; empty is an error too."""
        params = {"query": query}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = await self._get("/api/v1/query", params, query)
        rows = []
        for item in data.get("result", []):
            if "value" in item:
                ts, raw = item["value"]
                rows.append((_labels(item.get("metric", {})), float(ts), _value(raw)))
        if not rows:
            raise EmptyResultError(f"Prometheus returned no data for query {query!r}")
        return rows

    async def value(self, query: str, at: float | None = None) -> float:
        """The sum over the series of an instant query (lag is summed over partitions).

        Series without a value (NaN) are left out of the sum; when no series has one the
        answer is NaN, a missing sample, never 0: a lag of 0 passes every lag SLO.
        """
        values = [v for _, _, v in await self.query(query, at) if not math.isnan(v)]
        return math.fsum(values) if values else math.nan

    async def _get(self, path: str, params: Mapping[str, str], query: str) -> dict[str, Any]:
        """GET with retries on connection errors and 5xx; a 4xx (bad query) fails at once."""
        url = self.url.rstrip("/") + path
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        last: str = ""
        for attempt in range(max(1, self.retries)):
            if attempt:
                await asyncio.sleep(self.retry_delay)
            try:
                async with aiohttp.ClientSession(timeout=timeout) as session:
                    async with session.get(url, params=params) as response:
                        body = await response.json(content_type=None)
                        if response.status >= 500:
                            last = f"HTTP {response.status}: {body.get('error', '') if body else ''}"
                            continue
                        if response.status >= 400 or body.get("status") != "success":
                            raise PrometheusError(
                                f"Prometheus rejected query {query!r}: "
                                f"{body.get('errorType', response.status)}: {body.get('error', '')}"
                            )
                        payload: dict[str, Any] = body.get("data", {})
                        return payload
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
        raise PrometheusError(
            f"Prometheus at {self.url} did not answer query {query!r} "
            f"after {max(1, self.retries)} tries: {last}"
        )
