"""What ended each repetition counts in the verdict's confidence.

A repetition decided early records one sample per ``sampleInterval``: UC3's, ended at
82 s after a 60-s warm-up, keeps 4, and the slope interval of 4 samples says nothing the
decision (on denser samples, or over whole output periods) had not already said with
confidence. A repetition run only for another SLO (dropped records, judged by the worst
repetition) and ended by it holds a slope no rule judged. Both made a verdict settled by
two confident repetitions "unstable" (UC3, 12,000 records/s on one instance).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.analysis.analyze import stored_evidence
from bench.analysis.confidence import RepetitionFit, evidence, judge, with_evidence
from bench.api import Series
from bench.config.model import parse_benchmark
from bench.execution.run import Engine
from bench.plugins import load_plugins
from bench.results.store import Repetition, ResultStore

from .fakes import FAKE_USE_CASE, fake_benchmark
from .test_confidence_median import fit
from .test_engine import DroppingPlatform, SimClock, _config

THRESHOLD = 120.0  # 1 % of 12,000 records/s


def uc3_fits() -> list[RepetitionFit]:
    """The recorded slopes of a UC3 round flagged so, 4 samples each after the warm-up."""
    return [fit(-1231.0, 9000.0, 4), fit(-4552.0, 9000.0, 4), fit(1643.0, 9000.0, 4)]


def test_without_what_ended_them_the_few_samples_flag_the_verdict() -> None:
    c = judge(uc3_fits(), THRESHOLD)
    assert c.median == -1231.0
    assert c.disagree and c.inside_noise


def test_two_confident_early_decisions_and_an_incidental_third_clear_it() -> None:
    first, second, third = uc3_fits()
    fits = [with_evidence(first, {"decided": [-5016.0, -568.0]}), with_evidence(second, {"decided": [-7008.0, -89.6]}),
            with_evidence(third, {"incidental": True})]
    c = judge(fits, THRESHOLD)
    assert c.median == -1231.0  # the verdict's number is the method's, every repetition in it
    assert not c.disagree and not c.inside_noise, c
    assert (c.low, c.high) == (-7008.0, -89.6)  # the median of the bounds, the third unbounded


def test_an_incidental_repetition_alone_does_not_clear_a_margin_in_the_noise() -> None:
    first, second, third = uc3_fits()
    fits = [with_evidence(first, {"decided": [-5016.0, -568.0]}), second, with_evidence(third, {"incidental": True})]
    c = judge(fits, THRESHOLD)
    assert not c.disagree
    assert c.inside_noise  # one confident repetition of three fixes no median


def test_a_repetition_that_ran_for_the_slo_still_disagrees() -> None:
    first, second, third = uc3_fits()
    fits = [with_evidence(first, {"decided": [-5016.0, -568.0]}), with_evidence(second, {"decided": [-7008.0, -89.6]}),
            third]
    assert judge(fits, THRESHOLD).disagree


def test_evidence_names_what_ended_each_repetition() -> None:
    s = Series([0.0], [0.0])
    reps = [Repetition({"lag": s}, [], True, ["lag-trend: pass"], {"lag-trend": [-5.0, -1.0]}, None),
            Repetition({"lag": s}, [], False, [], {}, ["lag-trend"]),
            Repetition({"lag": s}, [], True, ["dropped-records: pass"], {}, ["dropped-records"]),
            Repetition({"lag": s}, [], False, [], {}, ["dropped-records"])]  # ran its full length: its own evidence
    assert evidence(reps, "lag-trend") == [{"decided": [-5.0, -1.0]}, {}, {"incidental": True}, {}]


@pytest.mark.parametrize("stored", [None, {}, {"decided": [1.0]}, {"decided": "x"}, {"incidental": "yes"}, 3])
def test_stored_evidence_of_another_form_changes_nothing(stored: Any) -> None:
    plain = fit(-10.0, 5.0, 10)
    assert with_evidence(plain, stored) == plain


def test_a_repetition_file_keeps_it_and_an_older_one_reads_as_none(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 0)
    series = Series([1.0, 2.0], [3.0, 4.0])
    store.write_repetition(500, 1, 0, Repetition({"lag": series}, [], True, ["lag-trend: pass"],
                                                 {"lag-trend": [-5.0, -1.0]}, ["lag-trend"]), {"lag-trend": "lag"})
    (back,) = store.load_repetitions(500, 1, {"lag-trend": "lag"})
    assert back.decided == {"lag-trend": [-5.0, -1.0]} and back.waited_for == ["lag-trend"]
    path = store.repetition_path(500, 1, 0)
    doc = json.loads(path.read_text())
    del doc["decided"], doc["waited_for"]
    path.write_text(json.dumps(doc))
    (old,) = store.load_repetitions(500, 1, {"lag-trend": "lag"})
    assert old.decided == {} and old.waited_for is None


class RisingThirdPlatform(DroppingPlatform):
    """Two repetitions with a flat lag; in the third, run for the dropped records alone,
    the lag climbs over its few samples."""

    async def sample(self, spec: Any) -> Any:
        sample = await super().sample(spec)
        if len(self.samples_per_rep) == 3:
            sample.values["lag"] = 5_000.0 + 50_000.0 * self.samples_per_rep[-1]
        return sample


async def test_the_engine_keeps_what_ended_each_repetition_and_judges_with_it(tmp_path: Path) -> None:
    registry = load_plugins()
    registry.use_cases["fake"] = FAKE_USE_CASE
    bench = fake_benchmark()
    bench["slos"] = [*bench["slos"], {"name": "dropped-records", "sloType": "dropped-records", "properties": {}}]
    cfg = _config(tmp_path, [500], [1], earlyStop=True, repetitions=3, duration=300, earlySampleInterval=0)
    cfg.benchmark = parse_benchmark(bench)
    platform, clock = RisingThirdPlatform(), SimClock()
    platform.now = clock
    outcome = await Engine(registry, cfg, platform, progress=lambda *_: None, clock=clock, sleep=clock.sleep).run()
    (record,) = outcome.records
    lag = record.slos["lag-trend"]
    assert len(lag["slopes"]) == 3 and lag["slopes"][2] > lag["threshold"] > max(lag["slopes"][:2])
    docs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("exp*_generator_*.json"))]
    assert [d["waited_for"] for d in docs] == [None, ["lag-trend", "dropped-records"], ["dropped-records"]]
    found = lag["repetition_evidence"]
    assert found[2] == {"incidental": True} and docs[2]["early_stopped"]
    for doc, kept in zip(docs[:2], found[:2], strict=True):  # the noisy lag: decided early, or run in full
        assert kept == ({"decided": doc["decided"]["lag-trend"]} if doc["early_stopped"] else {}), (doc, kept)
    assert found[0]["decided"][1] < lag["threshold"]
    assert not lag["confidence"]["disagree"], lag["confidence"]
    # bench analyze reads the same evidence back from the result file
    stored = json.loads((tmp_path / f"exp{outcome.exp_id}-result.json").read_text())["experiments"][0]
    assert [stored_evidence(stored, "lag-trend", rep) for rep in range(3)] == found
    assert stored_evidence(stored, "lag-trend", 3) is None and stored_evidence(stored, "other", 0) is None
    assert np.isfinite(lag["confidence"]["median"])
