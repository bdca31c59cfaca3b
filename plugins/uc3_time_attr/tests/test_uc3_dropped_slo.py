"""UC3's panes method drops late records where Spark's counter cannot see them, so a run
that judges dropped records with it is refused in one line before it starts."""

from __future__ import annotations

import pytest
from bench.cli.commands import cli
from bench.plugins import load_plugins
from bench_uc3.panes import check_slis
from click.testing import CliRunner


def test_check_slis_refuses_dropped_records_with_panes_only() -> None:
    with pytest.raises(ValueError, match="SLO 'dropped' reads dropped-records"):
        check_slis({"windowMethod": "panes"}, {"lag": "lag", "dropped": "dropped-records"})
    check_slis({"windowMethod": "sliding"}, {"dropped": "dropped-records"})
    check_slis({"windowMethod": "panes"}, {"lag": "lag"})


def test_a_panes_run_with_the_default_dropped_records_slo_is_refused() -> None:
    if "uc3" not in load_plugins().use_cases:
        pytest.skip("use case uc3 not installed")
    accepted = CliRunner().invoke(cli, ["run", "--plugin", "uc3", "--dry-run"])
    assert accepted.exit_code == 0, accepted.output  # sliding by default
    refused = CliRunner().invoke(cli, ["run", "--plugin", "uc3", "--set", "windowMethod=panes", "--dry-run"])
    assert refused.exit_code == 2, refused.output
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and "use case uc3: SLO " in lines[0] and "windowMethod=panes" in lines[0], lines
