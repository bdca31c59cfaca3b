"""PNG plots at the end of a run: the scalability graph and each experiment's SLI series.

Plots are read back from the result files (not from memory) so that they can be
redrawn for any results folder, including one from an interrupted run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.config.base import Benchmark
from bench.results import tables
from bench.results.outcome import RunOutcome
from bench.results.store import ExperimentRecord, ResultStore, fmt_value, read_series


def _load_type(store: ResultStore) -> str:
    try:
        doc = json.loads(store.path(f"exp{store.id}-execution-configuration.json").read_text())
        return str(doc["load"]["loadType"])
    except (OSError, ValueError, KeyError, TypeError):
        return "load"


def _rate(records: list[ExperimentRecord], load: float, resources: float | None) -> float:
    """Records/s the generators were asked for at this load (the load value when unrecorded).

    A user reads a scalability graph in records/s; the load value is that only when
    each key sends one record per second.
    """
    for record in records:
        if record.load == load and (resources is None or record.resources == resources):
            per_rep: dict[int, float] = {}
            for g in record.generators:
                rep = int(g.get("repetition", 0))
                per_rep[rep] = per_rep.get(rep, 0.0) + float(g.get("target_rate") or 0.0)
            rates = sorted(r for r in per_rep.values() if r > 0)
            if rates:
                return rates[len(rates) // 2]
    return load


def _axis_label(bench: Benchmark, slo_name: str) -> str:
    """How the SLO's own type titles its series (``SloType.axis_label``)."""
    from bench.analysis.runs import slo_types

    for slo in bench.slos:
        slo_type = slo_types().get(slo.sloType)
        if slo.name == slo_name and slo_type is not None:
            return slo_type.axis_label(slo.properties)
    return slo_name


def draw_scalability(ax: Any, outcome: RunOutcome, name: str, load_type: str) -> None:
    """Resources on an integer axis from 0 and loads in records/s, both axes from 0.

    An axis fitted to the data drew one passing resource amount on 0.96 ... 1.04,
    which reads like noise; counting from 0 shows the scale of the demand.
    """
    from matplotlib.ticker import MaxNLocator

    passed = sorted(k for k, v in outcome.table.items() if v is not None)
    inferred = [k for k in passed if tables.INFERRED in outcome.notes.get(k, "").split()]
    load_label = f"load: {load_type} (records/s)"
    if outcome.metric == "demand":
        xs = [_rate(outcome.records, k, outcome.table[k]) for k in passed]
        ys = [float(outcome.table[k] or 0.0) for k in passed]
        ax.set_xlabel(load_label)
        ax.set_ylabel("resources (least passing)")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        xs = [float(k) for k in passed]
        ys = [_rate(outcome.records, float(outcome.table[k] or 0.0), k) for k in passed]
        ax.set_xlabel("resources")
        ax.set_ylabel(f"{load_label.replace('load: ', 'heaviest passing load: ')}")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.plot(xs, ys, marker="o")
    if inferred:  # hollow markers: given by the monotone assumption, not measured
        hollow = [i for i, k in enumerate(passed) if k in inferred]
        ax.plot([xs[i] for i in hollow], [ys[i] for i in hollow], linestyle="none", marker="o", markersize=10,
                markerfacecolor="white", label="inferred (monotone assumption), not measured")
        ax.legend(fontsize="small")
    ax.set_xlim(left=0, right=max(xs, default=1.0) * 1.05)
    ax.set_ylim(bottom=0, top=max(ys, default=1.0) * 1.1 + (1 if outcome.metric == "demand" else 0))
    unknown = sorted(k for k, v in outcome.table.items() if tables.UNDECIDED in outcome.notes.get(k, "").split())
    failed = sorted(k for k, v in outcome.table.items() if v is None and k not in unknown)
    notes = ([f"none passed for {', '.join(map(fmt_value, failed))}"] if failed else []) + (
        [f"undecided (error) for {', '.join(map(fmt_value, unknown))}"] if unknown else [])
    ax.set_title(f"{name}: {outcome.metric}" + (f" ({'; '.join(notes)})" if notes else ""))
    ax.grid(True, alpha=0.3)


def make_plots(outcome: RunOutcome, bench: Benchmark) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[Path] = []
    store = ResultStore(outcome.results_dir, outcome.exp_id)
    # Scalability graph.
    fig, ax = plt.subplots(figsize=(6, 4))
    draw_scalability(ax, outcome, bench.name, _load_type(store))
    path = store.path(f"exp{outcome.exp_id}_{outcome.metric}.png")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    out.append(path)
    # Per experiment: every SLO that fitted a trend, with its trend lines and threshold.
    for record in outcome.records:
        for slo_name, details in record.slos.items():
            slopes = details.get("slopes")
            if not isinstance(slopes, list):
                continue
            fig, ax = plt.subplots(figsize=(7, 4))
            intercepts = details.get("intercepts") or []
            for rep, slope in enumerate(slopes):
                csv_path = store.sli_path(record.load, record.resources, slo_name, rep)
                if not csv_path.exists():
                    continue
                series = read_series(csv_path)
                if not series.timestamps:
                    continue
                t0 = series.timestamps[0]
                rel = [t - t0 for t in series.timestamps]
                ax.plot(rel, series.values, marker=".", label=f"rep {rep} (slope {slope:.1f}/s)")
                if rep < len(intercepts) and intercepts[rep] is not None and slope is not None:
                    # Intercepts are at t = 0 on the epoch axis (see slo_math.slope).
                    ax.plot(rel, [intercepts[rep] + slope * t for t in series.timestamps], linestyle="--")
            threshold = details.get("threshold")
            warmup = details.get("warmup")
            if isinstance(warmup, int | float):
                ax.axvline(warmup, color="grey", linestyle=":", label="end of warm-up")
            title = f"{slo_name}: load {fmt_value(record.load)}, resources {fmt_value(record.resources)}"
            if isinstance(threshold, int | float):
                title += f" (threshold {threshold:.4g}/s)"
            ax.set_title(title + (" PASS" if details.get("passed") else " FAIL"))
            ax.set_xlabel("seconds since start of load")
            ax.set_ylabel(_axis_label(bench, slo_name))
            ax.legend(fontsize="small")
            ax.grid(True, alpha=0.3)
            path = store.path(
                f"exp{outcome.exp_id}_{fmt_value(record.load)}_{fmt_value(record.resources)}_{slo_name}.png"
            )
            fig.tight_layout()
            fig.savefig(path)
            plt.close(fig)
            out.append(path)
    return out
