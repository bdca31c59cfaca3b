"""What a run is given (``RunConfig``) and what it returns (``RunOutcome``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.api import UseCase
from bench.config.base import Benchmark, Execution
from bench.results.store import ExperimentRecord
from bench.search.prediction import Prediction


@dataclass
class RunConfig:
    use_case: UseCase
    benchmark: Benchmark
    execution: Execution
    results_dir: Path
    params: dict[str, Any] = field(default_factory=dict)
    exp_id: int | None = None
    resume: bool = False
    #: how often a faulted repetition is run again before its experiment is an ``error``
    retries: int = 1
    #: probe one instance's saturation rate first and start the search at the predicted
    #: demand (``bench.search.prediction``)
    predict: bool = False


@dataclass
class RunOutcome:
    exp_id: int
    metric: str
    table: dict[float, float | None]
    records: list[ExperimentRecord]
    results_dir: Path
    #: key -> "inferred" / "undecided" (bench.results.tables); measured entries are absent
    notes: dict[float, str] = field(default_factory=dict)
    #: with ``predict``: the probe, the predicted table and whether each entry was right
    prediction: Prediction | None = None
    #: each experiment's length and warm-up, for the note on experiments shorter than the
    #: method's (:func:`bench.results.tables.length_note`); 0: not known (the note is left out)
    duration: float = 0.0
    warmup: float = 0.0
    #: an SLO the run judged with other properties than its benchmark states
    #: (:func:`bench.results.tables.slo_override_notes`), one line each under the table
    slo_notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[ExperimentRecord]:
        """Experiments that got no verdict (outcome ``error``)."""
        return [r for r in self.records if r.outcome == "error"]


#: progress(message, transient): transient messages (per-sample ticks) may be overwritten.
ProgressFn = Callable[[str, bool], None]


def no_progress(message: str, transient: bool = False) -> None:
    return None
