"""The result file is rewritten after every experiment; each experiment's entry is
serialized once, when it is added, and later writes copy it from the file they replace
rather than keep it in memory; the informational summaries leave the record the run
keeps (a 200-experiment soak's RSS grew steadily by +9.6 %). The file stays what
``json.dumps(doc, indent=2)`` of every record writes."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path

from bench.results.store import ExperimentRecord, ResultStore


def records() -> list[ExperimentRecord]:
    return [ExperimentRecord(100.0, 1.0, True, info={"lag": {"mean": 1.5, "samples": 3}},
                             slos={"lag-trend": {"slopes": [1.0, -2.0], "passed": True}}),
            ExperimentRecord(200.0, 2.0, False, generators=[{"repetition": 0, "achieved_rate": 199.5}]),
            ExperimentRecord(100.0, 1.0, False, info={"lag": {"mean": 9.0}})]  # the same pair again


def test_the_file_is_what_dumping_every_record_writes(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 3)
    added = records()
    expected = [asdict(copy.deepcopy(r)) for r in added[1:]]  # the repeated pair replaces the first
    for record in added:
        store.add_experiment(record)
    store.record_table("demand", [{"load": 100.0, "resources": 1.0}], complete=True)
    text = (tmp_path / "exp3-result.json").read_text()
    assert text == json.dumps({"id": 3, "experiments": expected, "metric": "demand",
                               "table": [{"load": 100.0, "resources": 1.0}], "complete": True}, indent=2)
    assert all(not r.info for r in store.experiments)  # in the file, not kept in memory
    assert json.loads(text)["experiments"][1]["info"] == {"lag": {"mean": 9.0}}


def test_a_resumed_store_writes_what_it_read_and_what_it_adds(tmp_path: Path) -> None:
    first = ResultStore(tmp_path, 0)
    for record in records()[:2]:
        first.add_experiment(record)
    first.record_table("demand", [{"load": 100.0}], complete=False)
    again = ResultStore(tmp_path, 0)
    assert [(r.load, r.resources) for r in again.load_previous()] == [(100.0, 1.0), (200.0, 2.0)]
    again.add_experiment(ExperimentRecord(300.0, 3.0, True))
    doc = json.loads((tmp_path / "exp0-result.json").read_text())
    assert [e["load"] for e in doc["experiments"]] == [100.0, 200.0, 300.0]
    assert doc["experiments"][0]["info"] == {"lag": {"mean": 1.5, "samples": 3}}
    assert doc["table"] == [{"load": 100.0}] and doc["metric"] == "demand"  # kept without reading it again


def test_earlier_entries_are_copied_from_the_file_not_kept(tmp_path: Path) -> None:
    """Only each entry's place is kept: an entry changed in the file behind the run (same
    length) comes back changed at the next write, and each place holds its entry."""
    store = ResultStore(tmp_path, 0)
    first, second = records()[:2]
    store.add_experiment(first)
    path = tmp_path / "exp0-result.json"
    path.write_text(path.read_text().replace('"mean": 1.5', '"mean": 7.5'))
    store.add_experiment(second)
    store.add_experiment(ExperimentRecord(300.0, 3.0, True))
    raw = path.read_bytes()
    doc = json.loads(raw)
    assert doc["experiments"][0]["info"] == {"lag": {"mean": 7.5, "samples": 3}}
    spans = store._file._spans
    assert [json.loads(raw[a:b])["load"] for a, b in spans.values()] == [100.0, 200.0, 300.0]
    assert all(isinstance(a, int) and isinstance(b, int) for a, b in spans.values())


def test_an_empty_run_writes_an_empty_list(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, 1)
    store.record_table("demand", [], complete=True)
    assert json.loads((tmp_path / "exp1-result.json").read_text())["experiments"] == []
    assert (tmp_path / "exp1-result.json").read_text() == json.dumps(
        {"id": 1, "experiments": [], "metric": "demand", "table": [], "complete": True}, indent=2)
