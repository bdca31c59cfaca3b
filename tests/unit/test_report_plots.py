"""The run's PNG scalability graph: resources on an integer axis from 0, loads in records/s."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from bench.results.outcome import RunOutcome  # noqa: E402
from bench.results.plots import draw_scalability  # noqa: E402
from bench.results.store import ExperimentRecord  # noqa: E402


def _record(load: float, res: float, rate: float) -> ExperimentRecord:
    gens = [{"repetition": r, "target_rate": rate, "achieved_rate": rate} for r in range(3)]
    return ExperimentRecord(load=load, resources=res, passed=True, generators=gens)


def test_demand_axis_counts_instances_from_zero_and_loads_in_records_per_second(tmp_path: Path) -> None:
    # every load needs one instance: the old axis spanned 0.96 ... 1.04
    outcome = RunOutcome(0, "demand", {100.0: 1.0, 200.0: 1.0, 400.0: None},
                         [_record(100, 1, 200.0), _record(200, 1, 400.0)], tmp_path)
    fig, ax = plt.subplots()
    draw_scalability(ax, outcome, "uc1", "NumSensors")
    fig.canvas.draw()
    assert ax.get_ylim()[0] == 0 and ax.get_xlim()[0] == 0
    assert all(float(t).is_integer() for t in ax.get_yticks())
    assert list(ax.lines[0].get_xdata()) == [200.0, 400.0]  # records/s (periodMs 500), not sensors
    assert ax.get_xlabel() == "load: NumSensors (records/s)"
    assert "none passed for 400" in ax.get_title()
    plt.close(fig)
