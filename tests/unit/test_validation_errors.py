"""The runtime's user-facing errors are UserErrors: one line and exit 2 from the CLI,
the traceback only with -vv (issue 15, item 4)."""

from __future__ import annotations

from typing import Any

import pytest
from bench import errors
from bench.cli.commands import cli
from bench.errors import UserError
from bench.platforms.embedded import PlatformError
from bench.platforms.kubernetes.client import ForbiddenError, KubernetesError, ReadinessTimeout
from bench.platforms.kubernetes.manifests import ObjectFailed
from bench.runtime.kafka.apache_kafka import KafkaStartError
from bench.runtime.kafka.broker import BrokerError
from click.testing import CliRunner


@pytest.mark.parametrize(
    "cls", [BrokerError, KafkaStartError, PlatformError, KubernetesError, ForbiddenError, ObjectFailed,
            ReadinessTimeout],
)
def test_environment_errors_are_user_errors(cls: type[Exception]) -> None:
    assert issubclass(cls, UserError)
    # ... and need no entry in the interim list any more
    assert cls.__name__ not in {name for _, name in errors.ENVIRONMENT_ERRORS}


@pytest.mark.parametrize("verbose", [[], ["-vv"]])
def test_a_platform_error_is_one_line(monkeypatch: pytest.MonkeyPatch, verbose: list[str]) -> None:
    def failing(registry: Any, opts: Any) -> Any:
        raise PlatformError("Spark driver exited with code 1")

    monkeypatch.setattr("bench.cli.launch.prepare_run", failing)
    result = CliRunner().invoke(cli, [*verbose, "run", "--plugin", "uc1"])
    assert result.exit_code == 2
    assert "bench: error: Spark driver exited with code 1" in result.output
    assert ("Traceback" in result.output) == bool(verbose)
