"""Platforms behind a typed contract (issue 21, item 3): every built-in platform declares
its options and what it honours; a setting the chosen platform would not apply is refused
in one line naming it (issue 22, item 2); the run's preparation and the engine name no
platform."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from bench.api import PlatformOption
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.plugins import Registry, load_plugins

CORE = Path(__file__).resolve().parents[2] / "core" / "bench"
BUILTIN = ("embedded", "external", "kubernetes")


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_plugins()


def refusal(registry: Registry, **opts: Any) -> str:
    with pytest.raises(ConfigError) as info:
        resolve_run(registry, {"plugin": "calibrated", **opts})
    line = str(info.value)
    assert "\n" not in line
    return line


@pytest.mark.parametrize("name", BUILTIN)
def test_each_builtin_platform_declares_options_and_capabilities(registry: Registry, name: str) -> None:
    from bench.cli.commands import run

    ptype = registry.platforms[name]
    assert ptype.options, f"{name} declares no options"
    flags = {flag for param in run.get_params(click.Context(run)) for flag in param.opts}  # generated from them
    for opt in ptype.options:
        assert opt.help and opt.flag in flags, f"{opt.name}: bench run has no flag {opt.flag!r}"
    assert len({o.name for o in ptype.options}) == len(ptype.options)
    assert "lag" in ptype.capabilities.slis  # every SLO decision so far needs it
    assert ptype.option("bootstrap_servers") is not None


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"platform_name": "kubernetes", "broker": "tansu"}, "--broker: the kubernetes platform does not apply it"),
        ({"platform_name": "kubernetes", "spark_mode": "standalone"}, "--spark-mode: the kubernetes platform"),
        ({"platform_name": "kubernetes", "spark_master": "spark://h:7077"}, "--spark-master: the kubernetes"),
        ({"platform_name": "embedded", "namespace": "bench"}, "--namespace: the embedded platform does not apply"),
        ({"platform_name": "external", "bootstrap_servers": "h:9092", "brokers": 3},
         "--brokers: the external platform does not apply it"),
        ({"platform_name": "kubernetes", "brokers": 3}, "--brokers: the kubernetes platform does not apply it"),
        ({"spark_mode": "yarn"}, "--spark-mode yarn: the embedded platform takes one of local, standalone"),
        ({"platform_name": "external"}, "--platform external needs --bootstrap-servers"),
    ],
)
def test_an_option_the_platform_would_not_apply_is_refused_naming_it(
    registry: Registry, opts: dict[str, Any], message: str
) -> None:
    assert message in refusal(registry, **opts)


def test_the_same_options_pass_on_a_platform_that_reads_them(registry: Registry) -> None:
    prepared = resolve_run(registry, {"plugin": "calibrated", "platform_name": "kubernetes", "namespace": "bench"})
    assert prepared.platform_options["namespace"] == "bench"
    prepared = resolve_run(registry, {"plugin": "calibrated", "broker": "tansu", "metrics_port": 9100})
    assert prepared.platform_options["broker"] == "tansu" and prepared.platform_options["metrics_port"] == 9100
    assert "namespace" not in prepared.platform_options


#: properties each of these patchers reads (a property it does not read is refused first)
PLAIN_PROPERTIES = {"LabelPatcher": {"variableName": "x"}, "EnvVarPatcher": {"variableName": "x", "container": "c"},
                    "ResourceLimitPatcher": {"variableName": "x", "container": "c"}, "ImagePatcher": {"container": "c"}}


@pytest.mark.parametrize("patcher", ["LabelPatcher", "EnvVarPatcher", "ResourceLimitPatcher", "ImagePatcher"])
def test_a_patcher_the_platform_does_not_apply_is_refused_naming_it(
    registry: Registry, tmp_path: Path, patcher: str
) -> None:
    execution = {
        "benchmark": "calibrated",
        "configOverrides": [{"patcher": {"type": patcher, "resource": "sut",
                                         "properties": PLAIN_PROPERTIES[patcher]}, "value": "1"}],
    }
    path = tmp_path / "exec.yaml"
    path.write_text(yaml.safe_dump(execution))
    line = refusal(registry, execution_file=str(path))
    assert line == f"execution.configOverrides[0].patcher: the embedded platform does not apply {patcher}"


def test_job_and_kafka_security_are_refused_where_the_platform_cannot_pass_them(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    ptype = registry.platforms["kubernetes"]
    monkeypatch.setattr(ptype, "capabilities",
                        dataclasses.replace(ptype.capabilities, local_job=False, kafka_security=False))
    line = refusal(registry, plugin=None, job="examples/own_job.py", platform_name="kubernetes")
    assert "not on kubernetes" in line and "embedded or external" in line
    line = refusal(registry, platform_name="kubernetes", kafka_config=["security.protocol=SSL"])
    assert "--kafka-config: the kubernetes platform does not pass Kafka client security" in line


def test_a_resource_type_outside_the_declared_ones_is_refused(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    ptype = registry.platforms["embedded"]
    narrow = dataclasses.replace(ptype.capabilities, resource_types=frozenset({"CoresPerInstance"}))
    monkeypatch.setattr(ptype, "capabilities", narrow)
    assert refusal(registry) == "resource type Instances: the embedded platform varies only CoresPerInstance"


def test_option_values_are_checked_and_name_the_platform() -> None:
    port = PlatformOption("metrics_port", "port", "--metrics-port", int, min=1, max=65535)
    assert port.check("9100", "embedded") == 9100
    assert port.check(None, "embedded") is None
    with pytest.raises(ValueError, match="--metrics-port 70000: the embedded platform takes at most 65535"):
        port.check(70000, "embedded")
    with pytest.raises(ValueError, match="takes a int"):
        port.check("nine", "embedded")


def test_run_help_lists_each_platform_and_its_options() -> None:
    from bench.cli.commands import cli
    from click.testing import CliRunner

    text = CliRunner().invoke(cli, ["run", "--help"]).output
    section = text[text.index("Platforms"):]
    for name in BUILTIN:
        assert re.search(rf"^\s+{name}\b", section, re.M), name
    assert "--namespace" in section and "--broker" in section


#: a platform's own code: it may (must) name itself
PLATFORM_CODE = ("platforms/", "builtin/platforms.py")
#: literals allowed elsewhere, each for a reason: the default `bench run --help` shows
ALLOWED = {("commands.py", "embedded")}


def _modules_without_platform_names() -> list[Path]:
    """Every core module but the platforms' own code."""
    paths = sorted(CORE.rglob("*.py"))
    return [p for p in paths if not any(part in p.relative_to(CORE).as_posix() for part in PLATFORM_CODE)]


@pytest.mark.parametrize("path", _modules_without_platform_names(), ids=lambda p: p.relative_to(CORE).as_posix())
def test_the_core_names_no_platform(registry: Registry, path: Path) -> None:
    """A platform name outside the platform's own code is a branch its contract should hold."""
    names = "|".join(sorted(registry.platforms))
    source = path.read_text()
    literals = [n for n in re.findall(rf"""["']({names})["']""", source) if (path.name, n) not in ALLOWED]
    imports = re.findall(r"^\s*(?:from|import) bench\.(?:platforms\.(?!contract\b|base\b)\w+)\b.*$", source,
                         re.M)
    assert not literals and not imports, f"{path.name} names a platform: {literals or imports}"
