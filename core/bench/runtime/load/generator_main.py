"""One load-generator instance as a process: ``python -m bench.runtime.load.generator_main SPEC.json``.

Generators run as separate processes so that several instances really run in
parallel (one event loop is one core) and so that a slow generator never steals
the sampler's event loop. SPEC.json::

    {"generator": "active-power", "bootstrap_servers": "...", "topic": "...",
     "keys": [...], "period_ms": 1000, "duration_s": null, "params": {}, "topics": {}}

Stdout carries JSON lines (:mod:`bench.runtime.host.child_protocol`): ``started``,
``progress`` (records, seconds, rate, target), then ``report`` (a GeneratorReport) or
``error``. SIGTERM/SIGINT ask the generator to stop and report; one that ignores the
request is cancelled after a grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import asdict
from typing import Any

from bench.api import GeneratorControl, GeneratorReport, GeneratorSpec, set_generator_control
from bench.runtime.host import child_protocol
from bench.runtime.host.child_protocol import emit

STOP_GRACE_S = 20.0


def spec_from_json(raw: dict[str, Any]) -> GeneratorSpec:
    return GeneratorSpec(
        bootstrap_servers=raw["bootstrap_servers"],
        topic=raw["topic"],
        keys=list(raw["keys"]),
        period_ms=float(raw.get("period_ms", 1000.0)),
        duration_s=raw.get("duration_s"),
        params=dict(raw.get("params") or {}),
        topics=dict(raw.get("topics") or {}),
    )


async def run(raw: dict[str, Any]) -> int:
    from bench.plugins import load_plugins

    name = raw.get("generator", "active-power")
    generators = load_plugins().generators
    if name not in generators:
        emit("error", message=f"unknown generator {name!r}; known: {', '.join(sorted(generators))}")
        return 2
    spec = spec_from_json(raw)
    control = GeneratorControl(progress=lambda p: emit("progress", **p))
    set_generator_control(control)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, control.stop.set)
    task = asyncio.ensure_future(generators[name].run(spec))
    emit("started", generator=name, keys=len(spec.keys), period_ms=spec.period_ms)
    stop_wait = asyncio.ensure_future(control.stop.wait())
    await asyncio.wait({task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        done, _ = await asyncio.wait({task}, timeout=STOP_GRACE_S)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            emit("error", message=f"generator {name} ignored the stop request; cancelled")
            return 1
    stop_wait.cancel()
    report: GeneratorReport = task.result()
    emit("report", **asdict(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    return child_protocol.main("bench.runtime.load.generator_main", lambda raw: asyncio.run(run(raw)), argv)


if __name__ == "__main__":
    sys.exit(main())
