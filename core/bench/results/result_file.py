"""``exp<id>-result.json`` rewritten after every experiment at a cost that does not grow with the run.

The file is what ``json.dumps(doc, indent=2)`` writes of every experiment's record, so
that notebooks and ``--resume`` read it as JSON. Building that text in memory at each
write made every write a few strings as large as the whole file (a 200-experiment run:
over a megabyte each, a little larger each time), which the C allocator could not give
back, and kept each experiment's entry in memory for the run's life: the CLI's RSS grew
with every experiment of a soak. Here each entry is serialized once, written, and then
only its place in the file is kept: the next write copies the earlier entries from the
file it replaces, a block at a time, and appends the new one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

#: bytes copied from the previous file at a time
BLOCK = 1 << 16
#: the place of the experiments' list in the document: replaced by the entries
_PLACE = "\u0000experiments\u0000"


@contextmanager
def atomic_output(path: Path) -> Iterator[IO[bytes]]:
    """A binary file that becomes ``path`` only once written whole and synced: an
    interrupted write leaves the previous file, never part of the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def entry_text(fields: dict[str, Any], default: Callable[[Any], Any]) -> str:
    """One experiment as it stands in the file's list (indented as ``json.dumps(doc, indent=2)`` indents it)."""
    text = json.dumps(fields, indent=2, default=default)
    return "\n".join("    " + line for line in text.split("\n"))


class ResultFile:
    """The result file and where each experiment's entry stands in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: key -> (start, end) byte offsets of its entry in the file as last written
        self._spans: dict[Hashable, tuple[int, int]] = {}

    def forget(self) -> None:
        """The file was not written by this object (``--resume`` read it): no span is known."""
        self._spans = {}

    def write(self, keys: Sequence[Hashable], fresh: dict[Hashable, str], text_of: Callable[[Hashable], str],
              doc: dict[str, Any], default: Callable[[Any], Any]) -> None:
        """The file with the entries of ``keys`` in their order, and ``doc`` around them
        (its ``"experiments"`` is the list).

        An entry in ``fresh`` is written as given (a new or re-measured experiment); one
        written before is copied from the present file; any other is ``text_of(key)``."""
        head, tail = json.dumps({**doc, "experiments": _PLACE}, indent=2, default=default).split(
            json.dumps(_PLACE), 1)
        spans: dict[Hashable, tuple[int, int]] = {}
        old = open(self.path, "rb") if self._spans and self.path.exists() else None  # noqa: SIM115
        try:
            with atomic_output(self.path) as out:
                at = out.write(head.encode())
                if not keys:
                    at += out.write(b"[]")
                for i, key in enumerate(keys):
                    at += out.write(b"[\n" if i == 0 else b",\n")
                    start = at
                    span = self._spans.get(key) if old is not None and key not in fresh else None
                    if old is not None and span is not None:
                        at += _copy(old, span, out)
                    else:
                        at += out.write((fresh[key] if key in fresh else text_of(key)).encode())
                    spans[key] = (start, at)
                if keys:
                    at += out.write(b"\n  ]")
                out.write(tail.encode())
        finally:
            if old is not None:
                old.close()
        self._spans = spans


def _copy(src: IO[bytes], span: tuple[int, int], out: IO[bytes]) -> int:
    start, end = span
    src.seek(start)
    left = end - start
    while left > 0:
        block = src.read(min(BLOCK, left))
        if not block:
            raise OSError(f"the result file ended {left} bytes before an entry's end: changed behind the run")
        out.write(block)
        left -= len(block)
    return end - start
