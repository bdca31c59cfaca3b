"""What ``bench analyze``, ``report`` and ``compare`` check before they analyse anything.

Why a layer of its own: the analysis reads stored files as ``bench run`` wrote them and
trusts them, so a truncated CSV row, a non-numeric or infinite sample, a file in
another encoding or a configuration whose numbers are text ended in a traceback
deep inside the statistics. Here every file a command will read is checked first,
and every option is checked as ``bench run`` checks its own (:mod:`bench.config.bounds`), so
a bad input is one line naming the file and row, or the option, and exit code 2.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bench.analysis.runs import RunFiles, SliFile
from bench.config import bounds, files
from bench.config.base import ConfigError

#: the largest stored series read (a day of samples every 0.1 s is ~40 MB)
MAX_SERIES_BYTES = 64 * 1024 * 1024
HEADER = ["labels", "timestamp", "value"]


def check_options(threshold: float | None, threshold_rel_to_load: float | None, warmup: float | None,
                  confidence: float | None, threshold_rel_to_rate: float | None = None) -> None:
    """The options of ``bench analyze`` (and ``--confidence`` of ``bench report``)."""
    given = {"threshold": threshold, "thresholdRelToRate": threshold_rel_to_rate,
             "thresholdRelToLoad": threshold_rel_to_load}
    if sum(v is not None for v in given.values()) > 1:
        raise ConfigError("--threshold, --threshold-rel-to-rate and --threshold-rel-to-load: give only one of them "
                          "(they exclude each other)")
    for key, value in given.items():
        if value is not None:
            option, bound = bounds.THRESHOLDS[key]
            bounds.check_value(bound, value, option)
    if warmup is not None:
        bounds.check_value(bounds.WARMUP, warmup, "--warmup")
    if confidence is not None and not (math.isfinite(confidence) and 0 < confidence < 1):
        raise ConfigError(f"--confidence {confidence:g}: must lie between 0 and 1 (e.g. 0.95)")


def check_source(source: str) -> None:
    """A results folder (``FOLDER`` or ``FOLDER:ID``) or table CSV: every stored file the
    analysis may read is regular, size-capped UTF-8 text (JSON and CSV alike)."""
    path = Path(source)
    if not path.exists() and ":" in source:
        path = Path(source.rpartition(":")[0])
    candidates = [path] if path.is_file() else sorted(path.glob("exp*")) if path.is_dir() else []
    for file in candidates:
        if (file.suffix in (".csv", ".json") or file == path) and file.is_file():
            text = files.decode_text(files.read_bytes(file, "", MAX_SERIES_BYTES), str(file))
            if file.suffix == ".csv" or file == path:
                _check_row_lengths(text, str(file))


def _check_row_lengths(text: str, label: str) -> None:
    """Every row of a CSV as long as its header: a shorter one was cut off."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    for number, row in enumerate(rows[1:], 2):
        if row and len(row) != len(rows[0]):
            raise ConfigError(f"{label}: line {number} has {len(row)} field(s) where the header has "
                              f"{len(rows[0])} ({','.join(row)}); the file was cut off or edited")


def check_series(sli: SliFile, informational: bool = False) -> None:
    """One stored series: UTF-8 text, the header ``labels,timestamp,value``, and rows of
    three fields whose timestamp and value are finite numbers. An informational series
    may hold ``nan`` values: samples without a value, as bench writes them (a latency
    interval without output, :func:`bench.results.store.series_csv`); its readers skip them.
    Refusing them would refuse every UC3 run whole: its latency intervals without output
    are such samples."""
    label = str(sli.path)
    text = files.decode_text(files.read_bytes(sli.path, "", MAX_SERIES_BYTES), label)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or rows[0] != HEADER:
        raise ConfigError(f"{label}: not an SLI file (its first line must be {','.join(HEADER)})")
    for number, row in enumerate(rows[1:], 2):
        if len(row) < len(HEADER):
            raise ConfigError(f"{label}: line {number} is truncated ({','.join(row) or 'empty'}); "
                              "the file was cut off: run the experiment again or remove its files")
        for name, raw in zip(HEADER[1:], row[1:3], strict=True):
            try:
                value = float(raw)
            except ValueError:
                raise ConfigError(f"{label}: line {number}: {name} {raw!r} is not a number") from None
            if math.isnan(value) and informational and name == "value":
                continue
            if not math.isfinite(value):
                raise ConfigError(f"{label}: line {number}: {name} {raw} is not a finite number")


def check_run(run: RunFiles) -> None:
    """Every series of the run, and every number of its configuration the analysis reads."""
    for sli in run.sli:
        check_series(sli)
    for sli in run.info:
        check_series(sli, informational=True)
    try:
        run.metric()
        run.warmup()
        run.sample_interval()
        run.lower_bound()
        run.decreasing()
        run.configured("load")
        run.configured("resources")
        for load, resources in run.records():
            run.target_rate(load, resources)
        run.recorded_run_table()
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise ConfigError(f"{run.directory}: exp{run.exp_id}'s configuration or result JSON holds a value that "
                          f"cannot be read ({type(exc).__name__}: {' '.join(str(exc).split())}); "
                          "was it edited by hand?") from None


def check_warmup(run: RunFiles, warmup: float | None) -> None:
    """``--warmup`` shorter than the run's duration, where the run recorded one."""
    ex = (run.execution or {}).get("execution") or {}
    duration = ex.get("duration") if isinstance(ex, dict) else None
    if warmup is not None and isinstance(duration, int | float) and warmup >= duration:
        raise ConfigError(f"--warmup {warmup:g}: must be shorter than the run's duration ({duration:g} s); "
                          "no sample would be left")


def check_table(source: str, table: Any) -> None:
    """A table to compare holds rows."""
    if not table.table:
        raise ConfigError(f"{source}: the {table.metric} table holds no rows; nothing to compare")
    for key, value in table.table.items():
        if not math.isfinite(key) or (value is not None and not math.isfinite(value)):
            raise ConfigError(f"{source}: row {key:g},{value if value is None else format(value, 'g')} holds a "
                              "number that is not finite")


#: a file a run wrote (``exp<N>_...``, ``exp<N>-...``); the analysis's own outputs excepted
_RUN_FILE = re.compile(r"^exp\d+[-_]")
_ANALYSIS_FILE = re.compile(r"^exp\d+-analysis")


def shown(path: str | Path) -> str:
    """A path as one line of an error shows it: a newline or other control character in
    it is escaped, so the message stays one line."""
    text = str(path)
    return text if text.isprintable() else repr(text)[1:-1]


def check_output(flag: str, output: Path, sources: Iterable[str]) -> None:
    """An output never replaces what a command reads or what a run wrote: not a file of
    a results folder (``exp<N>-result.json``, a series, a table), not an input named on
    the command line, not a folder. A run's files are its only record of what was
    measured; ``bench analyze RUN -o RUN/exp0-result.json`` replaced one silently."""
    if output.is_dir():
        raise ConfigError(f"{flag} {shown(output)}: is a folder; give a file name")
    target = output.resolve()
    for source in sources:
        path = Path(source)
        if not path.exists() and ":" in source:
            path = Path(source.rpartition(":")[0])
        if path.is_file() and path.resolve() == target:
            raise ConfigError(f"{flag} {shown(output)}: is an input of this command; write elsewhere")
        if path.is_dir() and target.parent == path.resolve() and _RUN_FILE.match(target.name) \
                and not _ANALYSIS_FILE.match(target.name):
            raise ConfigError(f"{flag} {shown(output)}: would replace a file of the run in {shown(path)}; write "
                              "elsewhere (or leave -o out: bench analyze writes exp<id>-analysis-*)")


@contextlib.contextmanager
def writing(flag: str, path: Path) -> Iterator[None]:
    """A write that fails (a folder that cannot be made, no permission, a full disk) is
    one line naming the file; :func:`bench.results.store.atomic_write` leaves no part."""
    try:
        yield
    except OSError as exc:
        raise ConfigError(f"{flag} {shown(path)}: cannot write there: {exc.strerror or exc}") from None


def run_kind(run: RunFiles) -> tuple[str | None, str, str]:
    """(use case, load type, resource type) of a stored run; the use case None when its
    files do not say."""
    use_case = (run.benchmark or {}).get("useCase") or (run.execution or {}).get("benchmark")
    return (str(use_case) if use_case else None), run.load_type(), run.resource_type()


def differences(runs: Iterable[RunFiles]) -> tuple[str | None, str | None]:
    """What differs between runs, as (axes, use cases): axes when their load or resource
    types differ (their tables and graphs have different axes), use cases when they ran
    different ones; None where all agree."""
    kinds = [(run.label, *run_kind(run)) for run in runs]
    axes = {(load, res) for _, _, load, res in kinds}
    cases = {case for _, case, _, _ in kinds if case is not None}
    axis_note = None
    if len(axes) > 1:
        axis_note = "; ".join(f"{label}: load {load}, resources {res}" for label, _, load, res in kinds)
    case_note = ", ".join(f"{label}: {case}" for label, case, _, _ in kinds if case) if len(cases) > 1 else None
    return axis_note, case_note
