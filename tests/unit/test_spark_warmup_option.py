"""The platform option ``spark_warmup``: given as ``bench run --spark-warmup /
--no-spark-warmup``, checked before anything starts, handed to the Spark driver's spec,
recorded for the environment file, and honoured by the driver, which then skips
:func:`bench.runtime.spark.sut_query.warm_up`."""

from __future__ import annotations

import shutil
import types
from typing import Any

import bench.cli.launch
import pytest
from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.cli.commands import cli
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.platforms import embedded
from bench.plugins import Registry, load_plugins
from click.testing import CliRunner


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_plugins()


def bench_run(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, dict[str, Any]]:
    """``bench run --plugin uc1 --dry-run ARGS``: exit code, output, and the platform
    options the run was prepared with (empty when it was refused)."""
    prepared: dict[str, Any] = {}

    def capture(registry: Registry, run: Any, opts: dict[str, Any]) -> str:
        prepared.update(run.platform_options)
        return ""

    monkeypatch.setattr(bench.cli.launch, "dry_run", capture)
    result = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--bootstrap-servers", "127.0.0.1:9",
                                      "--dry-run", *args])
    return result.exit_code, result.output, prepared


@pytest.mark.parametrize("platform", ["embedded", "external"])
@pytest.mark.parametrize(("args", "expected"),
                         [((), True), (("--spark-warmup",), True), (("--no-spark-warmup",), False)])
def test_on_by_default_and_off_with_the_flag(
    monkeypatch: pytest.MonkeyPatch, platform: str, args: tuple[str, ...], expected: bool
) -> None:
    code, output, options = bench_run(monkeypatch, "--platform", platform, *args)
    assert code == 0, output
    assert options["spark_warmup"] is expected


def test_a_value_after_the_flag_is_refused_in_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    code, output, options = bench_run(monkeypatch, "--spark-warmup=maybe")
    assert code == 2 and not options, output
    (line,) = output.splitlines()
    assert line.startswith("bench: error: ") and "--spark-warmup" in line, line


def test_a_non_bool_option_value_is_refused_naming_the_flag(registry: Registry) -> None:
    with pytest.raises(ConfigError) as info:  # a string would be truthy: the warm-up would run
        resolve_run(registry, {"plugin": "uc1", "spark_warmup": "false"})
    line = str(info.value)
    assert line.startswith("--spark-warmup false:") and "takes true or false" in line, line


@pytest.mark.parametrize("flag", ["--spark-warmup", "--no-spark-warmup"])
def test_the_kubernetes_platform_refuses_it_only_when_given(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    code, output, _ = bench_run(monkeypatch, "--platform", "kubernetes", flag)
    assert code == 2, output
    (line,) = output.splitlines()
    assert line.startswith("bench: error: --spark-warmup: the kubernetes platform does not apply it"), line
    code, output, options = bench_run(monkeypatch, "--platform", "kubernetes")
    assert code == 0 and "spark_warmup" not in options, output


def test_a_platform_built_directly_refuses_a_non_bool_before_it_opens() -> None:
    with pytest.raises(ValueError, match="spark_warmup 'no': takes true or false"):
        embedded.EmbeddedPlatform({"spark_warmup": "no"})


def spark_experiment() -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="warm1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict, spark_conf={"spark.own": "x"}),
        objects=[{"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 1}}],
        topics=[TopicSpec("input", "input-warm1", 1)],
        params={},
        load=10,
        resources=1,
    )


@pytest.mark.parametrize(("options", "expected"), [({}, True), ({"spark_warmup": False}, False)])
async def test_the_option_reaches_the_driver_spec_and_the_environment_record(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], expected: bool
) -> None:
    captured: dict[str, Any] = {}

    async def fake_child(self: Any, run: Any, name: str, module: str, payload: Any) -> Any:
        captured.update(payload, module=module)
        return object()

    async def fake_wait(self: Any, children: Any, timeout: float, what: str) -> None:
        return None

    monkeypatch.setattr(embedded.EmbeddedPlatform, "_start_child", fake_child)
    monkeypatch.setattr(embedded.EmbeddedPlatform, "_wait_started", fake_wait)
    platform = embedded.EmbeddedPlatform({**options, "bootstrap_servers": "127.0.0.1:9"})
    spec = spark_experiment()
    run = platform._run(spec)
    try:
        await platform._start_spark(run, spec, 1, {}, 1.0)
    finally:
        shutil.rmtree(run.dir, ignore_errors=True)
    assert captured["module"] == "bench.runtime.spark.driver"
    assert captured["warmup"] is expected
    assert platform.describe()["spark"]["warmup"] is expected
    # the use case's own Spark settings travel the same way (UseCase.spark_conf)
    assert captured["conf"]["spark.own"] == "x" and platform.describe()["spark"]["conf"] == {"spark.own": "x"}


class FakeQuery:
    """A query that stopped right after it started: the driver's loop ends at once."""

    id = "q1"
    isActive = False

    def exception(self) -> None:
        return None

    def stop(self) -> None:
        return None


@pytest.mark.parametrize(("warmup", "calls"), [(None, 1), (True, 1), (False, 0)])
def test_the_driver_skips_the_warm_up_only_when_the_spec_says_false(
    monkeypatch: pytest.MonkeyPatch, warmup: bool | None, calls: int
) -> None:
    from bench.runtime.spark import driver, session

    warmed: list[str] = []
    use_case = UseCase(name="uc1", description="test", default_benchmark=dict,
                       topology=lambda ctx: types.SimpleNamespace(trigger_seconds=None))
    listener = types.SimpleNamespace(watch=lambda *a: None, unwatch=lambda *a: None)
    monkeypatch.setattr(driver.signal, "signal", lambda *a: None)  # pytest keeps its SIGINT handler
    monkeypatch.setattr(driver, "lookup_use_case", lambda name: use_case)
    monkeypatch.setattr(session, "build_session", lambda *a: object())
    monkeypatch.setattr(session, "progress_listener", lambda spark: listener)
    monkeypatch.setattr(session, "stop_session", lambda spark: None)
    monkeypatch.setattr(driver, "build_context", lambda *a: object())
    monkeypatch.setattr(driver, "start_query", lambda *a: FakeQuery())
    monkeypatch.setattr(driver, "wait_ready", lambda query, stop: None)
    monkeypatch.setattr(driver, "warm_up", lambda *a, **k: warmed.append("warm-up") or 12.5)
    events: list[dict[str, Any]] = []
    spec: dict[str, Any] = {"use_case": "uc1", "bootstrap_servers": "127.0.0.1:9", "topics": {"input": "in-x"},
                            "checkpoint_dir": "/nonexistent/ck", "connector": "python"}
    if warmup is not None:
        spec["warmup"] = warmup
    with pytest.raises(RuntimeError, match="query stopped"):
        driver.run(spec, emit=lambda event: events.append(dict(event)))
    assert len(warmed) == calls
    started = [e for e in events if e.get("event") == "started"]
    assert started and started[0]["warmupSeconds"] == (12.5 if calls else 0.0), events
