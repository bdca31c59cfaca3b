"""The platform option ``spark_warmup``: checked before anything starts (from the options
or, having no ``bench run`` flag, from ``BENCH_SPARK_WARMUP``), handed to the Spark
driver's spec, recorded for the environment file, and honoured by the driver, which
then skips :func:`bench.runtime.spark.sut_query.warm_up`."""

from __future__ import annotations

import shutil
import types
from typing import Any

import pytest
from bench.api import UseCase
from bench.launch import resolve_run
from bench.model import ConfigError
from bench.platforms import embedded
from bench.platforms.base import ExperimentSpec, TopicSpec
from bench.plugins import Registry, load_plugins

ENV = "BENCH_SPARK_WARMUP"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_plugins()


@pytest.fixture(autouse=True)
def no_inherited_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def resolved(registry: Registry, **opts: Any) -> dict[str, Any]:
    return resolve_run(registry, {"plugin": "uc1", **opts}).platform_options


def refused(registry: Registry, **opts: Any) -> str:
    with pytest.raises(ConfigError) as info:
        resolve_run(registry, {"plugin": "uc1", **opts})
    return str(info.value)


@pytest.mark.parametrize("platform", ["embedded", "external"])
def test_on_by_default_and_off_from_the_options_or_the_environment(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    base = {"platform_name": platform, "bootstrap_servers": "127.0.0.1:9"}
    assert resolved(registry, **base)["spark_warmup"] is True
    assert resolved(registry, **base, spark_warmup=False)["spark_warmup"] is False
    monkeypatch.setenv(ENV, "false")
    assert resolved(registry, **base)["spark_warmup"] is False
    monkeypatch.setenv(ENV, "")  # set but empty: not given
    assert resolved(registry, **base)["spark_warmup"] is True


@pytest.mark.parametrize("raw", ["maybe", "0", "off-ish", "[false]"])
def test_a_malformed_environment_value_is_refused_naming_the_variable(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(ENV, raw)
    line = refused(registry)
    assert line.startswith(f"{ENV} ") and "takes true or false" in line and "\n" not in line, line


def test_a_non_bool_option_value_is_refused_naming_the_option(registry: Registry) -> None:
    line = refused(registry, spark_warmup="false")  # a string would be truthy: the warm-up would run
    assert line.startswith("spark_warmup false:") and "takes true or false" in line, line


def test_the_kubernetes_platform_refuses_it(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "false")
    line = refused(registry, platform_name="kubernetes", bootstrap_servers="127.0.0.1:9")
    assert line.startswith(f"{ENV}: the kubernetes platform does not apply it"), line


def test_a_platform_built_directly_refuses_a_non_bool_before_it_opens() -> None:
    with pytest.raises(ValueError, match="spark_warmup 'no': takes true or false"):
        embedded.EmbeddedPlatform({"spark_warmup": "no"})


def spark_experiment() -> ExperimentSpec:
    return ExperimentSpec(
        experiment_id="warm1",
        use_case=UseCase(name="uc1", description="test", default_benchmark=dict),
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
