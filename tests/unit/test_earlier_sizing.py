"""A sized run takes an earlier sized run's loads from its results folder where its own
probe puts them in the same demands (``bench.execution.earlier_sizing``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.execution import earlier_sizing
from bench.search.sizing_record import ProbeFigures, Sizing

from tests.unit.test_sizing_machines import sized_table


def made(capacity: float, loads: list[float], cpu: float = 0.125) -> Sizing:
    probe = ProbeFigures(capacity, True, 40_000.0, 40_000.0, cpu, 40_000.0, 30.0, "batches", 2.0)
    return Sizing([probe], loads, [1.0, 2.0, 3.0], {v: v for v in loads}, cpu)


def earlier(directory: Path, exp_id: int, loads: list[float], use_case: str = "uc3", cpu: float = 0.125,
            params: dict[str, str] | None = None, added: float | None = None) -> None:
    (directory / f"exp{exp_id}-run.json").write_text(json.dumps({"useCase": use_case, "params": params or {}}))
    every = [*loads, *([added] if added and added not in loads else [])]
    (directory / f"exp{exp_id}-sizing.json").write_text(json.dumps(
        {"loads": every, "rates": [[v, v] for v in every], "cpuPerInstance": cpu,
         "added": {"load": added, "rate": added} if added else None}))


def test_uc3s_two_runs_in_a_row_share_the_first_runs_loads(tmp_path: Path) -> None:
    """UC3's eighth-core probes read 11,966 and 13,476 records/s per instance in two runs
    in a row: `2000, 15000` then `2500, 20000`. At 13,476 the first run's loads ask one
    and two instances, as the second's own do."""
    earlier(tmp_path, 0, [2000.0, 15000.0])
    found = earlier_sizing.earlier_loads(tmp_path, 1, "uc3", {}, made(13_476.0, [2500.0, 20000.0]), lambda x: x)
    assert found == (0, {2000.0: 2000.0, 15000.0: 15000.0})
    taken = earlier_sizing.reuse(made(13_476.0, [2500.0, 20000.0]), *found, sized_resources=True)
    assert taken.loads == [2000.0, 15000.0] and taken.rates == {2000.0: 2000.0, 15000.0: 15000.0}
    assert taken.resources == [1.0, 2.0, 3.0] and taken.reason.endswith("the loads of exp0 (exp0-sizing.json), "
                                                                         "which this probe puts in the same demands "
                                                                         "as its own")


@pytest.mark.parametrize(("why", "kwargs", "exp_id", "capacity"), [
    ("another use case", {"use_case": "uc2"}, 1, 13_476.0),
    ("another CPU limit", {"cpu": 0.25}, 1, 13_476.0),
    ("other parameters", {"params": {"windowSizeMs": "60000"}}, 1, 13_476.0),
    ("no earlier run", {}, 0, 13_476.0),
    # its table was flat and it measured 50,000 more, or two resource amounts more for
    # 15,000: its loads showed no curve
    ("a run whose loads showed one demand", {"added": 50_000.0}, 1, 11_456.0),
    ("a run whose loads showed one demand", {"added": 15_000.0}, 1, 11_456.0),
    # at 8,000 per instance 15,000 asks two instances where this run's 20,000 asks three
    ("a demand other than this run's own", {}, 1, 8_000.0),
    # at 15,200 15,000 asks two (just below one instance's figure), as 20,000 does, but
    # lies 0.013 of an instance from the boundary
    ("a load on a boundary at this figure", {}, 1, 15_200.0),
])
def test_an_earlier_run_that_asked_another_question_gives_no_loads(tmp_path: Path, why: str, kwargs: dict,
                                                                   exp_id: int, capacity: float) -> None:
    earlier(tmp_path, 0, [2000.0, 15000.0], **kwargs)
    own = [2500.0, 20000.0]
    assert earlier_sizing.earlier_loads(tmp_path, exp_id, "uc3", {}, made(capacity, own), lambda x: x) is None, why


def test_other_records_per_second_for_the_same_values_give_no_loads(tmp_path: Path) -> None:
    earlier(tmp_path, 0, [2000.0, 15000.0])
    assert earlier_sizing.earlier_loads(tmp_path, 1, "uc3", {}, made(13_476.0, [2500.0, 20000.0]),
                                        lambda x: 2 * x) is None


async def test_a_second_sized_run_in_the_folder_measures_the_first_runs_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Instances 10 % faster in the second run (6,600 records/s against 6,000): its own
    loads would be other round values; it measures the first run's, which ask the same
    demands, and says so."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    first, _ = await sized_table(tmp_path, 0.6, None)
    second, _ = await sized_table(tmp_path, 0.66, None)
    alone, _ = await sized_table(tmp_path / "alone", 0.66, None)
    assert second == first and sorted(set(first.values())) == [1, 2, 3], (first, second)
    assert alone != first, alone  # on its own the faster run sizes other loads
    stored = json.loads((tmp_path / "exp1-sizing.json").read_text())
    assert stored["loads"] == sorted(first) and "the loads of exp0 (exp0-sizing.json)" in stored["reason"], stored
