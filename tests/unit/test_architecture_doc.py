"""docs/architecture.md names every module and package of the core: a new module that the
layout page does not mention is a part nobody reading the docs will find."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_core_module_is_named_in_the_architecture_page() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    core = ROOT / "core" / "bench"
    names = [p.stem for p in core.glob("*.py") if p.stem != "__init__"]
    names += [p.name for p in core.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    names += [p.name for p in (core / "runtime").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    missing = sorted(n for n in names if not re.search(rf"\b{re.escape(n)}\b", doc))
    assert not missing, f"docs/architecture.md does not name: {missing}"
