"""The docs' shape: reference pages a reader can use, dates only in the measurements log.

Why: a reader looking for "how fast is bench, how do I read this figure" must find the
current figure, not a lab notebook of how it was reached. docs/performance.md is the
reference of the current figures (one table per benchmark script, the figures behind
design choices); every dated round lives in docs/measurements-log.md, the one place
where dates belong. A dated remark in a comment or docstring says when something was
measured, which goes stale; the comment should say why, with the figure if it explains
it. These checks keep the pages from growing back into a notebook.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PERFORMANCE = ROOT / "docs" / "performance.md"
LOG = ROOT / "docs" / "measurements-log.md"
README = ROOT / "README.md"

#: a calendar date (month 01-12, day 01-31): the shape of a dated remark; an example
#: of an invalid date (month 13) in a comment about parsing is not one
DATE = re.compile(r"\b20\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")

#: a reference page, not a notebook: a few hundred lines
MAX_PERFORMANCE_LINES = 600


def _headings(text: str) -> list[str]:
    """Markdown headings outside fenced code blocks (a ``#`` comment in a shell block is none)."""
    found, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            found.append(line)
    return found


def dated_remarks(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of ``source`` that holds a date.

    String literals that are data (a timestamp a test parses) are not remarks; only
    ``#`` comments and the docstrings of modules, classes and functions are."""
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and DATE.search(token.string):
            found.append((token.start[0], token.string.strip()))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                text = body[0].value.value
                date = DATE.search(text) if isinstance(text, str) else None
                if date:
                    found.append((body[0].lineno, date.group(0)))
    return sorted(found)


def _python_files(*tops: str) -> list[Path]:
    files = []
    for top in tops:
        for path in (ROOT / top).rglob("*.py"):
            parts = set(path.relative_to(ROOT).parts)
            if not parts & {".venv", "build", "__pycache__"} and not any(p.endswith(".egg-info") for p in parts):
                files.append(path)
    return sorted(files)


def test_performance_is_a_reference_of_a_few_hundred_lines() -> None:
    lines = PERFORMANCE.read_text().splitlines()
    assert len(lines) <= MAX_PERFORMANCE_LINES, (
        f"docs/performance.md has {len(lines)} lines (at most {MAX_PERFORMANCE_LINES}): "
        "move rounds and narratives to docs/measurements-log.md"
    )


def test_performance_has_no_dated_round_headings() -> None:
    dated = [h for h in _headings(PERFORMANCE.read_text()) if DATE.search(h)]
    assert not dated, f"dated round headings belong in docs/measurements-log.md: {dated}"


def test_the_measurements_log_keeps_the_rounds() -> None:
    """The rounds moved, not lost: the log holds them under their own section."""
    headings = _headings(LOG.read_text())
    assert "## Rounds moved from performance.md" in headings
    assert any(DATE.search(h) for h in headings)


def test_readme_holds_no_measurement_narrative() -> None:
    dated = [(n, line) for n, line in enumerate(README.read_text().splitlines(), 1) if DATE.search(line)]
    assert not dated, f"README.md: dated measurement narrative belongs in docs/measurements-log.md: {dated}"


def test_no_dated_remarks_in_code_comments_or_docstrings() -> None:
    found = []
    for path in _python_files("core", "plugins"):
        for line, text in dated_remarks(path.read_text()):
            found.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert not found, "say why, not when (dates belong in docs/measurements-log.md):\n" + "\n".join(found)


def test_dated_remarks_finds_comments_and_docstrings_not_data() -> None:
    source = (
        '"""Module, measured 2026-11-29."""\n'
        "STAMP = '2026-03-30T05:10:00'  # data, not a remark\n"
        "def f():\n"
        '    """Why, without a date."""\n'
        "    # decided on 2026-12-01\n"
        "    return '2026-12-02'\n"
        "# an invalid date such as 2024-13-45 is an example, not a remark\n"
    )
    assert [line for line, _ in dated_remarks(source)] == [1, 5]
