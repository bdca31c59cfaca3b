"""How bench's child programs talk to the platform that launched them.

The embedded platform starts the SUT driver (:mod:`bench.runtime.spark.driver`), the
calibrated SUT (:mod:`bench.runtime.calibrated_sut`) and every load generator
(:mod:`bench.runtime.load.generator_main`) as ``python -m MODULE SPEC.json`` and reads their
stdout as JSON lines (``bench.platforms.embedded.Child.read``). The contract:

- one JSON object per line, its first key ``"event"`` (the platform skips any other
  stdout line, so a SUT may log records there);
- ``started`` once the program is ready, ``error`` with a ``message`` when it fails;
- exit 0 after a requested stop, 1 after a failure, 2 for a wrong command line.

Why one module: the three programs carried the same ``emit`` and ``main``; a change to
the contract (what an error line holds, how a bad spec is reported) has one place now.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

#: a program's work: the parsed SPEC.json in, the exit code out
Run = Callable[[dict[str, Any]], int]


def write_line(obj: Mapping[str, Any]) -> None:
    """One event as one JSON line, flushed at once: the platform waits on it."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def emit(event: str, **fields: Any) -> None:
    """An event line stamped with the wall-clock ``time`` it was written."""
    write_line({"event": event, "time": time.time(), **fields})


def main(program: str, run: Run, argv: list[str] | None = None) -> int:
    """``python -m PROGRAM SPEC.json``: load the spec and hand it to ``run``.

    Every exception, a missing or malformed spec included, becomes one ``error`` line
    (``"Type: message"``, what the platform reports) and exit code 1; its traceback
    goes to stderr, whose tail the platform shows when a child fails.
    """
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write(f"usage: python -m {program} SPEC.json\n")
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            spec = json.load(fh)
        return run(spec)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one error line for the platform
        sys.stderr.write(traceback.format_exc())
        emit("error", message=f"{type(exc).__name__}: {exc}")
        return 1
