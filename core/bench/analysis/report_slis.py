"""The report's section on the SLIs beside the trend: the series of the other SLOs, the
informational SLIs (sampled, judged by no SLO), and the ones sampled without a single
value, with the reason they have no file; and how the report writes numbers."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from bench.analysis.runs import RunFiles
from bench.numbers import readable
from bench.results.store import read_series


def table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    out = ["<table><tr>" + "".join(f'<th class="{"l" if i == 0 else ""}">{escape(h)}</th>'
                                   for i, h in enumerate(head)) + "</tr>"]
    for n, row in enumerate(rows):
        cls = f' class="{classes[n]}"' if classes and classes[n] else ""
        out.append(f"<tr{cls}>" + "".join(f'<td class="{"l" if i == 0 else ""}">{cell}</td>'
                                          for i, cell in enumerate(row)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def num(value: float | None, digits: int = 4) -> str:
    """A measured number as people write it (:func:`bench.numbers.readable`)."""
    return readable(value, digits)


def human(value: float) -> str:
    """A load or resource value with thousands separators (10,000; 0.25)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,g}"


def other_slis_section(run: RunFiles) -> str:
    """SLO series other than the trend's, per repetition; informational SLIs per experiment;
    and the SLIs that were sampled but never had a value, with the reason they have no file."""
    parts = []
    names = run.other_sli_names()
    rows = []
    for f in sorted((f for f in run.sli if f.name in names), key=lambda f: (f.name, f.load, f.resources, f.repetition)):
        values = [v for v in read_series(f.path).values if math.isfinite(v)]
        if not values:
            continue
        rows.append([escape(f.name), human(f.load), human(f.resources), str(f.repetition), str(len(values)),
                     num(min(values)), num(sum(values) / len(values)), num(max(values)), num(values[-1])])
    if rows:
        parts.append("<p>series of the other SLOs</p>")
        parts.append(table(["SLI", "load", "resources", "repetition", "samples", "min", "mean", "max", "last"], rows))
    info, empty = _info_rows(run)
    if info:
        parts.append("<p>informational SLIs (sampled, judged by no SLO; after the warm-up, pooled over the "
                     "repetitions)</p>")
        parts.append(table(["SLI", "load", "resources", "samples", "mean", "median", "p95", "max"], info))
    absent = _absent_slis(run, empty)
    if absent:
        parts.append('<p class="note">' + "<br>".join(
            f"{escape(', '.join(slis))}: no series stored: {escape(reason)}" for reason, slis in absent.items())
            + "</p>")
    if not parts:
        return '<p class="note">no other SLIs stored</p>'
    return "\n".join(parts)


#: SLIs whose samples are points in time (a micro-batch's end), not quantities: a mean or
#: a maximum of them means nothing, so the report lists them without a summary
TIMESTAMP_SLIS = frozenset({"spark-batch-end"})
#: the output's rate, read from the output topic; where not one output record was read
#: (no latency sample either) its 0 is what a use case writing elsewhere (UC1's store)
#: gives, not a measured rate
OUTPUT_RATE = "output-rate"
LATENCY_SLIS = ("latency-p50", "latency-p95", "latency-p99", "latency-max")
NOT_SUMMARISED = {
    "timestamps": "points in time (not summarised)",
    "no output": "no output record was read, so no rate was measured (the use case may write elsewhere)",
}


def _no_output(run: RunFiles, load: float, res: float, values: list[float], summary: Any) -> bool:
    """Whether an ``output-rate`` at this experiment is the 0 of an output never read."""
    peak = _float(summary.get("max")) if isinstance(summary, dict) else (max(values) if values else None)
    if peak is None or peak > 0:
        return False
    info = (run.records().get((load, res)) or {}).get("info") or {}
    if any(isinstance(info.get(n), dict) and info[n].get("samples") for n in LATENCY_SLIS):
        return False
    return not any(f.name in LATENCY_SLIS and f.load == load and f.resources == res
                   and any(math.isfinite(v) for v in read_series(f.path).values) for f in run.info)


def _info_rows(run: RunFiles) -> tuple[list[list[str]], set[str]]:
    """Per informational SLI and experiment: the run's own summary, else one from the files;
    and the SLIs whose files hold no value at all (written as NaN by earlier versions)."""
    records = run.records()
    by_key: dict[tuple[str, float, float], list[float]] = {}
    for f in run.info:
        summary = ((records.get((f.load, f.resources)) or {}).get("info") or {}).get(f.name)
        if isinstance(summary, dict) and summary.get("samples"):
            by_key.setdefault((f.name, f.load, f.resources), [])
            continue
        values = [v for v in read_series(f.path).values if math.isfinite(v)]
        by_key.setdefault((f.name, f.load, f.resources), []).extend(values)
    rows = []
    for (name, load, res), values in sorted(by_key.items()):
        summary = ((records.get((load, res)) or {}).get("info") or {}).get(name)
        if name in TIMESTAMP_SLIS:
            rows.append([escape(name), human(load), human(res), "-", NOT_SUMMARISED["timestamps"], "-", "-", "-"])
        elif name == OUTPUT_RATE and _no_output(run, load, res, values, summary):
            rows.append([escape(name), human(load), human(res), "-", NOT_SUMMARISED["no output"], "-", "-", "-"])
        elif isinstance(summary, dict) and summary.get("samples"):
            cells = [str(summary.get("samples")), *(num(_float(summary.get(k))) for k in ("mean", "median", "p95",
                                                                                           "max"))]
        elif values:
            ordered = sorted(values)
            cells = [str(len(values)), num(sum(values) / len(values)), num(ordered[len(ordered) // 2]),
                     num(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]), num(ordered[-1])]
        else:
            continue
        rows.append([escape(name), human(load), human(res), *cells])
    with_data = {name for (name, _, _), values in by_key.items() if values} | {
        name for (name, load, res) in by_key
        if (((records.get((load, res)) or {}).get("info") or {}).get(name) or {}).get("samples")}
    return rows, {name for (name, _, _) in by_key} - with_data


def _absent_slis(run: RunFiles, empty: set[str]) -> dict[str, list[str]]:
    """reason -> SLIs the run sampled without a single value (the result JSON's info
    summaries; ``empty``: files of nothing but NaN, whose reason is the same)."""
    from bench.results.info import NO_DATA

    found: dict[str, set[str]] = {NO_DATA: set(empty)} if empty else {}
    for record in run.records().values():
        for name, summary in (record.get("info") or {}).items():
            if isinstance(summary, dict) and summary.get("absent"):
                found.setdefault(str(summary["absent"]), set()).add(str(name))
    return {reason: sorted(names) for reason, names in found.items()}


def _float(raw: Any) -> float | None:
    try:
        return float(raw)
    except (TypeError, ValueError):
        return None
