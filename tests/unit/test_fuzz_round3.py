"""Fuzz of the third round's inputs (issue 69, item 4): threshold expressions and the
stored result JSON. The oracle: a valid result, or one ``bench: error:`` line with exit
code 2 and no traceback; never another exception."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.cli.commands import cli
from bench.expressions import ExpressionError, check_expression
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .test_bad_input_round3 import _stored_run

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: pieces expressions are made of, with the ones that broke the old parser
PIECES = st.sampled_from(["L", "R", "0", "1", "-1", "10", "400", "0.5", "1e308", "9" * 30, "+", "-", "*", "/", "%",
                          "^", "(", ")", " ", "2L", ".", "e", "x", "\n"])


@SETTINGS
@given(pieces=st.lists(PIECES, max_size=40), loads=st.lists(st.floats(0.001, 1e9), min_size=1, max_size=4),
       resources=st.lists(st.integers(1, 1000), min_size=1, max_size=3))
def test_expressions_are_a_value_or_one_line(pieces: list[str], loads: list[float], resources: list[int]) -> None:
    text = "".join(pieces)
    try:
        check_expression(text, loads, [float(r) for r in resources])
    except ExpressionError as exc:
        assert "\n" not in str(exc), str(exc)  # the expression is shown escaped: one line
        assert str(exc).startswith("thresholdFromExpression"), str(exc)


@SETTINGS
@given(depth=st.integers(0, 2000), op=st.sampled_from(["(", "-", "2^", "+"]))
def test_deep_expressions_are_one_line(depth: int, op: str) -> None:
    text = op * depth + "1" + (")" * depth if op == "(" else "")
    try:
        check_expression(text, [1.0], [1.0])
    except ExpressionError as exc:
        assert str(exc).startswith("thresholdFromExpression")


@pytest.fixture(scope="module")
def stored() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield _stored_run(Path(tmp) / "run")


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False),
                   st.text(max_size=8), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                             st.integers(), max_size=2))


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:2]):
            out += _paths(v, (*prefix, i))
    return out


@SETTINGS
@given(data=st.data(), command=st.sampled_from(["analyze", "report", "compare"]))
def test_edited_result_json(stored: Path, data: st.DataObject, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(shutil.copytree(stored, Path(tmp) / "run"))
        doc = json.loads((run / "exp0-result.json").read_text())
        path = data.draw(st.sampled_from(_paths(doc)), label="field")
        holder = doc
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = data.draw(VALUES, label="value")
        (run / "exp0-result.json").write_text(json.dumps(doc))
        args = {"analyze": ["analyze", str(run), "-o", f"{tmp}/a.csv"],
                "report": ["report", str(run), "-o", f"{tmp}/r.html"], "compare": ["compare", str(stored), str(run)]}
        result = CliRunner().invoke(cli, args[command])
        if result.exit_code in (0, 3):  # a valid result (3: compare found a regression)
            return
        assert result.exit_code == 2, (path, result.output, result.exception)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bench: error: "), result.output
