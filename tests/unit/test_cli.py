"""The CLI as a user meets it, including a third-party plugin installed as a real
distribution (pip, entry point) and a broken one that must not take the CLI down."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import bench.hookspecs
import pytest
from bench.cli.commands import cli
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site directory with the example and broken plugins pip-installed into it."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(FIXTURES / "example_plugin"), str(FIXTURES / "broken_plugin")],
        check=True, capture_output=True, timeout=300,
    )
    return target


def bench_cmd(args: list[str], site: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **env}
    if site is not None:
        environ["PYTHONPATH"] = os.pathsep.join([str(site), environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "bench.cli.commands", *args], capture_output=True, text=True,
                          env=environ, timeout=120)


def test_third_party_plugin_found_through_entry_point(plugin_site: Path) -> None:
    out = bench_cmd(["plugins"], plugin_site)
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("example "))
    assert "bench-example-plugin 1.2.3" in line
    assert "slos: max-lag" in line and "use cases: passthrough" in line
    broken = next(ln for ln in out.stdout.splitlines() if ln.startswith("broken "))
    assert "BROKEN" in broken and "broken on purpose" in broken
    assert re.search(r"^lag-trend\s+bench-slo-lag-trend", out.stdout, re.M)


def test_plugin_adds_a_cli_command(plugin_site: Path) -> None:
    out = bench_cmd(["example-hello"], plugin_site)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hello from bench-example-plugin"


def test_allow_list_limits_plugins(plugin_site: Path) -> None:
    out = bench_cmd(["plugins"], plugin_site, BENCH_PLUGINS="example")
    names = {ln.split()[0] for ln in out.stdout.splitlines() if ln.strip()}
    assert "example" in names and "broken" not in names and "lag-trend" not in names
    assert "search" in names  # built-ins always load


def test_third_party_use_case_validates_with_its_own_slo(plugin_site: Path) -> None:
    out = bench_cmd(["run", "--plugin", "passthrough", "--dry-run"], plugin_site)
    assert out.returncode == 0, out.stderr
    assert "kind: BenchSut" in out.stdout and "replicas: 1" in out.stdout


def test_unknown_plugin_lists_known_ones() -> None:
    result = CliRunner().invoke(cli, ["run", "--plugin", "uc99"])
    assert result.exit_code == 2
    assert "'uc99' is not a known use case; known:" in result.output
    assert "calibrated" in result.output


def test_run_help_teaches() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert result.exit_code == 0
    for option in ("--loads", "--resources", "--search", "--lower-bound", "--metric", "--threshold-rel-to-load",
                   "--threshold-rel-to-rate",
                   "--set", "--results", "--resume", "--bootstrap-servers", "--spark-master", "Examples:"):
        assert option in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--duration", "10", "--warmup", "20"], "warmup (20 s) must be shorter than duration (10 s)"),
        (["--loads", "100,abc"], "--loads: '100,abc' is not a comma-separated list of numbers"),
        (["--resources", "0"], "must be a positive number"),
        (["--load-type", "Nope"], "--load-type: 'Nope' is not one of MessagePeriod, NumSensors"),
        (["--set", "novalue"], "--set 'novalue': expected KEY=VALUE"),
        (["--threshold", "5", "--threshold-rel-to-load", "0.1"], "exclude each other"),
        (["--platform", "mars"], "--platform: 'mars' is not one of"),
        # the prediction's walk would replace the full search silently
        (["--predict", "--search", "full"], "--predict: the search strategy 'full' measures every"),
    ],
)
def test_bad_options_fail_before_anything_starts(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--results", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written


def test_dry_run_shows_patched_deployment() -> None:
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--loads", "3000", "--resources", "3",
                                      "--set", "capacity=700", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "# load=3000 resources=3" in result.output
    assert "sensors: 3000" in result.output and "replicas: 3" in result.output and "capacity: 700" in result.output


def test_validate_command(tmp_path: Path) -> None:
    good = tmp_path / "exec.yaml"
    good.write_text("benchmark: calibrated\nload: {loadType: NumSensors, loadValues: [1000]}\n"
                    "resources: {resourceType: Instances, resourceValues: [1, 2]}\n")
    result = CliRunner().invoke(cli, ["validate", str(good)])
    assert result.exit_code == 0, result.output
    assert "valid execution" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("benchmark: calibrated\nload: {loadType: NumSensors, loadValues: [1000]}\n"
                   "resources: {resourceType: Instances, resourceValues: [1]}\nexecution: {metric: speed}\n")
    result = CliRunner().invoke(cli, ["validate", str(bad)])
    assert result.exit_code == 2
    assert "execution.execution.metric" in result.output


def test_every_hookspec_is_documented_with_its_signature() -> None:
    doc = (ROOT / "docs" / "hooks.md").read_text()
    hooks = [(n, f) for n, f in inspect.getmembers(bench.hookspecs, inspect.isfunction) if n.startswith("bench_")]
    assert len(hooks) >= 10
    for name, fn in hooks:
        signature = f"{name}({', '.join(inspect.signature(fn).parameters)})"
        assert signature in doc, f"docs/hooks.md lacks {signature}"


def test_user_errors_are_one_line_and_bugs_keep_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.cli.launch
    from bench.errors import UserError

    def user_error(registry: object, opts: object) -> None:
        raise UserError("the broker port is taken")

    monkeypatch.setattr(bench.cli.launch, "prepare_run", user_error)
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated"])
    assert result.exit_code == 2 and result.output == "bench: error: the broker port is taken\n"
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "-vv"])
    assert result.exit_code == 2 and "Traceback" in result.output and "in user_error" in result.output
    result = CliRunner().invoke(cli, ["-v", "run", "--plugin", "calibrated", "-v"])
    assert "Traceback" in result.output

    def bug(registry: object, opts: object) -> None:
        raise NotImplementedError("search strategy 'magic'")

    monkeypatch.setattr(bench.cli.launch, "prepare_run", bug)
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated"])
    assert result.exit_code == 1 and isinstance(result.exception, NotImplementedError)
    assert "bench: error" not in result.output


def test_runner_is_a_library_without_click() -> None:
    """Option parsing lives in bench.config.options, so runner needs neither cli nor click."""
    code = (
        "import sys, bench.cli.launch; "
        "assert not {'bench.cli.commands', 'click'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=60)


def test_options_raise_the_projects_errors() -> None:
    from bench.config.options import parse_sets, split_floats
    from bench.errors import OptionError, UserError

    assert split_floats("loads", "1000, 2000,") == [1000.0, 2000.0] and split_floats("loads", None) is None
    assert parse_sets(["capacity=500", "name=x", "empty="]) == {"capacity": 500, "name": "x", "empty": ""}
    with pytest.raises(OptionError, match="--loads: '1,x'"):
        split_floats("loads", "1,x")
    with pytest.raises(UserError, match="expected KEY=VALUE"):
        parse_sets(["=1"])


def test_a_misspelt_hook_marks_its_plugin_broken_and_duplicates_warn(caplog: pytest.LogCaptureFixture) -> None:
    import types

    from bench.api import Registrar, SloType, SloVerdict
    from bench.hookspecs import hookimpl
    from bench.plugins import load_plugins

    misspelt = types.ModuleType("misspelt")

    @hookimpl
    def bench_register_slo(register: Registrar) -> None:  # the hook is bench_register_slos
        raise AssertionError("never called")

    misspelt.bench_register_slo = bench_register_slo  # type: ignore[attr-defined]
    twin = types.ModuleType("twin")

    @hookimpl
    def bench_register_slos(register: Registrar) -> None:
        register.slo(SloType("generic", "a second generic", lambda s, c: SloVerdict(True)))

    twin.bench_register_slos = bench_register_slos  # type: ignore[attr-defined]
    with caplog.at_level("WARNING", logger="bench.plugins"):
        registry = load_plugins(extra=[misspelt, twin], entry_points_=[])
    info = {p.name: p for p in registry.plugins}
    assert info["misspelt"].error is not None and "bench_register_slo" in info["misspelt"].error
    assert info["twin"].error is None and registry.slos["generic"].description == "a second generic"
    assert "slo 'generic' of plugin twin replaces the one of plugin slos" in caplog.text


def test_exit_code_says_whether_every_experiment_got_a_verdict(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    import bench.cli.launch
    from bench.results.outcome import RunOutcome
    from bench.results.store import ExperimentRecord

    records = [ExperimentRecord(1000, 1, passed=True)]

    async def run_benchmark(registry: object, prepared: object, opts: object) -> RunOutcome:
        return RunOutcome(0, "demand", {1000.0: 1.0, 2000.0: None}, records, tmp_path)

    monkeypatch.setattr(bench.cli.launch, "prepare_run", lambda registry, opts: None)
    monkeypatch.setattr(bench.cli.launch, "run_benchmark", run_benchmark)
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated"])
    assert result.exit_code == 0, result.output
    records.append(ExperimentRecord(2000, 1, passed=False, outcome="error", cause="repetition 1: SUT exited"))
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated"])
    assert result.exit_code == 1, result.output
    assert "error at load=2000 resources=1: repetition 1: SUT exited" in result.output


@pytest.mark.parametrize(("duration", "warmup", "note"), [
    (90.0, 30.0, "note: 90-s experiments (30-s warm-up), shorter than the method's default of 300 s: "
                 "a verdict near an instance's capacity can differ in the long run "
                 "(--duration 300 --warmup 60 measures it)"),
    (300.0, 60.0, None),
    (600.0, 60.0, None),
])
def test_a_table_of_experiments_shorter_than_the_methods_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                  duration: float, warmup: float,
                                                                  note: str | None) -> None:
    """UC1's 5,000 records/s needed 2 instances in 90-s experiments and 1 in 300-s ones
    (docs/measurements-log.md): the printed table says which experiments it is the verdict of."""
    import bench.cli.launch
    from bench.results.outcome import RunOutcome
    from bench.results.store import ExperimentRecord

    async def run_benchmark(registry: object, prepared: object, opts: object) -> RunOutcome:
        return RunOutcome(0, "demand", {1000.0: 1.0}, [ExperimentRecord(1000, 1, passed=True)], tmp_path,
                          duration=duration, warmup=warmup)

    monkeypatch.setattr(bench.cli.launch, "prepare_run", lambda registry, opts: None)
    monkeypatch.setattr(bench.cli.launch, "run_benchmark", run_benchmark)
    result = CliRunner().invoke(cli, ["run", "--plugin", "calibrated"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert ("  " + note in lines) if note else not any("note:" in line for line in lines), result.output
    assert lines[-1].startswith("results: ")  # the note comes before the path, under the table


def test_run_help_names_the_exit_codes_and_retries() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert "--retries" in result.output
    for line in ("0  the run completed and every experiment got a verdict",
                 "1  the run completed, but some experiments ended in error", "2  bad input"):
        assert line in result.output, result.output
