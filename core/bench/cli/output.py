"""What a run prints on the terminal: progress lines while it runs, the table at its end.

Apart from :mod:`bench.cli.launch` because printing is the front end's last step and
never decides anything: the table's notes come from the run's outcome as it stands.
"""

from __future__ import annotations

import sys
import time

from bench.analysis.confidence import explain
from bench.cli.auto_values import sizing_note
from bench.results import tables
from bench.results.outcome import RunOutcome
from bench.results.store import fmt_value
from bench.search.prediction import describe as describe_prediction


class Progress:
    """Progress lines on stderr; per-sample ticks overwrite each other on a terminal."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_tick = 0.0
        self.open_line = False

    def __call__(self, message: str, transient: bool = False) -> None:
        stamp = time.strftime("%H:%M:%S")
        if transient and self.tty:
            print(f"\r\x1b[2K{stamp} {message}", end="", file=sys.stderr, flush=True)
            self.open_line = True
            return
        if transient and time.monotonic() - self.last_tick < 30:
            return
        if transient:
            self.last_tick = time.monotonic()
        if self.open_line:
            print(file=sys.stderr, flush=True)
            self.open_line = False
        print(f"{stamp} {message}", file=sys.stderr, flush=True)


def print_table(outcome: RunOutcome) -> None:
    print(f"\n{outcome.metric} (exp{outcome.exp_id}):")
    print("\n".join(tables.format_table(outcome.metric, outcome.table, outcome.notes)))  # notes: inferred, undecided
    if outcome.prediction is not None:  # bench run --predict: the probe's table beside the measured one
        print(describe_prediction(outcome.prediction))
    for line in sizing_note(outcome.exp_id, outcome.sizing, outcome.table):  # loads or resources chosen by the probe
        print(line)
    for r in outcome.errors:  # no verdict: the entries it could change are undecided
        print(f"  error at load={fmt_value(r.load)} resources={fmt_value(r.resources)}: {r.cause}")
    for r in outcome.records:
        if r.unstable:  # a verdict, but a fragile one (docs/analysis.md)
            print(f"  unstable: load={fmt_value(r.load)} resources={fmt_value(r.resources)} "
                  f"{'passed' if r.passed else 'failed'}: {explain(r.slos)}; more repetitions or a longer duration "
                  "decide it")
        if r.disturbed:  # the machine's neighbours, not the SUT, may have decided it
            print(f"  disturbed: load={fmt_value(r.load)} resources={fmt_value(r.resources)} "
                  f"{'passed' if r.passed else 'failed'}: {r.disturbed}")
    # experiments shorter than the method's; an SLO judged otherwise than its benchmark states
    for line in [*tables.length_note(outcome.duration, outcome.warmup), *outcome.slo_notes]:
        print(line)
    print(f"results: {outcome.results_dir}/exp{outcome.exp_id}_{outcome.metric}.csv", flush=True)
