"""Every input is checked before any process starts (issue 15, item 4).

Each bad input ends with exit code 2 and one line naming the option or key and the
value; the platform factory is replaced by one that fails the test if reached, so a
check that lets a bad value through cannot hide behind a later failure.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from bench.api import ParamSpec, UseCase
from bench.builtin.platforms import check_java
from bench.cli import launch
from bench.cli.commands import cli
from bench.config.model import ConfigError, parse_execution
from bench.plugins import Registry, load_plugins
from click.testing import CliRunner, Result


@pytest.fixture()
def no_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any platform being created fails the test: validation must stop the run first."""
    registry = load_plugins()

    def forbidden(options: Mapping[str, Any], registry: Any) -> Any:
        raise AssertionError("a platform was created for an invalid run")

    for platform in registry.platforms.values():
        monkeypatch.setattr(platform, "create", forbidden)
        if platform.check_host is check_java:  # a host check, not what these tests check
            monkeypatch.setattr(platform, "check_host", None)
    monkeypatch.setattr("bench.cli.commands._registry", lambda: registry)
    yield


def bench_run(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["run", "--results", str(tmp_path / "results"), *args])


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("bench: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--plugin", "calibrated", "--set", "capacityy=500"],
         "--set capacityy=500: unknown parameter 'capacityy'; did you mean 'capacity'?"),
        (["--plugin", "calibrated", "--set", "capacity=-5"], "--set capacity=-5: capacity must be at least 1"),
        (["--plugin", "uc2", "--set", "windowSizeMs=abc"],
         "--set windowSizeMs=abc: windowSizeMs must be a whole number"),
        (["--plugin", "uc3", "--set", "windowMethod=pane"], "windowMethod must be one of sliding, panes"),
        (["--plugin", "uc1", "--set", "sink=mongo"], "sink must be one of log, sqlite"),
        (["--plugin", "uc4", "--set", "feedback=maybe"], "feedback must be true or false"),
        (["--plugin", "uc4", "--set", "nestedGroup=3"], "did you mean 'nestedGroups'?"),
        (["--plugin", "uc1", "--set", "lingerMs=-1"], "lingerMs must be at least 0"),  # the generator's
        (["--plugin", "uc1", "--set", "generatr.periodMs=500"], "no deployment object 'generatr'; did you mean"),
        (["--plugin", "uc1", "--set", "generator.periodMss=500"],
         "has no field spec.periodMss; did you mean 'periodMs'"),
        (["--plugin", "uc1", "--set", "generator.periodMs=abc"], "periodMs must be a number"),
        (["--plugin", "uc1", "--set", "generator.sensors=-3"], "sensors must be at least 1"),
        (["--plugin", "uc1", "--set", "sut.params.sinkk=log"], "unknown parameter 'sinkk'"),
        (["--plugin", "uc1", "--threshold", "-1"], "--threshold -1: must be a positive number"),
        (["--plugin", "uc1", "--threshold-rel-to-load", "0"], "--threshold-rel-to-load 0: must be a positive"),
        (["--plugin", "uc1", "--threshold-rel-to-rate", "0"], "--threshold-rel-to-rate 0: must be a positive"),
        (["--plugin", "uc1", "--threshold-rel-to-rate", "2"], "must be at most 1"),
        (["--plugin", "uc1", "--trigger", "-1"], "--trigger -1: must be a non-negative number"),
        (["--plugin", "uc1", "--duration", "inf"], "--duration inf: must be a positive number"),
        (["--plugin", "uc1", "--warmup", "-5"], "--warmup -5: must be a non-negative number"),
        (["--plugin", "uc1", "--repetitions", "0"], "--repetitions 0: must be at least 1"),
        (["--plugin", "uc1", "--sample-interval", "500"], "sampleInterval (500 s) must leave two samples"),
        (["--plugin", "uc1", "--duration", "60", "--warmup", "60"], "warmup (60 s) must be shorter than duration"),
        (["--plugin", "uc1", "--loads", "1000,nan"], "execution.load.loadValues.1"),
        (["--plugin", "uc1", "--metrics-port", "70000"], "--metrics-port 70000: must be a port number"),
        (["--plugin", "uc1", "--bootstrap-servers", "localhost"], "'localhost' is not HOST:PORT"),
        (["--plugin", "uc1", "--platform", "external"], "--platform external needs --bootstrap-servers"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(no_start: None, tmp_path: Path, args: list[str], message: str) -> None:
    line = one_line_error(bench_run(tmp_path, *args))
    assert message in line
    assert not (tmp_path / "results").exists()  # refused before the results folder was made


@pytest.mark.parametrize(
    "args",
    [
        ["--plugin", "calibrated", "--set", "capacity=500", "--set", "generator.periodMs=500"],
        ["--plugin", "uc3", "--set", "timeAttribute=24", "--set", "windowSizeMs=60000"],
        ["--plugin", "uc4", "--set", "feedback=false", "--set", "generator.maxPerInstance=100000"],
        ["--plugin", "uc2", "--set", "windowSizeMs=60000.0", "--threshold", "100", "--trigger", "0"],
    ],
)
def test_good_input_passes(no_start: None, tmp_path: Path, args: list[str]) -> None:
    result = bench_run(tmp_path, *args, "--dry-run")
    assert result.exit_code == 0, result.output


def test_yaml_params_are_checked(no_start: None, tmp_path: Path) -> None:
    execution = tmp_path / "exec.yaml"
    execution.write_text("params: {windowSizeMss: 1000}\n")
    line = one_line_error(bench_run(tmp_path, "--plugin", "uc2", "--execution", str(execution)))
    assert ("execution.params windowSizeMss=1000: unknown parameter 'windowSizeMss'; "
            "did you mean 'windowSizeMs'?") in line


def test_yaml_key_typo_names_the_nearest_field(no_start: None, tmp_path: Path) -> None:
    execution = tmp_path / "exec.yaml"
    execution.write_text("execution: {duraton: 60}\n")
    line = one_line_error(bench_run(tmp_path, "--plugin", "uc1", "--execution", str(execution)))
    assert "execution.execution.duraton: unknown field; did you mean 'duration'?" in line


@pytest.mark.parametrize("doc", ["load: {loadValues: [true]}\n", "execution: {repetitions: true}\n",
                                 "execution: {duration: .inf}\n", "execution: {earlyStop: 1}\n"])
def test_bool_and_infinity_are_not_numbers(no_start: None, tmp_path: Path, doc: str) -> None:
    execution = tmp_path / "exec.yaml"
    execution.write_text(doc)
    one_line_error(bench_run(tmp_path, "--plugin", "uc1", "--execution", str(execution)))


def test_invalid_yaml_is_one_line(no_start: None, tmp_path: Path) -> None:
    execution = tmp_path / "exec.yaml"
    execution.write_text("load: [1,\n  - x: : y\n")
    line = one_line_error(bench_run(tmp_path, "--plugin", "uc1", "--execution", str(execution)))
    assert "is not valid YAML" in line and "line" in line


def test_undeclared_use_case_accepts_any_key() -> None:
    """Third-party use cases that predate ParamSpec keep working: no key is unknown."""
    registry = load_plugins()
    registry.use_cases["calibrated"] = UseCase(
        name="calibrated", description="", default_benchmark=registry.use_cases["calibrated"].default_benchmark,
        sut_process="x",
    )
    prepared = launch.resolve_run(registry, {"plugin": "calibrated", "sets": ["anything=1"]})
    assert prepared.params == {"anything": 1}


def test_param_spec_checks() -> None:
    assert ParamSpec("n", int, min=1).check("60000") is None  # ParamPatchers write strings
    for spec, value in [(ParamSpec("n", int), True), (ParamSpec("n", float), "nan"), (ParamSpec("n", int), 2.5),
                        (ParamSpec("s", str), ["a"]), (ParamSpec("n", float, max=1), 2)]:
        with pytest.raises(ValueError):
            spec.check(value)


# --------------------------------------------------------------------------- environment


def test_unwritable_results_folder(no_start: None, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--results", str(blocker / "sub")])
    assert "--results" in one_line_error(result) and "cannot write there" in result.output


def test_metrics_port_in_use(no_start: None, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(bench_run(tmp_path, "--plugin", "calibrated", "--metrics-port", str(port)))
    assert f"--metrics-port {port}: cannot listen there" in line


def test_missing_kubeconfig(no_start: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("BENCH_K8S_KUBECONFIG", raising=False)
    monkeypatch.delenv("BENCH_K8S_API_URL", raising=False)
    line = one_line_error(bench_run(tmp_path, "--plugin", "uc1", "--platform", "kubernetes",
                                    "--bootstrap-servers", "kafka:9092"))
    assert "no kubeconfig" in line and str(tmp_path / "none") in line
    # the dry run renders manifests only, and needs no cluster
    assert bench_run(tmp_path, "--plugin", "uc1", "--platform", "kubernetes", "--dry-run").exit_code == 0


def test_external_platform_factory_refuses_without_servers() -> None:
    registry: Registry = load_plugins()
    with pytest.raises(ConfigError.__mro__[1]):  # UserError
        registry.platforms["external"].create({"bootstrap_servers": None}, registry)


# --------------------------------------------------------------------------- validate == run


def test_validate_and_run_apply_the_same_defaults(tmp_path: Path) -> None:
    """An execution without loadType or duration is valid for both, with the run's
    defaults (UC1's own main-job execution over the laptop defaults); one that only
    those defaults make invalid fails both."""
    from bench_uc1 import MAIN_JOB

    duration = MAIN_JOB["execution"]["duration"]
    registry = load_plugins()
    partial = tmp_path / "exec.yaml"
    partial.write_text("benchmark: uc1\nload: {loadValues: [1000]}\nexecution: {warmup: 150}\n")
    message = rf"warmup \(150 s\) must be shorter than duration \({duration} s\)"
    with pytest.raises(ConfigError, match=message):
        launch.validate_file(registry, partial, None)
    with pytest.raises(ConfigError, match=message):
        launch.prepare_run(registry, {"plugin": "uc1", "execution_file": str(partial), "dry_run": True})
    partial.write_text("benchmark: uc1\nload: {loadValues: [1000]}\n")
    assert "valid execution" in launch.validate_file(registry, partial, None)
    prepared = launch.prepare_run(registry, {"plugin": "uc1", "execution_file": str(partial), "dry_run": True})
    assert prepared.execution.execution.duration == duration


def test_validate_checks_params_like_run(tmp_path: Path) -> None:
    bad = tmp_path / "exec.yaml"
    bad.write_text("benchmark: uc2\nload: {loadValues: [1000]}\nparams: {windowSizeMs: abc}\n")
    result = CliRunner().invoke(cli, ["validate", str(bad)])
    assert result.exit_code == 2 and "windowSizeMs must be a whole number" in result.output


def test_model_alone_refuses_bool_loads() -> None:
    with pytest.raises(ConfigError, match="true is not a number"):
        parse_execution({"benchmark": "b", "load": {"loadType": "L", "loadValues": [True]},
                         "resources": {"resourceType": "R", "resourceValues": [1]}})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--plugin", "uc1", "--duration", "abc"], "'abc' is not a valid float. (see "),
        (["run"], "bench run needs --plugin NAME"),  # or --job: neither is required alone
        (["nope"], "No such command 'nope'"),
    ],
)
def test_click_usage_errors_are_one_line(args: list[str], message: str) -> None:
    """click's own refusals (a float that is none, a missing option) also end in one line."""
    line = one_line_error(CliRunner().invoke(cli, args))
    assert message in line
