"""Informational SLI files and their summary: everything sampled, nothing decided.

Every series a platform samples (lag, input rate, batch duration, latency
percentiles, CPU and memory of the SUT and the host, ...) is kept per repetition as
``exp<id>_<load>_<resources>_info_<sli>_<rep>.csv`` (``labels,timestamp,value``, as
the SLO series). ``info`` where the SLO files say ``sli``, so that the reference's
analysis code, which finds SLO series by ``_sli_`` and the lag by ``lag-trend``, never
takes one of them for an SLO series. The result JSON gets a summary per SLI
(:func:`summarise`) so that a reader sees, say, the host's CPU steal of an experiment
without opening its files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.api import Series

if TYPE_CHECKING:
    from bench.results.store import ResultStore


def info_path(store: ResultStore, load: float, resources: float, sli: str, repetition: int) -> Path:
    from bench.results.store import fmt_value

    return store.path(f"exp{store.id}_{fmt_value(load)}_{fmt_value(resources)}_info_{sli}_{repetition}.csv")


def write_info(store: ResultStore, load: float, resources: float, repetition: int,
               series: Mapping[str, Series]) -> list[Path]:
    """One ``_info_`` file per sampled SLI of one repetition, written as the SLO files are
    (:func:`bench.results.store.series_csv`, atomic) but keeping samples without a value as
    ``nan``."""
    from bench.results.store import atomic_write, series_csv

    written = []
    for sli, s in sorted(series.items()):
        if "_" in sli or not has_data(s):
            # a name with "_" would break the file-name convention; a series whose every
            # sample is empty is no measurement: no file of NaN (the summary says why)
            continue
        path = info_path(store, load, resources, sli, repetition)
        atomic_write(path, series_csv(s, keep_gaps=True))
        written.append(path)
    return written


def has_data(series: Series) -> bool:
    """Whether any sample of the series has a value (NaN marks a sample without data)."""
    return any(np.isfinite(v) for v in series.values)


#: the summary of an SLI that was sampled but never had a value, and why it has no file
NO_DATA = ("sampled, but no sample had a value: the platform cannot measure it for this use case "
           "(latency needs an output topic; CPU and memory need the SUT's processes on this host)")


def summarise(collected: Mapping[str, Sequence[Series]], warmup: float) -> dict[str, dict[str, Any]]:
    """Per SLI: mean, median, p95, max, min of the samples after the warm-up, pooled over repetitions.

    The warm-up counts from each repetition's first sample (as for SLOs); a series
    with no sample after it is summarised whole and says so (``warmupExcluded: false``),
    because a short run's numbers are better than none for a reader. An SLI none of whose
    samples had a value gets ``{"samples": 0, "absent": NO_DATA}``: no file was written
    for it, and the summary says so rather than leave a reader to guess.
    """
    out: dict[str, dict[str, Any]] = {}
    for sli, reps in sorted(collected.items()):
        kept: list[np.ndarray] = []
        excluded = True
        for s in reps:
            if not s.timestamps:
                continue
            t = np.asarray(s.timestamps, dtype=float)
            v = np.asarray(s.values, dtype=float)
            mask = (t - t[0]) >= warmup
            kept.append(v[mask & np.isfinite(v)])
        pooled = np.concatenate(kept) if kept else np.empty(0)
        if not pooled.size:
            excluded = False
            whole = [np.asarray(s.values, dtype=float) for s in reps if s.values]
            pooled = np.concatenate(whole) if whole else np.empty(0)
            pooled = pooled[np.isfinite(pooled)]
        if not pooled.size:
            if reps and not any(has_data(s) for s in reps):
                out[sli] = {"samples": 0, "repetitions": len(reps), "absent": NO_DATA}
            continue
        out[sli] = {
            "mean": float(np.mean(pooled)),
            "median": float(np.median(pooled)),
            "p95": float(np.percentile(pooled, 95)),
            "min": float(np.min(pooled)),
            "max": float(np.max(pooled)),
            "samples": int(pooled.size),
            "repetitions": len(reps),
            "warmupExcluded": excluded,
        }
    return out
