"""The child processes of the platforms that run on this machine (``embedded``,
``external``): SUT drivers and load generators started as ``python -m MODULE SPEC.json``
that report through JSON lines on stdout (:mod:`bench.runtime.host.child_protocol`).

Kept apart from the platforms so that both share one way to start, watch and stop a
child, and one reading of what a child reported (its progress, its final report).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import metrics
from bench.api import GeneratorReport, Sample
from bench.config.base import ConfigError
from bench.errors import UserError
from bench.runtime import instrumentation
from bench.runtime.host import procs


class PlatformError(UserError, RuntimeError):
    pass


class JobError(PlatformError, ConfigError):
    """The user's own script (``bench run --job``) failed before it read any input: it
    raised, started no query, or never read. The same in every experiment, so it ends
    the run (a ConfigError to the engine) in one line instead of being retried."""


def job_failure(child: Child) -> JobError | None:
    """The driver marks an error of the user's script with ``"job": true``."""
    event = child.last.get("error") or {}
    return JobError(f"--job: {event.get('message')}") if event.get("job") else None


@dataclass
class Child:
    """One child process that reports through JSON lines on stdout."""

    name: str
    proc: asyncio.subprocess.Process
    stderr_path: str
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    last: dict[str, dict[str, Any]] = field(default_factory=dict)  # event name -> last event
    error: str | None = None
    reader: asyncio.Task[None] | None = None
    target_rate: float = 0.0  # generators: records/s this instance was asked for
    last_event_at: float = field(default_factory=time.monotonic)  # when its last JSON line came

    def stderr_tail(self, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(Path(self.stderr_path).read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    break
                if not line.startswith(b'{"event"'):
                    continue  # anything else on stdout (a SUT logging records) is not for us
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                kind = str(event.get("event"))
                self.last[kind] = event
                self.last_event_at = time.monotonic()
                if kind == "started":
                    self.started.set()
                elif kind == "error":
                    self.error = str(event.get("message"))
        finally:
            self.finished.set()
            self.started.set()  # wake waiters; they check for errors



async def spawn(folder: str, name: str, module: str, payload: Mapping[str, Any]) -> Child:
    """``python -m module SPEC.json`` in its own process group, its spec and stderr in ``folder``."""
    spec_path = os.path.join(folder, f"{name}.json")
    with open(spec_path, "w") as fh:
        json.dump(payload, fh)
    stderr_path = os.path.join(folder, f"{name}.stderr")
    with open(stderr_path, "wb") as err:
        proc = await procs.spawn(
            [sys.executable, "-m", module, spec_path],
            what=name,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            stdin=asyncio.subprocess.DEVNULL,
            env=procs.child_env(),
            limit=1 << 20,
        )
    child = Child(name, proc, stderr_path)
    child.reader = asyncio.ensure_future(child.read())
    return child


async def wait_started(children: Sequence[Child], timeout: float, what: str) -> None:
    """Every child reported "started"; one that failed or is late raises with its stderr tail."""

    async def one(child: Child) -> None:
        await child.started.wait()
        if (job := job_failure(child)) is not None:
            raise job
        if child.error or child.finished.is_set() and "started" not in child.last:
            raise PlatformError(
                f"{what} {child.name} failed to start: {child.error or 'exited'} "
                f"(exit code {child.proc.returncode})\n--- stderr tail ---\n{child.stderr_tail()}"
            )

    try:
        await gather_within([one(c) for c in children], timeout)
    except TimeoutError:
        late = [c for c in children if not c.started.is_set()]
        tails = "\n".join(f"--- {c.name} stderr tail ---\n{c.stderr_tail()}" for c in late)
        raise PlatformError(
            f"{what} not started after {timeout:.0f} s: {[c.name for c in late]}\n{tails}"
        ) from None


async def gather_within(awaitables: Sequence[Awaitable[Any]], timeout: float) -> None:
    """``wait_for(gather(...), timeout)`` whose gather's outcome is always read.

    Why: a wait cancelled from outside (Ctrl-C) or timed out cancels the gather, which
    then holds CancelledError as its exception; unread, asyncio logged it with a
    traceback ("_GatheringFuture exception was never retrieved") under bench's one-line
    "interrupted"."""
    gathered = asyncio.gather(*awaitables)
    try:
        await asyncio.wait_for(gathered, timeout)
    finally:
        if gathered.done() and not gathered.cancelled():
            gathered.exception()


async def stop(children: list[Child], grace: float) -> None:
    """Terminate every child (its whole process group) and empty the list."""
    await asyncio.gather(*(procs.terminate(c.proc, grace=grace) for c in children), return_exceptions=True)
    for child in children:
        if child.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(child.reader, 2)
    children.clear()


def generator_slis(generators: Sequence[Child], exp: str) -> dict[str, float]:
    """What the generators reported so far: records sent (their final report once they
    stopped) and the rate they send at."""
    gen = [c.last.get("progress") for c in generators]
    done = [c.last.get("report") for c in generators]
    records = sum(int((r or p or {}).get("records", 0)) for p, r in zip(gen, done, strict=True))
    rate = sum(float((p or {}).get("rate", 0.0)) for p in gen)
    metrics.GENERATOR_RATE.labels(exp).set(rate)
    return {"generated-records": float(records), "generator-rate": rate}


def driver_slis(driver: Child, exp: str) -> dict[str, float]:
    """The SLIs of the Spark driver's last micro-batch progress."""
    progress = driver.last.get("progress")
    if progress is None:
        # No micro-batch finished yet, so nothing was dropped: sampling 0 from the start keeps
        # this cumulative series as long as the lag series (its warm-up counts from the first
        # sample; a first batch of minutes on a busy machine otherwise left no usable sample).
        return {"dropped-records": 0.0}
    values = {
        "dropped-records": float(progress.get("droppedByWatermark") or 0),
        "malformed-records": float(progress.get("malformed") or 0),
        "input-rate": float(progress.get("inputRowsPerSecond") or 0.0),
        "spark-input-rows": float(progress.get("inputRows") or 0.0),
        "spark-batch-end": float(progress.get("batchEnd") or 0.0),
        "batch-duration": float(progress.get("batchDurationMs") or 0.0) / 1000.0,
        "spark-processed-rate": float(progress.get("processedRowsPerSecond") or 0.0),
    }
    metrics.SPARK_DROPPED.labels(exp).set(values["dropped-records"])
    metrics.MALFORMED.labels(exp).set(values["malformed-records"])
    metrics.SPARK_INPUT_RATE.labels(exp).set(values["input-rate"])
    metrics.SPARK_PROCESSED_RATE.labels(exp).set(values["spark-processed-rate"])
    metrics.SPARK_BATCH_DURATION.labels(exp).set(values["batch-duration"])
    return values


def bare_sample(generators: Sequence[Child], drivers: Sequence[Child], exp: str) -> Sample | None:
    """What a platform samples with bench's instrumentation off (``bench.runtime.instrumentation``):
    the generators' progress and the Spark driver's own micro-batch progress, nothing read
    from Kafka; None when the instrumentation is on (every run but observer_effect.py's)."""
    if instrumentation.enabled("samplers"):
        return None
    values = dict(generator_slis(generators, exp))
    if drivers:
        values.update(driver_slis(drivers[0], exp))
    return Sample(time.time(), values)


def report_of(child: Child) -> GeneratorReport:
    """The generator's own report; if it died without one, what its progress showed."""
    report = child.last.get("report")
    if report is not None:
        return GeneratorReport(
            target_rate=float(report["target_rate"]),
            achieved_rate=float(report["achieved_rate"]),
            records=int(report["records"]),
            seconds=float(report["seconds"]),
        )
    progress = child.last.get("progress") or {}
    return GeneratorReport(
        target_rate=child.target_rate,
        achieved_rate=float(progress.get("rate", 0.0)),
        records=int(progress.get("records", 0)),
        seconds=float(progress.get("seconds", 0.0)),
    )


#: how long a failed lag query waits for a dying broker node to show as exited
NODE_DEATH_WAIT_S = 3.0


async def lag_failure(exc: Exception, timeout: float, broker_failure: Callable[[], str | None],
                      wait: float = NODE_DEATH_WAIT_S) -> PlatformError:
    """Why a lag query failed: a broker node's death first, which closes its connections
    before its process is seen to exit (a killed node's clients get "Connection
    closed" first), so the node is given a moment to show as dead. Only the
    fault path pays the wait: the repetition is lost either way."""
    deadline = time.monotonic() + wait
    while (why := broker_failure()) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    if why is not None:
        return PlatformError(f"{why} during the experiment (lag sampling: {type(exc).__name__})")
    if isinstance(exc, TimeoutError):
        return PlatformError(f"lag sampling got no answer from Kafka within {timeout:.0f} s")
    return PlatformError(f"lag sampling failed: {type(exc).__name__}: {exc}")
