"""``bench run --job``: the job use case, its checks, and the driver's supervisor of a script
(on a fake session: the real one is tests/e2e/test_own_job.py)."""

from __future__ import annotations

import json
import sys
import threading
import types
from pathlib import Path
from typing import Any

import pytest
from bench.builtin.job import JOB, check_script, job_params
from bench.config.base import ConfigError
from bench.config.params import declared_params, validate_params
from bench.plugins import load_plugins
from bench.runtime.spark import user_job as job_runner
from bench.runtime.spark.user_job import JobScriptError, JobSupervisor, ReadCheck, describe_exception, rows_read_from

# --------------------------------------------------------------------------- the use case


def test_job_is_a_builtin_spark_use_case_with_the_standard_benchmark() -> None:
    registry = load_plugins()
    job = registry.use_cases["job"]
    assert job is JOB and job.topology is not None and job.generator == "active-power"
    doc = job.default_benchmark()
    assert [t["name"] for t in doc["kafkaConfig"]["topics"]] == ["input", "output"]
    assert doc["loadTypes"][0]["typeName"] == "NumSensors"
    assert doc["resourceTypes"][0]["typeName"] == "Instances"
    assert [s["name"] for s in doc["slos"]] == ["lag-trend"]


def test_job_params_make_the_path_absolute_and_read_the_template(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "job.py").write_text("x = 1\n")
    (tmp_path / "t.json").write_text('{"id": "{key}", "at": {timestamp}}\n')
    monkeypatch.chdir(tmp_path)
    params = job_params("job.py", "t.json")
    assert params == {"job": str(tmp_path / "job.py"), "recordTemplate": '{"id": "{key}", "at": {timestamp}}'}


@pytest.mark.parametrize(
    ("script", "template", "message"),
    [
        (None, None, r"^--job .*missing\.py: no such file$"),
        ("def f(:\n", None, r"^--job .*job\.py: line 1: "),
        ("x = 1\n", '{"id": {key}}', r"^--record-template .*t\.json: not JSON once \{key\} and \{timestamp\}"),
        ("x = 1\n", None, r"^--record-template .*nothing\.json: cannot be read"),
    ],
)
def test_job_params_refuse_in_one_line(tmp_path: Path, script: str | None, template: str | None, message: str) -> None:
    path = tmp_path / ("job.py" if script is not None else "missing.py")
    if script is not None:
        path.write_text(script)
    template_path = tmp_path / ("t.json" if template is not None else "nothing.json")
    if template is not None:
        template_path.write_text(template)
    with pytest.raises(ConfigError, match=message) as info:
        job_params(str(path), str(template_path) if script == "x = 1\n" else None)
    assert "\n" not in str(info.value)


def test_set_job_is_checked_like_the_option(tmp_path: Path) -> None:
    registry = load_plugins()
    declared, complete = declared_params(JOB, registry)
    good = tmp_path / "ok.py"
    good.write_text("pass\n")
    validate_params({"job": str(good), "readTimeoutS": 30}, declared, complete, "--set")
    with pytest.raises(ConfigError, match="--set job=.*: job no such file"):
        validate_params({"job": str(tmp_path / "nope.py")}, declared, complete, "--set")
    with pytest.raises(ValueError, match="is not a file"):
        check_script(str(tmp_path))


# --------------------------------------------------------------------------- pieces of the runner


def test_describe_exception_names_the_script_line_and_cuts_jvm_traces(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("def go():\n    raise ValueError('bad topic\\n\\tat org.apache.spark.Foo')\ngo()\n")
    with pytest.raises(ValueError) as info:
        exec(compile(script.read_text(), str(script), "exec"), {})
    assert describe_exception(info.value, str(script)) == "ValueError: bad topic (job.py, line 2)"
    assert describe_exception(KeyError(), str(script)) == "KeyError"


def test_read_check_counts_from_the_first_records_and_stops_once_read() -> None:
    check = ReadCheck(timeout_s=10)
    assert not check.observe(0.0, 0)  # nothing produced yet (JVM start, loadGenerationDelay)
    assert not check.observe(100.0, 0)
    assert not check.observe(105.0, 50)  # first records at 105
    assert not check.observe(114.0, 500)
    assert check.observe(115.0, 600)
    check.read = 1
    assert not check.observe(200.0, 10_000)


def _progress(*sources: tuple[dict[str, Any], int]) -> Any:
    return types.SimpleNamespace(
        sources=[types.SimpleNamespace(endOffset=json.dumps(end), numInputRows=rows) for end, rows in sources]
    )


def test_rows_read_count_only_sources_reading_the_input_topic() -> None:
    progress = _progress(({"input-x": {"0": 5, "1": 7}}, 12), ({"other": {"0": 3}}, 3), ("rate", 9))
    progress.sources[2].endOffset = "100"  # a rate source's offset is a number, not a topic map
    assert rows_read_from(progress, "input-x") == 12
    assert rows_read_from(progress, "nope") == 0


# --------------------------------------------------------------------------- the supervisor on a fake session


class FakeQuery:
    def __init__(self, streams: FakeStreams, name: str = "q") -> None:
        self.id, self.name, self.streams = f"id-{name}", name, streams
        self.isActive, self.lastProgress = True, None
        self.status = {"isTriggerActive": False, "message": "Waiting for data to arrive"}
        self.failure: Exception | None = None

    def exception(self) -> Exception | None:
        return self.failure

    def stop(self) -> None:
        self.isActive = False
        self.streams.queries.remove(self)

    def awaitTermination(self) -> None:
        while self.isActive:
            threading.Event().wait(0.01)


class FakeStreams:
    def __init__(self) -> None:
        self.queries: list[FakeQuery] = []

    @property
    def active(self) -> list[FakeQuery]:
        return list(self.queries)

    def addListener(self, listener: Any) -> None:
        pass


@pytest.fixture
def fake_spark(monkeypatch: Any) -> Any:
    """A session whose ``streams`` the scripts reach as module ``fake_job_session``."""
    spark = types.SimpleNamespace(streams=FakeStreams(), sparkContext=object())
    module = types.ModuleType("fake_job_session")
    module.spark = spark  # type: ignore[attr-defined]
    module.start = lambda name="q": spark.streams.queries.append(FakeQuery(spark.streams, name)) or  \
        spark.streams.queries[-1]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_job_session", module)
    return spark


def _supervise(spark: Any, tmp_path: Path, body: str, records: int = 0, **kw: Any) -> tuple[JobSupervisor, list]:
    script = tmp_path / "job.py"
    script.write_text("import fake_job_session as s\n" + body)
    events: list[dict[str, Any]] = []
    supervisor = JobSupervisor(
        spark, str(script), "input-x", events.append, kw.pop("stop", threading.Event()),
        kw.pop("start_timeout_s", 5.0), kw.pop("read_timeout_s", 5.0), lambda: records,
    )
    return supervisor, events


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("raise RuntimeError('no such column: valueInW')\n",
         r"the script failed: RuntimeError: no such column: valueInW \(job.py, line 2\)"),
        ("x = 1\n", "the script ended without starting a streaming query"),
        # its own command line, not the driver's (argparse would refuse the spec's path)
        ("import sys\nif sys.argv[1:]:\n    raise SystemExit(f'argv {sys.argv}')\nraise SystemExit(0)\n",
         "the script ended without starting a streaming query"),
        ("import time\ntime.sleep(60)\n", "the script started no streaming query within 1 s"),
    ],
)
def test_a_script_that_fails_before_any_query_is_a_job_error(
    fake_spark: Any, tmp_path: Path, monkeypatch: Any, body: str, message: str
) -> None:
    monkeypatch.setattr(job_runner, "POLL_S", 0.01)
    supervisor, events = _supervise(fake_spark, tmp_path, body, start_timeout_s=1.0)
    with pytest.raises(JobScriptError, match=message) as info:
        supervisor.run()
    assert info.value.before_input and events == []


def test_a_script_that_raises_while_its_queries_are_listed_is_reported_as_failed(
    fake_spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The script raises after the loop last asked for its error and before it sees the
    thread ended: its error, not "ended without starting a streaming query", is the
    answer (the order CI's own-job test once met)."""
    monkeypatch.setattr(job_runner, "POLL_S", 0.01)
    supervisor, _ = _supervise(fake_spark, tmp_path, "import time\ntime.sleep(0.2)\nraise RuntimeError('late')\n")

    def active_after_the_script_ended() -> list[Any]:
        supervisor.thread.join(5)
        return []

    monkeypatch.setattr(supervisor, "_active", active_after_the_script_ended)
    with pytest.raises(JobScriptError, match=r"the script failed: RuntimeError: late"):
        supervisor.run()


def test_a_running_job_reports_started_and_stops_on_request(fake_spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(job_runner, "POLL_S", 0.01)
    stop = threading.Event()
    supervisor, events = _supervise(fake_spark, tmp_path, "s.start().awaitTermination()\n", records=10, stop=stop)
    supervisor.read_check.read = 1  # it has read input
    done: list[int] = []
    runner = threading.Thread(target=lambda: done.append(supervisor.run()))
    runner.start()
    for _ in range(500):
        if events:
            break
        threading.Event().wait(0.01)
    assert events and events[0]["event"] == "started" and events[0]["queries"] == 1
    stop.set()
    runner.join(5)
    supervisor.stop_queries()
    supervisor.thread.join(5)
    assert done == [0] and fake_spark.streams.active == [] and not supervisor.thread.is_alive()


def test_a_job_that_never_reads_the_input_is_a_job_error(fake_spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(job_runner, "POLL_S", 0.01)
    monkeypatch.setattr(job_runner, "PROBE_EVERY_S", 0.01)
    supervisor, _ = _supervise(fake_spark, tmp_path, "s.start()\n", records=123, read_timeout_s=0.2)
    with pytest.raises(JobScriptError, match=r"read nothing from BENCH_INPUT_TOPIC \(input-x\) .* held 123 records"):
        supervisor.run()


def test_a_query_that_fails_after_reading_is_a_fault_not_a_job_error(
    fake_spark: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(job_runner, "POLL_S", 0.01)
    supervisor, _ = _supervise(fake_spark, tmp_path, "q = s.start('sink')\n", records=10)
    supervisor.read_check.read = 5

    def fail_later() -> None:
        threading.Event().wait(0.2)
        query = fake_spark.streams.queries[0]
        query.failure = RuntimeError("OutOfMemoryError")
        query.stop()  # a failed query leaves spark.streams.active

    threading.Thread(target=fail_later).start()
    with pytest.raises(JobScriptError, match="query sink failed: RuntimeError: OutOfMemoryError") as info:
        supervisor.run()
    assert not info.value.before_input


def test_driver_hands_a_spec_with_a_job_to_the_job_runner(monkeypatch: Any, tmp_path: Path) -> None:
    from bench.runtime.spark import driver as spark_driver
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(job_runner, "run", lambda spec, emit: seen.append(dict(spec)) or 0)
    spec = {"use_case": "job", "params": {"job": "/x/own.py"}, "bootstrap_servers": "h:1"}
    assert spark_driver.run(spec, emit=lambda e: None) == 0
    assert seen[0]["params"]["job"] == "/x/own.py" and seen[0]["params"]["readTimeoutS"] == 120.0


def test_checkpoints_the_script_names_move_below_the_experiments(monkeypatch: Any, tmp_path: Path) -> None:
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(DataStreamWriter, "option", lambda self, k, v: calls.append((k, v)) or self)
    monkeypatch.setattr(DataStreamWriter, "options", lambda self, **o: calls.extend(o.items()) or self)
    for attr in ("_bench_option", "_bench_options", "_bench_redirected"):
        monkeypatch.setattr(DataStreamWriter, attr, None, raising=False)
        monkeypatch.delattr(DataStreamWriter, attr)
    job_runner.redirect_checkpoints(str(tmp_path / "exp1"))
    job_runner.redirect_checkpoints(str(tmp_path / "exp2"))  # a second experiment wraps the originals again
    writer: Any = object()
    DataStreamWriter.option(writer, "checkpointLocation", "/tmp/ck/q1")
    DataStreamWriter.option(writer, "topic", "out")
    DataStreamWriter.options(writer, checkpointlocation="file:///data/ck", path="/p")
    assert calls == [("checkpointLocation", str(tmp_path / "exp2/script/tmp/ck/q1")), ("topic", "out"),
                     ("checkpointlocation", str(tmp_path / "exp2/script/file_/data/ck")), ("path", "/p")]
