"""SLO checks by an external checker, as the reference's operator calls them.

An SLO whose properties name ``externalSloChecker`` (current schema) or
``externalSloUrl`` (older schema) has its verdict made by that HTTP service: bench posts
the reference's JSON document, ``{"results": [...], "metadata": {...}}``, and takes the
service's answer (a JSON ``true`` or ``false``), so a team's own checker keeps working.

``results`` holds one entry per repetition, each a list of Prometheus range-query
results (``{"metric": {labels}, "values": [[timestamp, "value"], ...]}``); bench sends
one series per repetition, labelled as the reference's lag query labels it
(``group``), so the reference's lag-trend checker reads it unchanged. ``metadata``
carries the threshold the reference computed (already resolved from
``thresholdRelToLoad`` and the like), the warm-up (``warmup`` in the older schema,
``warmupSeconds`` in the current one) and, when given, ``queryAggregation``,
``repetitionAggregation`` and ``operator``.

The reference bundles its own checkers as sidecars and points its SLOs at them
(``http://localhost:80/evaluate-slope``, ``http://localhost:8082``, ...). bench has those
rules built in, so such an address is evaluated by bench itself with the same rule,
and no sidecar is needed: :func:`external_url` returns None for them.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from bench.api import Series, SloVerdict
from bench.config.slo_properties import URL_KEYS

#: the ports of the reference's bundled checkers on localhost (lag trend, dropped records, generic)
BUNDLED_PORTS = frozenset({80, 8081, 8082})
#: the reference's client: two attempts, 60 s each
RETRIES = 2
TIMEOUT_S = 60.0


def is_bundled(url: str) -> bool:
    """An address of the reference's own sidecar checkers, whose rules bench applies itself."""
    parts = urlsplit(url)
    return parts.hostname in ("localhost", "127.0.0.1") and (parts.port or 80) in BUNDLED_PORTS


def external_url(properties: Mapping[str, Any]) -> str | None:
    """The checker an SLO names, unless it is one of the reference's bundled ones."""
    for key in URL_KEYS:
        value = properties.get(key)
        if isinstance(value, str) and value.strip():
            url = value.strip()
            return None if is_bundled(url) else url
    return None


def check_url(properties: Mapping[str, Any]) -> None:
    """Refuses a checker address that is not an http(s) URL (validation, before a run)."""
    for key in URL_KEYS:
        value = properties.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        parts = urlsplit(str(value).strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{key}: {value!r} is not an http(s) URL of an SLO checker")


def _value(v: float) -> str:
    # Prometheus writes sample values as strings; NaN as "NaN".
    if math.isnan(v):
        return "NaN"
    return repr(int(v)) if float(v).is_integer() else repr(float(v))


def document(series: Sequence[Series], metadata: Mapping[str, Any],
             labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The reference's request body for these repetitions (one series each)."""
    metric = dict(labels or {"group": "bench"})
    results = [
        [{"metric": metric, "values": [[float(t), _value(float(v))] for t, v in zip(s.timestamps, s.values,
                                                                                 strict=True)]}]
        for s in series
    ]
    return {"results": results, "metadata": dict(metadata)}


def post(url: str, body: Mapping[str, Any], timeout: float = TIMEOUT_S, retries: int = RETRIES) -> bool:
    """POST the document; the answer ``true`` (any case) passes, anything else fails,
    as the reference reads it. A non-200 status is retried; then it is an error."""
    data = json.dumps(body).encode("utf-8")
    last = ""
    for _ in range(max(1, retries)):
        request = urllib.request.Request(url, data=data, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (the user's URL)
                return response.read().decode("utf-8", "replace").strip().lower() == "true"
        except urllib.error.HTTPError as exc:
            last = f"status {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
    raise ConnectionError(f"could not reach the external SLO checker at {url}: {last}")


def external_verdict(url: str, series: Sequence[Series], metadata: Mapping[str, Any]) -> SloVerdict:
    """The checker's verdict, with what was sent in the details; unreachable is a failure."""
    details: dict[str, Any] = {"externalSloChecker": url, **{k: v for k, v in metadata.items()}}
    try:
        passed = post(url, document(series, metadata))
    except ConnectionError as exc:
        return SloVerdict(False, {**details, "error": str(exc)})
    return SloVerdict(passed, details)


def metadata(properties: Mapping[str, Any], threshold: float, warmup: float,
             extra: Sequence[str] = ()) -> dict[str, Any]:
    """``metadata`` as the reference fills it: the current schema (whose SLOs give
    ``warmupSeconds``) sends ``warmupSeconds``, the older one ``warmup``; whole seconds."""
    key = "warmupSeconds" if properties.get("warmupSeconds") is not None else "warmup"
    out: dict[str, Any] = {key: int(warmup), "threshold": threshold}
    for name in extra:
        if properties.get(name) is not None:
            out[name] = properties[name]
    return out
