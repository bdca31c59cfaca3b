"""What a run is given (``RunConfig``); what it returns is :class:`bench.results.outcome.RunOutcome`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.api import UseCase
from bench.config.base import Benchmark, Execution
from bench.search.sizing_record import AutoSize


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
    #: ``--loads auto`` / ``--resources auto`` (the default without loads): size them by
    #: a probe first (``bench.execution.autosize.AutoSize``); None: the values as given
    auto: AutoSize | None = None


#: progress(message, transient): transient messages (per-sample ticks) may be overwritten.
ProgressFn = Callable[[str, bool], None]


def no_progress(message: str, transient: bool = False) -> None:
    return None
