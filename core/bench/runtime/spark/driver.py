"""The SUT driver program: ``python -m bench.runtime.spark.driver SPEC.json``.

The embedded platform runs this as a subprocess so that the SUT's JVM and Python
workers stay out of the engine's event loop and can be killed as one process group.
The spec is a JSON object::

    {"use_case": "uc1", "bootstrap_servers": "127.0.0.1:9092",
     "topics": {"input": "input-x1", "output": "output-x1"}, "group_id": "bench-sut",
     "params": {}, "instances": 1, "spark_master": null, "trigger_seconds": 2,
     "max_records_per_trigger": null, "checkpoint_dir": "/tmp/ck", "connector": "python",
     "conf": {"spark.sql.adaptive.enabled": "false"}}

``metrics_port`` (with ``experiment``) makes the driver serve its progress counters
(dropped and malformed records, rates) to Prometheus as well (:func:`bench.metrics.exporting`):
the Kubernetes platform cannot read this stdout.

``conf`` is Spark configuration (``bench run --conf KEY=VALUE``), set on the session
after bench's own defaults. A ``job`` parameter (``bench run --job PATH.py``) makes the
driver run that script instead of the use case's topology
(:mod:`bench.runtime.spark.user_job`).

stdout carries JSON lines (:mod:`bench.runtime.host.child_protocol`): ``{"event": "started"}``
once the query is ready (after a warm-up run of the topology over throw-away topics, see
:func:`bench.runtime.spark.sut_query.warm_up`; ``"warmup": false`` in the spec, from the
platform option ``spark_warmup``, skips it for runs whose verdicts do not matter),
``{"event": "progress", ...}`` per micro-batch, ``{"event": "error", "message": ...}``
on failure (exit 1). SIGTERM and SIGINT stop the query and Spark and exit 0.

A program only: building and starting the query is :mod:`bench.runtime.spark.sut_query`,
shared with :mod:`bench.testing`.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bench.api import UseCase
from bench.runtime.host import child_protocol
from bench.runtime.host.child_protocol import write_line
from bench.runtime.spark.sut_query import ProgressTotals, build_context, start_query, wait_ready, warm_up

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

START_ATTEMPTS = 3


def lookup_use_case(name: str) -> UseCase:
    from bench.plugins import load_plugins

    registry = load_plugins()
    if name not in registry.use_cases:
        raise KeyError(f"unknown use case {name!r}; known: {sorted(registry.use_cases)}")
    return registry.use_cases[name]


def run(spec: Mapping[str, Any], emit: Callable[[Mapping[str, Any]], None] = write_line) -> int:
    from bench.metrics import exporting
    from bench.runtime.host.jars import default_connector
    from bench.runtime.spark.session import build_session, progress_listener, stop_session

    emit = exporting(emit, spec)  # metrics_port (Kubernetes): progress to Prometheus too
    use_case = lookup_use_case(str(spec["use_case"]))
    merged = {**dict(use_case.default_params), **dict(spec.get("params") or {})}
    if merged.get("job"):  # the user's own script is the SUT (bench run --job)
        from bench.runtime.spark import user_job as job_runner
        return job_runner.run({**spec, "params": merged}, emit)
    if use_case.topology is None:
        raise ValueError(f"use case {use_case.name!r} has no Spark topology")
    instances = int(spec.get("instances") or 1)
    master = spec.get("spark_master") or f"local[{instances}]"
    connector = str(spec.get("connector") or default_connector())
    bootstrap = str(spec["bootstrap_servers"])
    spark = build_session(master, f"bench-{use_case.name}", instances, spec.get("conf"))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    query: StreamingQuery | None = None
    try:
        params = {**dict(use_case.default_params), **dict(spec.get("params") or {})}
        ctx = build_context(
            spark,
            bootstrap,
            spec["topics"],
            str(spec.get("group_id") or "bench-sut"),
            params,
            instances,
            connector,
            spec.get("max_records_per_trigger"),
        )
        plan = use_case.topology(ctx)
        trigger = spec.get("trigger_seconds")
        if trigger is None:
            trigger = plan.trigger_seconds if plan.trigger_seconds is not None else 2.0
        totals = ProgressTotals()
        lock = threading.Lock()
        # "started" comes first on stdout: a batch over records already waiting can end
        # before wait_ready() sees the query ready, and its progress then waits here
        held: list[dict[str, Any]] | None = []

        def on_progress(progress: Any) -> None:
            with lock:
                event = totals.add(progress)
                if held is None:
                    emit(event)
                else:
                    held.append(event)

        warm_s = 0.0
        if spec.get("warmup", True):  # both connectors: the first batch compiles the whole plan
            try:
                warm_s = warm_up(spark, use_case, bootstrap, spec["topics"], str(spec.get("group_id") or "bench-sut"),
                                 params, instances, connector)
            except Exception as exc:  # noqa: BLE001 - a failed warm-up only costs time later
                sys.stderr.write(f"warm-up failed (continuing): {exc}\n")
        for attempt in range(1, START_ATTEMPTS + 1):
            query = start_query(plan, ctx, bootstrap, str(spec["checkpoint_dir"]), float(trigger), connector)
            progress_listener(spark).watch(str(query.id), on_progress)
            try:
                wait_ready(query, stop)
                break
            except RuntimeError as exc:
                # Spark waits a fixed 10 s for a fresh Python process (the source runner)
                # to connect back; on a loaded machine its imports take longer.
                if attempt == START_ATTEMPTS or "connect back" not in str(exc):
                    raise
                progress_listener(spark).unwatch(str(query.id))
                query.stop()
                sys.stderr.write(f"query start failed (attempt {attempt}), retrying: {exc}\n")
        assert query is not None
        with lock:
            emit({"event": "started", "id": str(query.id), "warmupSeconds": round(warm_s, 3)})
            for event in held or []:
                emit(event)
            held = None
        while not stop.is_set():
            if query.exception() is not None or not query.isActive:
                raise RuntimeError(str(query.exception() or "query stopped"))
            stop.wait(0.5)
        return 0
    finally:
        if query is not None:
            try:
                query.stop()
            except Exception:  # noqa: BLE001 - stopping on the way out; nothing to report to
                pass
        stop_session(spark)


def main(argv: list[str] | None = None) -> int:
    return child_protocol.main("bench.runtime.spark.driver", run, argv)


if __name__ == "__main__":
    sys.exit(main())
