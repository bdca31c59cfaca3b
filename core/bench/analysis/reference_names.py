"""Result files the reference (Theodolite) wrote, found by their names.

The reference names its series files in two ways, both with repetitions counted from 1
and a ``labels`` column holding the Prometheus label map (``{group=...}``):

- current: ``exp<id>_<load>_<resources>_sli_<sli-slug>_<repetition>.csv``, one file per
  SLI (its slug may hold ``_``, which bench's own names never do);
- older: ``exp<id>_<load>_<resources>_<slo-type-slug>_<index>[_<name>]_<repetition>.csv``,
  one file per SLO type (``index`` counts repetitions from 0).

A slug is the reference's: whitespace to ``-``, anything but word characters and ``-``
dropped, lower case. Each file is given the name of the run's SLO whose name, type or
SLI has that slug, so the analysis finds it as it finds bench's own series.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: the current schema's SLI files
CURRENT = re.compile(r"^exp(\d+)_(\d+(?:\.\d+)?)_(\d+(?:\.\d+)?)_sli_(.+)_(\d+)\.csv$")
#: the older schema's SLO-type files
OLDER = re.compile(r"^exp(\d+)_(\d+(?:\.\d+)?)_(\d+(?:\.\d+)?)_([\w-]+?)_(\d+)(?:_(.+?))?_(\d+)\.csv$")

#: (load, resources, SLO or SLI name, repetition from 1, path)
Found = tuple[float, float, str, int, Path]


def slug(name: str) -> str:
    """The reference's slug of a name (``lag trend`` -> ``lag-trend``)."""
    text = unicodedata.normalize("NFD", re.sub(r"\s", "-", name))
    return re.sub(r"[^\w-]", "", text, flags=re.ASCII).lower()


def parse(filename: str) -> tuple[int, float, float, str, int] | None:
    """(experiment id, load, resources, slug, repetition) of a reference file name."""
    match = CURRENT.match(filename)
    if match:
        return int(match[1]), float(match[2]), float(match[3]), match[4], int(match[5])
    match = OLDER.match(filename)
    if match and match[4] not in ("sli", "info", "generator"):
        return int(match[1]), float(match[2]), float(match[3]), match[4], int(match[7])
    return None


def slo_name(file_slug: str, slos: Sequence[Mapping[str, Any]]) -> str:
    """The run's SLO a file belongs to: the one whose name, type or SLI has the slug."""
    for slo in slos:
        props = slo.get("properties") or {}
        for candidate in (slo.get("name"), slo.get("sloType"), slo.get("sli"), props.get("sli")):
            if isinstance(candidate, str) and slug(candidate) == file_slug:
                return str(slo.get("name"))
    return file_slug


def normalize(benchmark: dict[str, Any] | None) -> None:
    """The current schema's SLOs (naming an ``sli``, no ``sloType``) of a stored benchmark
    in bench's shape, in place, so that the run's SLO types say which are trends."""
    if not benchmark or not isinstance(benchmark.get("slos"), list):
        return
    from bench.config.reference import sli_slo

    slis = {str(s.get("name")): s for s in benchmark.get("slis") or [] if isinstance(s, Mapping)}
    benchmark["slos"] = [sli_slo(s, slis) if isinstance(s, Mapping) and "sli" in s and "sloType" not in s else s
                         for s in benchmark["slos"]]


def reference_files(folder: Path, exp_id: int, benchmark: dict[str, Any] | None,
                    taken: Sequence[Path] = ()) -> list[Found]:
    """The reference-named series files of run ``exp_id`` in ``folder`` (files bench's own
    patterns already took, ``taken``, excluded); the stored ``benchmark`` is brought into
    bench's shape on the way (:func:`normalize`)."""
    slos = [s for s in (benchmark or {}).get("slos") or [] if isinstance(s, Mapping)]
    normalize(benchmark)
    skip = set(taken)
    found: list[Found] = []
    for entry in sorted(folder.iterdir()):
        parsed = parse(entry.name) if entry not in skip else None
        if parsed is None or parsed[0] != exp_id:
            continue
        _, load, resources, file_slug, repetition = parsed
        found.append((load, resources, slo_name(file_slug, slos), repetition, entry))
    return found
