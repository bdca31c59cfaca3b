"""The JSON-lines contract between child programs and the platform that reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.runtime.host import child_protocol


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_spec_is_handed_to_run_and_its_exit_code_returned(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"a": 1}')
    seen: list[dict[str, Any]] = []
    assert child_protocol.main("prog", lambda s: seen.append(s) or 0, [str(spec)]) == 0
    assert seen == [{"a": 1}]


def test_wrong_command_line_is_usage_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert child_protocol.main("bench.runtime.x", lambda s: 0, []) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "usage: python -m bench.runtime.x SPEC.json\n"


def test_every_exception_is_one_error_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text("{}")

    def boom(_: dict[str, Any]) -> int:
        raise KeyError("use_case")

    assert child_protocol.main("prog", boom, [str(spec)]) == 1
    out, err = capsys.readouterr()
    [line] = _lines(out)
    assert out.startswith('{"event": "error"')  # what Child.read looks for
    assert line["message"] == "KeyError: 'use_case'"
    assert "Traceback" in err  # for the platform's stderr tail


def test_missing_spec_is_an_error_line_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert child_protocol.main("prog", lambda s: 0, [str(tmp_path / "none.json")]) == 1
    [line] = _lines(capsys.readouterr().out)
    assert line["event"] == "error" and line["message"].startswith("FileNotFoundError")


def test_emit_stamps_time_and_keeps_event_first(capsys: pytest.CaptureFixture[str]) -> None:
    child_protocol.emit("progress", records=3)
    out = capsys.readouterr().out
    assert out.startswith('{"event": "progress"') and out.endswith("\n")
    line = _lines(out)[0]
    assert line["records"] == 3 and isinstance(line["time"], float)
