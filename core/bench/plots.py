"""PNG plots at the end of a run: the scalability graph and each experiment's SLI series.

Plots are read back from the result files (not from memory) so that they can be
redrawn for any results folder, including one from an interrupted run.
"""

from __future__ import annotations

from pathlib import Path

from bench.engine import RunOutcome
from bench.model import Benchmark
from bench.results import ResultStore, fmt_value, read_series


def make_plots(outcome: RunOutcome, bench: Benchmark) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[Path] = []
    store = ResultStore(outcome.results_dir, outcome.exp_id)
    # Scalability graph.
    fig, ax = plt.subplots(figsize=(6, 4))
    keys = sorted(k for k, v in outcome.table.items() if v is not None)
    values = [float(outcome.table[k] or 0.0) for k in keys]
    if outcome.metric == "demand":
        ax.plot(keys, values, marker="o")
        ax.set_xlabel("load")
        ax.set_ylabel("resources (least passing)")
    else:
        ax.plot(keys, values, marker="o")
        ax.set_xlabel("resources")
        ax.set_ylabel("load (greatest passing)")
    failed = sorted(k for k, v in outcome.table.items() if v is None)
    if failed:
        ax.set_title(f"{bench.name}: {outcome.metric} (none passed for {', '.join(map(fmt_value, failed))})")
    else:
        ax.set_title(f"{bench.name}: {outcome.metric}")
    ax.grid(True, alpha=0.3)
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
            ax.set_ylabel("lag (records)")
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
