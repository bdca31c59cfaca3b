"""A failed repetition measured under CPU steal is measured again (bench.execution.disturbance):
on the fake platform, the hypervisor taking a share of the host's CPU during chosen SUT
starts halves the SUT's capacity there, as a neighbour's load does on a shared host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.api import ExperimentSpec, Sample, Series
from bench.cli.output import print_table
from bench.execution import disturbance

from tests.unit.fakes import FakePlatform
from tests.unit.test_engine import _config, engine, registry  # noqa: F401 - the fixture


class StolenPlatform(FakePlatform):
    """``stolen``: SUT start (1-based) -> the share of the host's CPU taken during it, in
    which the SUT processes half its capacity."""

    def __init__(self, stolen: dict[int, float]) -> None:
        super().__init__()
        self.stolen = stolen

    async def sample(self, spec: ExperimentSpec) -> Sample:
        share = self.stolen.get(len(self.experiments), 0.0)
        capacity = float(spec.params.get("capacity", 1000))
        spec.params["capacity"] = capacity / 2 if share >= disturbance.STEAL_LIMIT else capacity
        try:
            sample = await super().sample(spec)
        finally:
            spec.params["capacity"] = capacity
        return Sample(sample.timestamp, {**sample.values, "host-steal": share})


def test_the_share_taken_is_the_mean_after_the_warm_up() -> None:
    series = {"host-steal": Series([0.0, 5.0, 10.0, 15.0], [0.9, 0.1, 0.2, 0.3])}
    assert disturbance.stolen(series, 5.0) == pytest.approx(0.2)
    assert disturbance.disturbed(series, 5.0) == pytest.approx(0.2)
    assert disturbance.disturbed({"host-steal": Series([0.0, 5.0], [0.0, 0.05])}, 0.0) is None
    assert disturbance.stolen({}, 0.0) is None  # not sampled (a cluster's host)
    assert disturbance.note([0.22, 0.18]).startswith("measured while the hypervisor took 22% and 18%")


async def test_a_failure_under_steal_is_measured_again_and_the_quiet_verdict_stands(
        registry, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    """1,500 records/s on two instances of 1,000 passes; the first attempt, with 22 % of the
    host's CPU taken, failed. Its second attempt is the verdict; the fault says why."""
    cfg = _config(tmp_path, [1500], [2], repetitions=1)
    platform = StolenPlatform({1: 0.22})
    outcome = await engine(registry, cfg, platform).run()
    (record,) = outcome.records
    assert (record.outcome, record.disturbed) == ("passed", None)
    assert platform.experiments == [(1500, 2)] * 2
    assert record.faults == [{"repetition": 0, "attempt": 1,
                              "cause": "failed while the hypervisor took 22% of the host's CPU (host-steal)"}]


async def test_steal_twice_keeps_the_verdict_and_says_so(registry, tmp_path: Path,  # noqa: F811
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path, [1500], [2], repetitions=1)
    platform = StolenPlatform({1: 0.22, 2: 0.3})
    outcome = await engine(registry, cfg, platform).run()
    (record,) = outcome.records
    assert record.outcome == "failed" and platform.experiments == [(1500, 2)] * 2  # once more, not again
    assert record.disturbed is not None and "22% and 30%" in record.disturbed
    stored = json.loads((tmp_path / "exp0-result.json").read_text())["experiments"][0]
    assert stored["disturbed"] == record.disturbed
    print_table(outcome)
    assert "disturbed: load=1500 resources=2 failed: measured while the hypervisor took 22% and 30%" in (
        capsys.readouterr().out)


async def test_a_pass_under_steal_or_a_failure_without_it_is_not_measured_again(
        registry, tmp_path: Path) -> None:  # noqa: F811
    cfg = _config(tmp_path, [1500, 2500], [2], repetitions=1)
    # without steal: 1,500 passes on two instances and 2,500 fails, each measured once
    platform = StolenPlatform({})
    outcome = await engine(registry, cfg, platform).run()
    assert {(r.load, r.outcome) for r in outcome.records} == {(1500.0, "passed"), (2500.0, "failed")}
    assert len(platform.experiments) == 2 and all(not r.faults for r in outcome.records)
    passing = StolenPlatform({1: 0.5})
    cfg = _config(tmp_path / "b", [1000], [2], repetitions=1)
    outcome = await engine(registry, cfg, passing).run()  # 1,000 on two at half capacity: still a pass
    assert [r.outcome for r in outcome.records] == ["passed"] and len(passing.experiments) == 1
    assert outcome.records[0].disturbed is None
