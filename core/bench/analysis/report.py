"""One self-contained HTML page comparing runs.

Everything is inline (CSS, SVG charts, a few lines of script), so the file works
offline, from an archive or a CI artifact. Each run is re-analysed with its own
stored settings (:mod:`bench.analysis.analyze`), so the page shows the numbers behind
every verdict (slopes, intervals, margins, ``unstable`` flags) even for runs written
before the result JSON held them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from bench.analysis.analyze import Analysis, ExperimentResult, analyze, run_settings
from bench.analysis.confidence import DEFAULT_CONFIDENCE
from bench.analysis.grid_report import report_section
from bench.analysis.report_slis import human as _human
from bench.analysis.report_slis import num as _num
from bench.analysis.report_slis import other_slis_section
from bench.analysis.report_slis import table as _table
from bench.analysis.runs import RunFiles
from bench.analysis.scaling import ScalingRow, scaling_rows
from bench.analysis.svg import PALETTE, Chart, Line
from bench.results import tables
from bench.results.grid import GridTable
from bench.results.sizing_file import read_sizing
from bench.results.store import read_series
from bench.search import prediction
from bench.search.sizing_record import Sizing

#: a lag chart draws at most this many points per repetition (thinned evenly)
MAX_POINTS = 400

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.pass{color:#1a7f37}.fail{color:#c62828}
.unstable{background:#fff3cd}.note{color:#555;font-size:13px}
.chart{display:block;margin:8px 0;background:#fff}.ctitle{font-size:13px;font-weight:600}
.tick{font-size:11px;fill:#444}.axis{font-size:12px;fill:#222}.grid{stroke:#eee}
.frame{fill:none;stroke:#999}.rule{stroke:#888;stroke-dasharray:2,3}
.experiments{display:flex;flex-wrap:wrap;gap:12px}.experiment{border:1px solid #ddd;padding:6px}
"""

#: proves in a browser that the page's script ran (the test reads the attribute back)
SCRIPT = """
document.documentElement.setAttribute('data-rendered', String(document.querySelectorAll('svg.chart').length));
"""


def _table_of(run: RunFiles, analysis: Analysis | None) -> tables.RunTable:
    """The run's own table (every SLO counted), else the re-analysis of its trend SLO."""
    recorded = run.recorded_run_table()
    if recorded is not None:
        return recorded
    if analysis is not None:
        return tables.RunTable(analysis.metric, analysis.table, analysis.notes, run.decreasing())
    return tables.RunTable(run.metric(), decreasing=run.decreasing())


def _analysis(run: RunFiles, confidence: float) -> Analysis | None:
    if not run.trend_files():
        return None
    return analyze(run, run_settings(run, confidence=confidence))


def _scalability_chart(runs: list[tuple[RunFiles, Analysis | None]], metric: str) -> str:
    demand = metric == "demand"
    load_types = sorted({run.load_type() for run, _ in runs})
    chart = Chart(
        f"scalability: {metric}",
        f"load: {', '.join(load_types)} (records/s)" if demand else "resources (instances)",
        "resources (instances, least passing)" if demand else "load (records/s, greatest passing)",
        integer_y=demand, integer_x=not demand, x_from_zero=True,
    )
    for i, (run, analysis) in enumerate(runs):
        color = PALETTE[i % len(PALETTE)]
        built = _table_of(run, analysis)
        table = built.table
        xs, ys = [], []
        anchor: tuple[float, float] | None = None  # the first measured passing point
        for key in sorted(table):
            value = table[key]
            if value is None:
                if demand:
                    chart.crosses.append((_rate(run, key), color,
                                          f"{run.label}: {tables.shown(None, built.note(key), _human)} at load "
                                          f"{_human(key)}"))
                continue
            measured = run.target_rate(key, value) if demand else run.target_rate(value, key)
            rate = measured if measured is not None else _recorded_rate(run, key if demand else value)
            if rate is None:
                continue  # no records/s was recorded at that load: the load value is no rate
            xs.append(rate if demand else key)
            ys.append(value if demand else rate)
            if anchor is None and measured is not None and not built.inferred(key) and not built.undecided(key):
                anchor = (xs[-1], ys[-1])
        chart.lines.append(Line(xs, ys, run.label, color, markers=True, width=2))
        if anchor is not None and anchor[0] > 0:
            # Linear scaling through the origin and the first measured passing point.
            top = max(xs)
            chart.lines.append(Line([0.0, top], [0.0, anchor[1] / anchor[0] * top], f"linear ({run.label})", color,
                                    dash="6,4", width=1))
    return chart.render()


def _rate(run: RunFiles, load: float) -> float:
    """Records/s of a load from any of its experiments (the load value when none recorded it)."""
    for res in sorted(r for (x, r) in run.records() if x == load):
        rate = run.target_rate(load, res)
        if rate is not None:
            return rate
    return load


def _recorded_rate(run: RunFiles, load: float) -> float | None:
    """Records/s of a load from any of its experiments; None when none recorded it."""
    rates = (run.target_rate(load, res) for res in sorted(r for (x, r) in run.records() if x == load))
    return next((rate for rate in rates if rate is not None), None)


def _thin(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    if len(xs) <= MAX_POINTS:
        return xs, ys
    step = len(xs) / MAX_POINTS
    idx = sorted({int(i * step) for i in range(MAX_POINTS)} | {len(xs) - 1})
    return [xs[i] for i in idx], [ys[i] for i in idx]


def _lag_chart(run: RunFiles, exp: ExperimentResult, warmup: float) -> str:
    files = run.trend_files().get((exp.load, exp.resources), [])
    chart = Chart(f"load {_human(exp.load)}, resources {_human(exp.resources)}",
                  "seconds since the first sample", run.trend_axis_label(), width=540, height=300, x_from_zero=True)
    chart.rules.append((warmup, "end of warm-up"))
    for n, f in enumerate(files):
        series = read_series(f.path)
        if not series.timestamps:
            continue
        color = PALETTE[n % len(PALETTE)]
        t0 = series.timestamps[0]
        rel = [t - t0 for t in series.timestamps]
        xs, ys = _thin(rel, list(series.values))
        fit = exp.fits[n] if n < len(exp.fits) else None
        label = f"rep {f.repetition}" + (f" ({_num(fit.slope)}/s)" if fit is not None else "")
        chart.lines.append(Line(xs, ys, label, color))
        if fit is not None:
            ends = [t for t in series.timestamps if t - t0 >= warmup]
            if ends:
                a, b = ends[0], ends[-1]
                trend = [fit.intercept + fit.slope * a, fit.intercept + fit.slope * b]
                chart.lines.append(Line([a - t0, b - t0], trend, "", color, dash="5,3", width=2))
    return chart.render()


def _verdict_cell(exp: ExperimentResult) -> str:
    text = "PASS" if exp.passed else "FAIL"
    return f'<span class="{"pass" if exp.passed else "fail"}">{text}</span>'


def _flags(exp: ExperimentResult) -> str:
    notes: list[str] = []
    c = exp.confidence
    if c is not None:
        notes.extend(f"unstable: {reason}" for reason in c.reasons)
    if exp.error:
        notes.append(exp.error)
    if exp.other_slos_failed:
        notes.append("also failed: " + ", ".join(exp.other_slos_failed))
    if not exp.valid:
        notes.append("invalid: generator fell behind")
    return escape("; ".join(notes))


def _experiments_section(run: RunFiles, analysis: Analysis) -> str:
    pct = f"{analysis.settings.confidence * 100:g}%"
    rows, classes = [], []
    for _, e in sorted(analysis.experiments.items()):
        c = e.confidence
        rows.append([
            _human(e.load), _human(e.resources),
            ", ".join(_num(s) for s in e.slopes), _num(c.median if c else None),
            f"[{_num(c.low)}, {_num(c.high)}]" if c is not None and c.low is not None else "-",
            _num(e.threshold), _num(c.margin if c else None), _verdict_cell(e), _flags(e),
        ])
        classes.append("unstable" if e.unstable else "")
    table = _table(["load", "resources", "slopes (records/s)", "median", f"{pct} interval", "threshold",
                    "margin", "verdict", "notes"], rows, classes)
    charts = "\n".join(f'<div class="experiment">{_lag_chart(run, e, analysis.settings.warmup)}'
                       f'<div class="note">median slope {_num(e.confidence.median if e.confidence else None)}/s, '
                       f'threshold {_num(e.threshold)}/s, margin {_num(e.confidence.margin if e.confidence else None)}'
                       f"/s: {_verdict_cell(e)}{' <b>unstable</b>' if e.unstable else ''}</div></div>"
                       for _, e in sorted(analysis.experiments.items()))
    return (f"<h3>experiments ({escape(analysis.settings.describe())})</h3>{table}"
            f'<p class="note">margin = threshold - median slope (positive: below the threshold). Unstable: the '
            f"repetitions fall on both sides of the threshold, or the margin is smaller than the {pct} half-width "
            f"of the median slope (autocorrelation-corrected).</p>"
            f'<div class="experiments">{charts}</div>')


def _generator_section(run: RunFiles) -> str:
    rows = []
    for (load, res), record in sorted(run.records().items()):
        for g in record.get("generators") or []:
            target, achieved = float(g.get("target_rate") or 0), float(g.get("achieved_rate") or 0)
            rows.append([_human(load), _human(res), str(g.get("repetition", "")), _num(target),
                         _num(achieved), f"{achieved / target * 100:.2f} %" if target > 0 else "-"])
    if not rows:
        return '<p class="note">no generator reports in this run\'s result JSON</p>'
    return _table(["load", "resources", "repetition", "target records/s", "achieved records/s", "accuracy"], rows)


def _flatten(doc: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(doc, dict):
        out: list[tuple[str, str]] = []
        for k, v in doc.items():
            out.extend(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        out = []
        for i, v in enumerate(doc):
            out.extend(_flatten(v, f"{prefix}[{i}]"))
        return out
    return [(prefix, doc if isinstance(doc, str) else json.dumps(doc))]


def _environment_section(run: RunFiles) -> str:
    parts = []
    ex = (run.execution or {}).get("execution") or {}
    if ex:
        keys = ("metric", "duration", "warmup", "repetitions", "sampleInterval", "earlyStop", "earlySampleInterval")
        parts.append(_table(["execution", "value"], [[k, escape(str(ex.get(k)))] for k in keys if k in ex]))
    if run.environment:
        parts.append(_table(["environment", "value"], [[escape(k), escape(v)] for k, v in _flatten(run.environment)]))
    else:
        parts.append(f'<p class="note">no exp{run.exp_id}-environment.json in this folder</p>')
    note = _aliasing_note(run)
    if note:
        parts.append(f'<p class="note">{escape(note)}</p>')
    return "\n".join(parts)


def _trigger_seconds(run: RunFiles) -> float | None:
    for key, value in _flatten({"environment": run.environment or {}, "execution": run.execution or {}}):
        if "trigger" in key.lower():
            try:
                seconds = float(json.loads(value)) if not isinstance(value, str) else float(value)
            except (TypeError, ValueError):
                continue
            if "ms" in key.lower():
                seconds /= 1000.0
            if seconds > 0:
                return seconds
    return None


def _aliasing_note(run: RunFiles) -> str | None:
    """Where the sample interval and the micro-batch trigger alias the lag saw-tooth."""
    sample, trigger = run.sample_interval(), _trigger_seconds(run)
    if sample is None or trigger is None:
        return None
    ratio = sample / trigger
    if ratio >= 1 and abs(ratio - round(ratio)) < 0.05:
        return (f"The sample interval ({sample:g} s) is a multiple of the trigger interval ({trigger:g} s): every "
                "sample sees the same phase of the saw-tooth, so the lag curve may look flatter or higher than it is.")
    if trigger > sample:
        return (f"The trigger interval ({trigger:g} s) is longer than the sample interval ({sample:g} s): the lag "
                "shows the saw-tooth of each micro-batch; warm-up and threshold must span several batches.")
    return None


def _scaling_section(run: RunFiles, table: tables.RunTable) -> str:
    rows = scaling_rows(run, table)
    if not rows:
        return '<p class="note">no load passed: no efficiency or cost</p>'

    def cells(r: ScalingRow) -> list[str]:
        if r.missing:  # figures only from measured experiments
            return [_human(r.load), "-", _human(r.resources), "-", "-", "-", f"not computed: {r.missing}", "-"]
        assert r.rate is not None and r.cores_per_instance is not None and r.efficiency is not None
        return [_human(r.load), _num(r.rate), _human(r.resources),
                f"{r.cores_per_instance:g}" + ("" if r.cores_source == "measured" else f" ({r.cores_source})"),
                f"{r.throughput_factor:.3g}", f"{r.resource_factor:.3g}", f"{r.efficiency:.3f}",
                _num(r.core_seconds_per_million or 0.0)]

    body = [cells(r) for r in rows]
    assumed = any(r.cores_source == "assumed" for r in rows)
    return (_table(["load", "records/s", "resources", "cores per instance", "throughput factor", "core factor",
                    "scaling efficiency", "core-seconds per million records"], body)
            + '<p class="note">Scaling efficiency (OSPBench): throughput increase factor / core increase '
              "factor (resources x cores per instance), relative to the first measured passing load; 1 is "
              "linear. Cost: resources x cores per instance / records/s x 10^6, with the cores an instance "
              "really had (a CPU limit counts). Only measured entries are computed: an inferred or undecided "
              "entry, or one without recorded records/s, is marked not computed."
            + (" Where marked assumed, the run did not record its cores per instance and one core is "
               "assumed." if assumed else "") + "</p>")


def _predicted_cell(run: RunFiles) -> str:
    """The table ``bench run --predict`` predicted before measuring, and how many entries
    it got right (``bench.search.prediction``); "-" for a run without a prediction."""
    stored = prediction.read(run.directory / prediction.FILE.format(id=run.exp_id))
    entries = [e for e in (stored or {}).get("entries") or [] if isinstance(e, dict)]
    if not entries:
        return "-"
    def one(e: dict[str, Any]) -> str:
        value = e.get("predicted")
        shown = _human(float(value)) if isinstance(value, int | float) else "none"
        hit = e.get("hit")  # None: no experiment measured that entry (neither right nor wrong)
        mark = " (not measured)" if hit is None else "" if hit else " (wrong)"
        return f"{_human(float(e['key']))}: {shown}{mark}"

    shown = ", ".join(one(e) for e in entries if isinstance(e.get("key"), int | float))
    right = sum(e.get("hit") is True for e in entries)
    return f"{shown}; right {right} of {sum(e.get('hit') is not None for e in entries)}"


def _sizing_lines(run: RunFiles) -> list[str]:
    """How bench sized the run's loads and resources (``exp<id>-sizing.json``): the probes,
    the values chosen and why; nothing for a run whose values were given."""
    made = Sizing.from_json(read_sizing(run.directory, run.exp_id))
    return [] if made is None else made.describe()


def build_report(runs: list[RunFiles], confidence: float = DEFAULT_CONFIDENCE,
                 grids: Sequence[tuple[int, GridTable]] = ()) -> str:
    analysed = [(run, _analysis(run, confidence)) for run in runs]
    metrics = sorted({run.metric() for run in runs})
    summary_rows = []
    for run, analysis in analysed:
        table = _table_of(run, analysis)
        unstable = sum(e.unstable for e in analysis.experiments.values()) if analysis else 0
        summary_rows.append([
            escape(run.label), escape(str((run.benchmark or {}).get("name", "-"))), run.metric(),
            escape(analysis.settings.describe()) if analysis else "-",
            str(len(analysis.experiments) if analysis else 0), str(unstable),
            escape(", ".join(f"{_human(k)}: {tables.shown(v, table.note(k), _human)}"
                             for k, v in sorted(table.table.items()))),
            escape(_predicted_cell(run)),
        ])
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>bench report: {escape(', '.join(r.label for r in runs))}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>bench scalability report</h1>",
        _table(["run", "benchmark", "metric", "SLO settings", "experiments", "unstable", "table", "predicted"],
               summary_rows),
        *(f'<p class="note">{escape(line.strip())}</p>'
          for line in tables.legend({k: n for r, a in analysed for k, n in _table_of(r, a).notes.items()})),
        "<h2>scalability</h2>",
    ]
    for metric in metrics:
        parts.append(_scalability_chart([(r, a) for r, a in analysed if r.metric() == metric], metric))
    parts.append('<p class="note">Dashed: linear scaling through the origin and each run\'s first measured passing '
                 "point (never an inferred one). "
                 "A cross on the top edge: no resource amount passed at that load.</p>")
    parts.extend(report_section(grid, exp_id) for exp_id, grid in grids)  # bench.analysis.grid_report
    for run, analysis in analysed:
        parts.append(f"<h2>{escape(run.label)}</h2>")
        warmup = analysis.settings.warmup if analysis is not None else (run.warmup() or 0.0)
        length = tables.length_note(run.duration(), warmup)  # experiments shorter than the method's
        parts.extend(f'<p class="note">{escape(line.strip())}</p>' for line in length)
        parts.extend(f'<p class="note">{escape(line.strip())}</p>' for line in _sizing_lines(run))
        parts.append("<h3>scaling efficiency and cost</h3>")
        parts.append(_scaling_section(run, _table_of(run, analysis)) if run.metric() == "demand"
                     else '<p class="note">capacity run: efficiency and cost are computed for demand runs</p>')
        if analysis is not None:
            parts.append(_experiments_section(run, analysis))
        else:
            parts.append('<p class="note">no series of a trend SLO in this run</p>')
        parts.append("<h3>generator accuracy</h3>")
        parts.append(_generator_section(run))
        parts.append("<h3>other SLIs</h3>")
        parts.append(other_slis_section(run))
        parts.append("<h3>environment</h3>")
        parts.append(_environment_section(run))
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)
