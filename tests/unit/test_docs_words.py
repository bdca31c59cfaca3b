"""The project's docs label measurements by date and commit and cite only files in the repository.

Numbered work periods ("Session 4") mean nothing to a reader without the history they
refer to, and a file outside the repository (METHOD.md) is a dead reference for
everyone else. Spark sessions and test sessions are a different meaning of the word
and stay allowed: only the numbered and relative work-period phrases are refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = re.compile(
    r"[Ss]ession[ -]?[0-9]"
    r"|METHOD\.md"
    r"|\b(?:this|next|earlier|previous) sessions?\b",
    re.IGNORECASE,
)


def _doc_files() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def forbidden_phrases(text: str) -> list[tuple[int, str]]:
    """(line number, matched phrase) of every refused phrase in ``text``."""
    return [
        (number, match.group(0))
        for number, line in enumerate(text.splitlines(), start=1)
        for match in FORBIDDEN.finditer(line)
    ]


def test_the_docs_exist() -> None:
    # An empty list would make the check below pass on nothing.
    files = _doc_files()
    assert (ROOT / "README.md").is_file()
    assert len(files) > 1


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_name_no_work_periods_and_no_outside_files(path: Path) -> None:
    found = forbidden_phrases(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)}: {found} (use a date and a commit id; cite files in the repository)"


@pytest.mark.parametrize(
    "text",
    [
        "Session 4 (quiet machine)",
        "the session-2 rows",
        "marked session 3",
        "in this session",
        "from the previous session on",
        "as in earlier sessions",
        "the files of METHOD.md",
    ],
)
def test_refused_phrases_are_found(text: str) -> None:
    assert forbidden_phrases(text)


@pytest.mark.parametrize(
    "text",
    [
        "SparkSession.builder.getOrCreate()",
        "a fresh Spark session took 14-21 s",
        "All queries run in one Spark session (`local[--instances]`)",
        "the pytest session fixture",
        "2026-11-26, commit 9d41178",
    ],
)
def test_other_meanings_pass(text: str) -> None:
    assert not forbidden_phrases(text)
