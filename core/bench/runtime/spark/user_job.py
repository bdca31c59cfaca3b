"""Running a user's own PySpark Structured Streaming script as the SUT (``bench run --job``).

The Spark driver program (:mod:`bench.runtime.spark.driver`) hands over here when the
use case's parameters name a script. What bench adds around the unchanged script:

- the session: built with the experiment's resources (``local[N]`` or the master) and
  ``--conf`` before the script runs, so its ``SparkSession.builder.getOrCreate()``
  gets it; a fresh checkpoint root per experiment
  (``spark.sql.streaming.checkpointLocation``), so queries need no checkpoint option,
  and a checkpoint the script names moved below it (:func:`redirect_checkpoints`);
- the offset-committing listener, told the input topic and the SUT group before the
  script runs (Spark's ``kafka`` source commits nothing; lag needs committed offsets);
- the environment: ``BENCH_BOOTSTRAP_SERVERS``, ``BENCH_INPUT_TOPIC``,
  ``BENCH_OUTPUT_TOPIC`` (and ``BENCH_CHECKPOINT_DIR``), or, for a script that takes
  them as arguments, its own command line (``jobArgs``, :func:`job_argv`);
- Kafka client security (``--kafka-config``): every ``format("kafka")`` source and sink
  the script opens starts with the security options, which the script's own options
  override (:func:`inject_kafka_options`); ``BENCH_KAFKA_OPTIONS`` holds them as JSON
  for a script that builds its own Kafka clients.

The script runs in a daemon thread as ``__main__`` (``runpy.run_path``), because it may
block in ``awaitTermination()`` for ever; as ``__main__``, functions it defines (UDFs)
are pickled by value, as when it is run with ``spark-submit``. The main thread is the
supervisor: it reports ``started`` once a query is active, forwards every query's
progress like the normal driver, and stops the queries on SIGTERM, which also returns
the script from ``awaitTermination()``.

A script that raises, starts no query within ``startTimeoutS``, or reads nothing from
the input topic for ``readTimeoutS`` while it holds records, ends with an ``error`` line
marked ``"job": true``: the platform reports it in one line and ends the run (it is the
same in every experiment). A query that fails after it has read input is a fault of that
experiment like any other SUT crash (the load may have caused it).
"""

from __future__ import annotations

import json
import os
import runpy
import shlex
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.runtime.spark.sut_query import ProgressTotals

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ENV_BOOTSTRAP = "BENCH_BOOTSTRAP_SERVERS"
ENV_INPUT = "BENCH_INPUT_TOPIC"
ENV_OUTPUT = "BENCH_OUTPUT_TOPIC"
ENV_CHECKPOINT = "BENCH_CHECKPOINT_DIR"
#: Spark's ``kafka`` source and sink options for the run's client security (JSON)
ENV_KAFKA_OPTIONS = "BENCH_KAFKA_OPTIONS"
#: how often the supervisor looks at the script and its queries (s)
POLL_S = 0.5
#: how often the input topic's size is read for the read check (s)
PROBE_EVERY_S = 2.0
#: longest message part taken from an exception (Spark's carry JVM stack traces)
MAX_MESSAGE = 400

Emit = Callable[[Mapping[str, Any]], None]


class JobScriptError(Exception):
    """The user's script cannot be benchmarked (raised, started no query, never reads).

    ``before_input``: nothing was read yet, so it is the script's problem, the same in
    every experiment; afterwards a failed query is a fault of one experiment.
    """

    def __init__(self, message: str, before_input: bool = True) -> None:
        super().__init__(message)
        self.before_input = before_input


def job_environment(bootstrap: str, topics: Mapping[str, str], checkpoint_dir: str) -> dict[str, str]:
    """The variables the script reads (docs/own-job.md)."""
    return {
        ENV_BOOTSTRAP: bootstrap,
        ENV_INPUT: str(topics["input"]),
        ENV_OUTPUT: str(topics.get("output", "")),
        ENV_CHECKPOINT: checkpoint_dir,
    }


def job_argv(line: str, values: Mapping[str, str]) -> list[str]:
    """The script's arguments: ``line``'s shell words with ``{bootstrap}``, ``{input}``,
    ``{output}``, ``{checkpoint}`` and ``{group}`` filled in, each word on its own (a
    value with spaces stays one argument). The line was checked before the run
    (:func:`bench.builtin.job.check_job_args`)."""
    return [word.format_map(values) for word in shlex.split(line)]


def inject_kafka_options(options: Mapping[str, str]) -> None:
    """Every ``.format("kafka")`` of the script's readers and writers (streaming and
    batch) starts with ``options`` (the run's Kafka client security, Spark's spelling).

    Why: a job written for an unsecured Kafka must reach a secured one unchanged, as
    the use cases' queries do. Options the script sets afterwards win (a later option
    replaces an earlier one of the same key), so a job with its own security keeps it.
    """
    from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

    for cls in (DataStreamReader, DataStreamWriter, DataFrameReader, DataFrameWriter):
        original = getattr(cls, "_bench_format", cls.format)
        cls._bench_format = original  # type: ignore[attr-defined,union-attr]
        if not options:
            cls.format = original  # type: ignore[method-assign]
            continue

        def format(self: Any, source: str, _original: Any = original) -> Any:
            result = _original(self, source)
            return result.options(**options) if str(source).lower() == "kafka" else result

        cls.format = format  # type: ignore[method-assign]


def redirect_checkpoints(root: str) -> None:
    """Every ``checkpointLocation`` the script gives goes below ``root`` (this experiment's).

    Why: an unchanged job names a fixed checkpoint; reused by the next experiment, it
    would resume from offsets of the previous experiment's topics (bench makes fresh
    topics per repetition) or fail on them. The path is kept as a subfolder, so two
    queries of the script keep two checkpoints.
    """
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    if getattr(DataStreamWriter, "_bench_redirected", None) == root:
        return
    original_option = getattr(DataStreamWriter, "_bench_option", DataStreamWriter.option)
    original_options = getattr(DataStreamWriter, "_bench_options", DataStreamWriter.options)

    def moved(value: Any) -> str:
        parts = [p for p in str(value).replace(":", "_").split("/") if p not in ("", ".", "..")]
        return os.path.join(root, "script", *(parts or ["default"]))

    def option(self: Any, key: str, value: Any) -> Any:
        return original_option(self, key, moved(value) if key.lower() == "checkpointlocation" else value)

    def options(self: Any, **opts: Any) -> Any:
        return original_options(
            self, **{k: moved(v) if k.lower() == "checkpointlocation" else v for k, v in opts.items()}
        )

    DataStreamWriter._bench_option = original_option  # type: ignore[attr-defined]
    DataStreamWriter._bench_options = original_options  # type: ignore[attr-defined]
    DataStreamWriter._bench_redirected = root  # type: ignore[attr-defined]
    DataStreamWriter.option = option  # type: ignore[method-assign]
    DataStreamWriter.options = options  # type: ignore[method-assign]


def describe_exception(exc: BaseException, script: str) -> str:
    """``Type: first line of the message (script.py, line N)``: one line a user can act on.

    The line is the script's deepest frame in the traceback; Spark's messages are cut
    to their first line (the rest is a JVM stack trace).
    """
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0].strip() if lines else ""
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 3] + "..."
    where = ""
    target = os.path.abspath(script)
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == target:
            where = f" ({Path(script).name}, line {frame.lineno})"
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"


class ScriptThread(threading.Thread):
    """The script as ``__main__`` in a daemon thread (it may block for ever)."""

    def __init__(self, path: str, args: list[str] | None = None) -> None:
        super().__init__(name="bench-job-script", daemon=True)
        self.path = path
        self.args = list(args or [])
        self.error: BaseException | None = None

    def run(self) -> None:
        folder = os.path.dirname(os.path.abspath(self.path))
        if folder not in sys.path:
            sys.path.insert(0, folder)  # as `python script.py`: its own folder's modules import
        sys.argv = [self.path, *self.args]  # its own command line, not the driver's spec
        try:
            runpy.run_path(self.path, run_name="__main__")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                self.error = exc
        except BaseException as exc:  # noqa: BLE001 - whatever the script raises is reported
            self.error = exc


@dataclass
class ReadCheck:
    """"Never reads": the input topic held records for ``timeout_s`` while no query read any.

    Counted from when the topic first held records, so neither a slow JVM start before
    the generator nor ``loadGenerationDelay`` counts.
    """

    timeout_s: float
    first_records_at: float | None = None
    read: int = 0  # rows read from the input topic so far

    def observe(self, now: float, records_in_topic: int) -> bool:
        """True when the job failed the check (records waited too long, none read)."""
        if self.read > 0 or records_in_topic <= 0:
            return False
        if self.first_records_at is None:
            self.first_records_at = now
        return now - self.first_records_at >= self.timeout_s


def rows_read_from(progress: Any, topic: str) -> int:
    """Rows a progress event's sources read from ``topic`` (Spark's ``kafka`` source
    names its topics in the offset JSON; another source, reading elsewhere, counts 0)."""
    from bench.runtime.kafka.source import parse_any_offset

    rows = 0
    for source in progress.sources or ():
        try:
            topics = parse_any_offset(json.loads(source.endOffset or "{}"))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if topic in topics:
            rows += int(source.numInputRows or 0)
    return rows


class JobSupervisor:
    """Runs the script and watches its queries; :meth:`run` returns when ``stop`` is set."""

    def __init__(
        self,
        spark: SparkSession,
        script: str,
        input_topic: str,
        emit: Emit,
        stop: threading.Event,
        start_timeout_s: float,
        read_timeout_s: float,
        records_in_topic: Callable[[], int],
        args: list[str] | None = None,
    ) -> None:
        self.spark = spark
        self.script = script
        self.input_topic = input_topic
        self.emit = emit
        self.stop = stop
        self.start_timeout_s = start_timeout_s
        self.read_check = ReadCheck(read_timeout_s)
        self.records_in_topic = records_in_topic
        self.totals = ProgressTotals()
        self._lock = threading.Lock()
        self.thread = ScriptThread(script, args)
        self.seen: dict[str, Any] = {}  # query id -> StreamingQuery

    def on_progress(self, progress: Any) -> None:
        with self._lock:
            self.read_check.read += rows_read_from(progress, self.input_topic)
            self.emit(self.totals.add(progress))

    def _script_failed(self) -> None:
        if self.thread.error is not None:
            what = describe_exception(self.thread.error, self.script)
            raise JobScriptError(f"the script failed: {what}", before_input=self.read_check.read == 0)

    def _active(self) -> list[Any]:
        return list(self.spark.streams.active)

    def run(self) -> int:
        from bench.runtime.spark.session import progress_listener

        progress_listener(self.spark).watch_all(self.on_progress)
        self.thread.start()
        started = time.monotonic()
        while not self.stop.is_set():
            self._script_failed()
            active = self._active()
            if active:
                break
            if not self.thread.is_alive():
                # it may have raised between the check above and now: its error is set
                # before it ends, and is the better answer (seen once in CI's own-job test)
                self._script_failed()
                raise JobScriptError("the script ended without starting a streaming query "
                                     "(spark.readStream ... writeStream ... start())")
            if time.monotonic() - started > self.start_timeout_s:
                raise JobScriptError(f"the script started no streaming query within {self.start_timeout_s:.0f} s")
            self.stop.wait(POLL_S)
        else:
            return 0
        from bench.runtime.spark.sut_query import wait_ready

        try:
            wait_ready(active[0], self.stop, max(1.0, self.start_timeout_s - (time.monotonic() - started)))
        except RuntimeError:
            pass  # a query that failed at once is reported below, with the script's view of it
        self.emit({"event": "started", "id": str(active[0].id), "queries": len(active), "job": self.script})
        last_probe = 0.0
        while not self.stop.is_set():
            self._script_failed()
            self._check_queries()
            now = time.monotonic()
            if self.read_check.read == 0 and now - last_probe >= PROBE_EVERY_S:
                last_probe = now
                records = self.records_in_topic()
                if self.read_check.observe(now, records):
                    raise JobScriptError(
                        f"the job read nothing from {ENV_INPUT} ({self.input_topic}) in "
                        f"{self.read_check.timeout_s:.0f} s while it held {records} records; does it read "
                        f"spark.readStream.format('kafka') with subscribe={ENV_INPUT} and "
                        f"kafka.bootstrap.servers={ENV_BOOTSTRAP}?"
                    )
            self.stop.wait(POLL_S)
        return 0

    def _check_queries(self) -> None:
        """A failed query leaves ``spark.streams.active``; its exception is kept by the
        query object, so every query ever seen is asked."""
        active = self._active()
        for query in active:
            self.seen.setdefault(str(query.id), query)
        for query in self.seen.values():
            exc = query.exception()
            if exc is not None:
                name = query.name or str(query.id)
                raise JobScriptError(f"query {name} failed: {describe_exception(exc, self.script)}",
                                     before_input=self.read_check.read == 0)
        if not active and not self.stop.is_set():
            raise JobScriptError("the script's streaming queries all stopped", before_input=self.read_check.read == 0)

    def stop_queries(self) -> None:
        for query in self._active():
            try:
                query.stop()
            except Exception:  # noqa: BLE001 - stopping on the way out; nothing to report to
                pass


def _records_counter(bootstrap: str, topic: str) -> tuple[Callable[[], int], Callable[[], None]]:
    """A function counting the records in ``topic`` (0 while it cannot be read), and its closer."""
    from bench.runtime.kafka.source import EndOffsetProbe

    probe = EndOffsetProbe(bootstrap)

    def count() -> int:
        try:
            return sum(end - low for low, end in probe.offsets(topic, timeout=5.0).values())
        except Exception:  # noqa: BLE001 - a failed probe only delays the check
            return 0

    return count, probe.close


def run(spec: Mapping[str, Any], emit: Emit) -> int:
    """Run the job of ``spec`` (the Spark driver's spec, ``params.job`` naming the script)."""
    from bench.runtime.spark.session import build_session, progress_listener, stop_session

    params = dict(spec.get("params") or {})
    script = str(params.get("job") or "")
    if not script:
        emit({"event": "error", "message": "the job use case needs its script: bench run --job PATH.py", "job": True})
        return 1
    instances = int(spec.get("instances") or 1)
    master = spec.get("spark_master") or f"local[{instances}]"
    bootstrap = str(spec["bootstrap_servers"])
    topics = dict(spec["topics"])
    checkpoint = str(spec["checkpoint_dir"])
    group_id = str(spec.get("group_id") or "bench-sut")
    conf = {"spark.sql.streaming.checkpointLocation": checkpoint, **dict(spec.get("conf") or {})}
    spark = build_session(master, f"bench-job-{Path(script).stem}", instances, conf)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    from bench.runtime.kafka.security import current as kafka_security

    kafka_options = kafka_security().spark()
    os.environ.update(job_environment(bootstrap, topics, checkpoint))
    os.environ[ENV_KAFKA_OPTIONS] = json.dumps(kafka_options, sort_keys=True)
    argv = job_argv(str(params.get("jobArgs") or ""), {
        "bootstrap": bootstrap, "input": str(topics["input"]), "output": str(topics.get("output", "")),
        "checkpoint": checkpoint, "group": group_id})
    redirect_checkpoints(checkpoint)
    inject_kafka_options(kafka_options)
    progress_listener(spark).committer.watch(topics["input"], bootstrap, group_id)
    count, close_probe = _records_counter(bootstrap, topics["input"])
    supervisor = JobSupervisor(
        spark, script, topics["input"], emit, stop,
        float(params.get("startTimeoutS") or 90.0), float(params.get("readTimeoutS") or 120.0), count, argv,
    )
    try:
        return supervisor.run()
    except JobScriptError as exc:
        sys.stderr.write(traceback.format_exc())
        emit({"event": "error", "message": str(exc), "job": exc.before_input})
        return 1
    finally:
        supervisor.stop_queries()
        close_probe()
        stop_session(spark)
