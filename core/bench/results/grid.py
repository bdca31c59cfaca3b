"""The demand over two load dimensions, as files: one grid file and a table per slice.

A grid run (:mod:`bench.search.grid`) keeps what the reference's tools read: every value
of the second dimension is a run of its own (``exp<slice id>``, with its experiments,
SLI series and ``exp<slice id>_demand.csv``), and the grid's id holds

- ``exp<id>_grid.json``: both load types, their values, the resources, the demand and
  note of every point, the experiments it cost and each slice's id;
- ``exp<id>_grid.csv``: one row per point (``load,load2,resources,note``), the
  reference's table with the second dimension as a column;
- ``exp<id>_demand_<load2 type>-<value>.csv``: each slice's table in the reference's
  format under the grid's id, so the slices sit beside the grid file.

``bench analyze``, ``compare`` and ``run --expect`` read the JSON (:func:`read_grid`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import UserError
from bench.results import tables
from bench.results.store import atomic_write, fmt_value

GRID_JSON = "exp{id}_grid.json"
GRID_CSV = "exp{id}_grid.csv"
SLICE_CSV = "exp{id}_demand_{type}-{value}.csv"

Point = tuple[float, float]


@dataclass
class GridTable:
    """The demand at every (load, load2) point; values ascending as the execution gives them."""

    load_type: str
    load2_type: str
    loads: list[float]
    loads2: list[float]
    resources: list[float]
    demand: dict[Point, float | None]
    notes: dict[Point, str] = field(default_factory=dict)
    experiments: int = 0
    #: load2 value -> the exp id of its slice (its experiments and reference files)
    slices: dict[float, int] = field(default_factory=dict)
    resource_type: str = ""

    def slice(self, load2: float) -> tuple[tables.Table, tables.Notes]:
        """The one-dimensional demand table (and notes) of one second-dimension value."""
        table = {a: self.demand.get((a, load2)) for a in self.loads}
        notes = {a: n for (a, b), n in self.notes.items() if b == load2}
        return table, notes

    @property
    def size(self) -> int:
        """Points x resource amounts: what measuring every pair would cost."""
        return len(self.loads) * len(self.loads2) * len(self.resources)


def slice_name(exp_id: int, load2_type: str, value: float) -> str:
    safe = re.sub(r"[^A-Za-z0-9.-]", "-", load2_type)
    return SLICE_CSV.format(id=exp_id, type=safe, value=fmt_value(value))


def to_json(grid: GridTable) -> dict[str, Any]:
    return {
        "metric": "demand",
        "loadType": grid.load_type,
        "load2Type": grid.load2_type,
        "resourceType": grid.resource_type,
        "loadValues": grid.loads,
        "load2Values": grid.loads2,
        "resourceValues": grid.resources,
        "experiments": grid.experiments,
        "slices": [{"load2": v, "exp": i} for v, i in sorted(grid.slices.items())],
        "points": [
            {"load": a, "load2": b, "resources": grid.demand.get((a, b)), "note": grid.notes.get((a, b), "")}
            for b in grid.loads2 for a in grid.loads
        ],
    }


def from_json(doc: Any, where: str) -> GridTable:
    """A grid from its JSON; one line naming the bad field when it is not one."""
    try:
        points = doc["points"]
        grid = GridTable(
            load_type=str(doc["loadType"]), load2_type=str(doc["load2Type"]),
            loads=[float(v) for v in doc["loadValues"]], loads2=[float(v) for v in doc["load2Values"]],
            resources=[float(v) for v in doc["resourceValues"]],
            demand={}, experiments=int(doc.get("experiments") or 0),
            slices={float(s["load2"]): int(s["exp"]) for s in doc.get("slices") or []},
            resource_type=str(doc.get("resourceType") or ""),
        )
        for p in points:
            key = (float(p["load"]), float(p["load2"]))
            value = p.get("resources")
            if value is not None and not math.isfinite(float(value)):
                raise ValueError(f"resources {value!r} is not a number")
            grid.demand[key] = None if value is None else float(value)
            if p.get("note"):
                grid.notes[key] = str(p["note"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{where}: not a grid file ({type(exc).__name__}: {exc})") from None
    return grid


def csv_text(grid: GridTable) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["load", "load2", "resources", tables.NOTE_COLUMN])
    for b in grid.loads2:
        for a in grid.loads:
            value = grid.demand.get((a, b))
            writer.writerow([fmt_value(a), fmt_value(b), tables.NO_VALUE if value is None else fmt_value(value),
                             grid.notes.get((a, b), "")])
    return buf.getvalue()


def write_grid(directory: Path, exp_id: int, grid: GridTable) -> list[Path]:
    """The grid's files (JSON, CSV, one table per slice), each written atomically."""
    written = [directory / GRID_JSON.format(id=exp_id), directory / GRID_CSV.format(id=exp_id)]
    atomic_write(written[0], json.dumps(to_json(grid), indent=2))
    atomic_write(written[1], csv_text(grid))
    for value in grid.loads2:
        table, notes = grid.slice(value)
        path = directory / slice_name(exp_id, grid.load2_type, value)
        tables.write_csv(path, "demand", table, notes)
        written.append(path)
    return written


def grid_file(source: str | Path) -> Path | None:
    """The grid JSON ``source`` names: the file itself, or the newest one in a results folder;
    None when ``source`` holds no grid (a one-dimensional run)."""
    path = Path(source)
    if path.is_file():
        return path if path.name.endswith("_grid.json") else None
    if not path.is_dir():  # FOLDER:ID names one run of a folder
        head, _, tail = str(source).rpartition(":")
        named = Path(head) / GRID_JSON.format(id=tail)
        return named if tail.isdigit() and named.is_file() else None
    found = sorted(path.glob("exp*_grid.json"), key=lambda p: _id_of(p.name))
    if not found:
        return None
    newest = found[-1]
    # a one-dimensional run after the grid (an id beyond its slices) is the folder's latest
    last = max((_id_of(p.name) for p in path.glob("exp*-execution-configuration.json")), default=-1)
    try:
        slices = [int(s["exp"]) for s in json.loads(newest.read_text(encoding="utf-8")).get("slices") or []]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        slices = []
    return newest if last <= max([_id_of(newest.name), *slices]) else None


def grid_id(path: Path) -> int:
    """The grid's own exp id, from its file name."""
    return _id_of(path.name)


def _id_of(name: str) -> int:
    match = re.match(r"^exp(\d+)_", name)
    return int(match.group(1)) if match else -1


def read_grid(path: Path) -> GridTable:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read the grid ({exc})") from None
    return from_json(doc, str(path))
