"""``exp<id>-sizing.json``: what ``--loads auto`` / ``--resources auto`` measured and chose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.results.store import atomic_write, read_object

SIZING_FILE = "exp{id}-sizing.json"


def write_sizing(directory: Path, exp_id: int, doc: dict[str, Any]) -> Path:
    """``exp<id>-sizing.json``: the probes and the loads, resources and CPU limit chosen
    from them (``bench.search.sizing``), written atomically as every result file."""
    path = directory / SIZING_FILE.format(id=exp_id)
    atomic_write(path, json.dumps(doc, indent=2) + "\n")
    return path


def read_sizing(directory: Path, exp_id: int) -> dict[str, Any] | None:
    """The stored sizing of a run, or None (none, or unreadable: a resume then keeps the
    configuration it stored, and a report leaves the sizing out)."""
    return read_object(directory / SIZING_FILE.format(id=exp_id))
