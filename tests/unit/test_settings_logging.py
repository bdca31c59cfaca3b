"""``bench run --log-format`` and ``-v`` change what is logged.

Why: ``-v`` once set the same level as no ``-v`` (WARNING - 10 = INFO), so the "more log
output" it promised never came; ``--log-format json`` is what log shippers read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import structlog
from bench.cli.commands import cli
from bench.config.base import ConfigError
from click.testing import CliRunner


def _logged(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> list[str]:
    """The stderr lines of a ``bench run`` whose preparation logs one debug and one info line."""
    def logging_then_refused(registry: Any, opts: Any) -> Any:
        log = structlog.get_logger("bench.test")
        log.debug("a debug line", where="prepare")
        log.info("an info line", where="prepare")
        raise ConfigError("stop here")

    monkeypatch.setattr("bench.cli.launch.prepare_run", logging_then_refused)
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", *args])
    assert out.exit_code == 2 and "stop here" in out.output
    return [line for line in out.output.splitlines() if "line" in line]


def test_log_format_json_writes_json_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    (line,) = _logged(monkeypatch, ["--log-format", "json"])
    assert json.loads(line)["event"] == "an info line"
    (console,) = _logged(monkeypatch, ["--log-format", "console"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(console)


def test_verbose_adds_the_debug_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not any("a debug line" in line for line in _logged(monkeypatch, []))
    assert any("a debug line" in line for line in _logged(monkeypatch, ["--verbose"]))
    assert any("a debug line" in line for line in _logged(monkeypatch, ["-vv"]))
