"""A plugin author's mistakes end in one line naming the plugin and what is wrong, and
``bench new-plugin``, ``bench plugins --verbose`` and ``bench run --plugin NAME --help``
give a plugin's own words to users."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
from bench.api import Registrar, StreamingPlan, UseCase, hookimpl, windowed_slos
from bench.cli.commands import cli
from bench.plugins import load_plugins
from click.testing import CliRunner


def _plugin(name: str, **hooks: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(module, hook, hookimpl(fn))
    return module


def _error(module: types.ModuleType) -> str:
    registry = load_plugins(extra=[module])
    info = next(p for p in registry.plugins if p.name == module.__name__)
    assert info.error is not None
    return info.error


def _topology(ctx: Any) -> StreamingPlan:
    raise AssertionError("never built here")


def test_the_wrong_kind_is_one_short_line_naming_the_hook_and_both_kinds() -> None:
    wrong = UseCase("oops", "a use case registered as an SLO", dict, topology=_topology)
    error = _error(_plugin("wrong_kind", bench_register_slos=lambda register: register(wrong)))
    assert error == ("TypeError: bench_register_slos registered a UseCase named 'oops', not a SloType "
                     "(register.slo(bench.api.SloType(...)))")


@pytest.mark.parametrize(("fields", "which"), [({}, "neither"), ({"topology": _topology, "sut_process": "m"}, "both")])
def test_a_use_case_must_say_exactly_one_sut(fields: dict[str, Any], which: str) -> None:
    case = UseCase("nosut", "no SUT", dict, **fields)
    error = _error(_plugin("no_sut", bench_register_use_cases=lambda register: register.use_case(case)))
    assert error == f"TypeError: use case 'nosut' has {which} of topology and sut_process; give exactly one"


def test_dry_run_refuses_a_plugin_whose_use_case_has_no_sut(monkeypatch: pytest.MonkeyPatch) -> None:
    case = UseCase("nosut", "no SUT", dict)
    plugin = _plugin("nosut", bench_register_use_cases=lambda register: register.use_case(case))
    monkeypatch.setattr("bench.cli.commands._registry", lambda: load_plugins(extra=[plugin]))
    out = CliRunner().invoke(cli, ["run", "--plugin", "nosut", "--dry-run"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        "bench: error: --plugin nosut: the plugin is installed but broken: TypeError: use case 'nosut' has "
        "neither of topology and sut_process; give exactly one"]


def _raises() -> dict[str, Any]:
    return {"loadTypes": []}["missing"]  # type: ignore[return-value]


def test_a_default_benchmark_that_raises_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    case = UseCase("raises", "its default benchmark raises", _raises, topology=_topology)
    plugin = _plugin("raiser", bench_register_use_cases=lambda register: register.use_case(case))
    monkeypatch.setattr("bench.cli.commands._registry", lambda: load_plugins(extra=[plugin]))
    out = CliRunner().invoke(cli, ["run", "--plugin", "raises", "--dry-run"])
    assert out.exit_code == 2, out.output
    assert out.output.strip().splitlines() == [
        "bench: error: plugin raiser: use case 'raises': default_benchmark() raised KeyError: 'missing' "
        "(-vv shows the traceback)"]
    helped = CliRunner().invoke(cli, ["run", "--plugin", "raises", "--help"])
    assert helped.exit_code == 0 and "Its default benchmark cannot be built: plugin raiser" in helped.output


def test_new_plugin_writes_a_package_and_refuses_bad_names_and_full_folders(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["new-plugin", "word-count", "--dir", str(tmp_path / "p")])
    assert out.exit_code == 0, out.output
    written = sorted(str(p.relative_to(tmp_path / "p")) for p in (tmp_path / "p").rglob("*") if p.is_file())
    assert written == ["README.md", "bench_word_count/__init__.py", "pyproject.toml", "tests/test_word_count.py"]
    pyproject = (tmp_path / "p" / "pyproject.toml").read_text()
    assert 'word-count = "bench_word_count"' in pyproject and "__" not in pyproject
    code = (tmp_path / "p" / "bench_word_count" / "__init__.py").read_text()
    compile(code, "__init__.py", "exec")
    assert 'NAME = "word-count"' in code
    again = runner.invoke(cli, ["new-plugin", "word-count", "--dir", str(tmp_path / "p")])
    assert again.exit_code == 2 and "exists and is not an empty folder" in again.output
    bad = runner.invoke(cli, ["new-plugin", "Word_Count", "--dir", str(tmp_path / "q")])
    assert bad.exit_code == 2 and bad.output.startswith("bench: error: new-plugin 'Word_Count': a name is")


def test_plugins_verbose_lists_every_kind_with_its_description() -> None:
    out = CliRunner().invoke(cli, ["plugins", "--verbose"])
    assert out.exit_code == 0, out.output
    for line in ("    search strategy bracket: ", "    platform embedded: ", "    generator active-power: ",
                 "    patcher ReplicaPatcher: ", "    slo generic: "):
        assert line in out.output
    assert "      load types: NumSensors" in out.output  # a use case's load types


def test_run_help_shows_the_chosen_use_case_in_its_own_words() -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "calibrated", "--help"])
    assert out.exit_code == 0, out.output
    section = out.output.split("Use case calibrated (--plugin calibrated):")[1].split("Platforms")[0]
    assert "Parameters (--set KEY=VALUE):" in section and "Load types (--load-type NAME):" in section
    assert "Resource types (--resource-type NAME):" in section and "Instances (default)" in section
    plain = CliRunner().invoke(cli, ["run", "--help"])
    assert "Use case calibrated" not in plain.output


def test_windowed_slos_scale_the_dropped_ratio_by_rows_per_record() -> None:
    assert windowed_slos()[1]["properties"]["maxRatio"] == 0.01
    assert windowed_slos(rows_per_record=8)[1]["properties"]["maxRatio"] == pytest.approx(0.08)
    with pytest.raises(ValueError, match="rows_per_record"):
        windowed_slos(rows_per_record=0)


def test_registrar_typed_methods_still_take_their_own_kind() -> None:
    found: list[Any] = []
    Registrar(found.append).use_case(UseCase("x", "d", dict, topology=_topology))
    assert [u.name for u in found] == ["x"]
