"""The generator contract: what the platform expects of a running generator.

A generator runs in a process of its own per instance (``bench.runtime.load.
generator_main``); that process installs a :class:`GeneratorControl` before it awaits
``GeneratorType.run``, and a generator reads it through :func:`generator_control`.
Plugins import these names from :mod:`bench.api`, which re-exports them; they live
apart so that the contract is one concern of its own. Imports nothing from bench.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

#: how often a generator must report progress at least (s): the platform takes a
#: generator process that stays silent for :data:`GENERATOR_SILENCE_S` as stalled and
#: faults the repetition
PROGRESS_EVERY_S = 1.0
#: silence after which a generator process counts as stalled (s); the embedded and
#: external platforms check it at every sample
GENERATOR_SILENCE_S = 5.0


@dataclass
class GeneratorControl:
    """The platform's side of a running generator: its stop signal and its progress line.

    The process that runs a generator (one per instance) sets one of these before it
    awaits ``GeneratorType.run``; :func:`generator_control` returns it. A generator must
    (1) return its :class:`GeneratorReport` soon after :attr:`stop` is set (the platform
    sets it when a repetition ends, and cancels a generator that ignores it for 20 s),
    and (2) call :meth:`report` at least every :data:`PROGRESS_EVERY_S` (a generator
    silent for :data:`GENERATOR_SILENCE_S` is taken as stalled and its repetition is
    faulted). ``bench.services.open_workload`` and ``bench.services.record_generator``
    do both for you; only a generator with its own loop uses this directly.
    """

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    #: where progress goes (the generator process prints it as a JSON line); None: nowhere
    progress: Callable[[dict[str, Any]], None] | None = None

    def report(self, records: int, seconds: float, target: float, behind_ms: float = 0.0) -> None:
        """Publish progress: ``records`` acknowledged so far in ``seconds``, against a
        ``target`` rate in records/s; ``behind_ms`` how far the schedule lags."""
        if self.progress is not None:
            self.progress({"records": records, "seconds": seconds,
                           "rate": records / seconds if seconds > 0 else 0.0,
                           "target": target, "behindMs": behind_ms})

    async def wait_stop(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` s, waking at once on a stop request; whether one came."""
        if not self.stop.is_set():
            try:
                await asyncio.wait_for(self.stop.wait(), max(0.0, timeout))
            except TimeoutError:
                return False
        return True


_CONTROL: ContextVar[GeneratorControl | None] = ContextVar("bench_generator_control", default=None)


def generator_control() -> GeneratorControl:
    """The control of the generator running in this context: the platform's when a
    generator process runs it, else a fresh one nobody stops (a test that awaits
    ``run`` itself: set ``duration_s`` in the spec, or set ``.stop``)."""
    control = _CONTROL.get()
    if control is None:
        control = GeneratorControl()
        _CONTROL.set(control)
    return control


def set_generator_control(control: GeneratorControl) -> None:
    """Install ``control`` for the generator about to run in this context (the generator
    process does this; so does ``bench.testing.run_generator``)."""
    _CONTROL.set(control)
