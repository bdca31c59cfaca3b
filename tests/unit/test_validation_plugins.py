"""The BENCH_PLUGINS allow-list says what it does: an unknown name is warned about, and
a use case that loses what it needs to the list says so (issue 15, item 4)."""

from __future__ import annotations

import logging

import pytest
from bench.cli.commands import cli
from bench.plugins import load_plugins
from click.testing import CliRunner


def test_unknown_name_is_warned_about(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("BENCH_PLUGINS", "uc1,uc9")
    with caplog.at_level(logging.WARNING, logger="bench.plugins"):
        registry = load_plugins()
    assert "BENCH_PLUGINS names 'uc9', which is no installed plugin" in caplog.text
    assert "uc2" in registry.excluded and "uc1" not in registry.excluded


def test_left_out_use_case_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_PLUGINS", "uc1")
    result = CliRunner().invoke(cli, ["run", "--plugin", "uc2", "--dry-run"])
    assert result.exit_code == 2
    assert "--plugin uc2: installed, but BENCH_PLUGINS leaves it out" in result.output


def test_left_out_slo_plugin_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """uc1's default SLO comes from the lag-trend plugin: leaving it out is reported as
    the cause, not as a bare unknown SLO type."""
    monkeypatch.setenv("BENCH_PLUGINS", "uc1")
    result = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--dry-run"])
    assert result.exit_code == 2
    assert "'lag-trend' is not one of" in result.output and "BENCH_PLUGINS leaves out: lag-trend" in result.output


def test_no_allow_list_excludes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_PLUGINS", raising=False)
    assert load_plugins().excluded == []
