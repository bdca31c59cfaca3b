"""What a run returns: its table, its experiments and where they are stored.

A result, not a part of the run loop: the plots, the printed table and ``--expect``
read it after the run, and the run loop (:mod:`bench.execution.run`) builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.results.store import ExperimentRecord
from bench.search.prediction import Prediction
from bench.search.sizing_record import Sizing


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
    #: with loads or resources auto: the probes and what was chosen (``bench.search.sizing``)
    sizing: Sizing | None = None

    @property
    def errors(self) -> list[ExperimentRecord]:
        """Experiments that got no verdict (outcome ``error``)."""
        return [r for r in self.records if r.outcome == "error"]
