"""`bench report` of two runs, opened in a real headless Chromium (Debian's package).

Checked: the page renders with no console error (a page with a deliberate error
shows that the check can fail), its script ran and counted every chart, the DOM holds
the expected table values, and a screenshot is kept next to the report in the test's
tmp dir (pytest keeps the last three runs' tmp dirs).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bench.analysis.commands import bench_add_commands
from bench.cli.commands import cli as bench_cli
from click.testing import CliRunner

from tests.unit.test_report import make_report_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (scripts/test installs Debian's chromium)"),
]

#: console lines Chromium logs with --enable-logging=stderr: "CONSOLE(12)" or "Uncaught ..."
CONSOLE_ERROR = re.compile(r"(Uncaught|CONSOLE\(\d+\).*(error|Error)|:ERROR:CONSOLE)")


def chromium(page: Path, tmp: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with everything that would reach the network switched off."""
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
         "--window-size=1200,2000", *mode, page.as_uri()],
        capture_output=True, text=True, timeout=120, cwd=tmp,
    )


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE_ERROR.search(line)]


def test_the_console_check_catches_a_script_error(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    result = chromium(page, tmp_path, "--dump-dom")
    assert console_errors(result.stderr), result.stderr


def test_report_of_two_runs_renders_without_console_errors(tmp_path: Path) -> None:
    make_report_run(tmp_path / "run-a", 0, capacity=1000, seed=1)
    make_report_run(tmp_path / "run-b", 2, capacity=1000, seed=7, environment=False)
    report = tmp_path / "report.html"
    bench_add_commands(bench_cli)
    out = CliRunner().invoke(bench_cli, ["report", str(tmp_path / "run-a"), str(tmp_path / "run-b"),
                                         "-o", str(report)])
    assert out.exit_code == 0, out.output

    dom = chromium(report, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr
    assert console_errors(dom.stderr) == []
    # The page's own script ran and found every chart: 1 scalability graph + 2 x 12 lag charts.
    assert 'data-rendered="25"' in dom.stdout
    assert "run-a/exp0" in dom.stdout and "run-b/exp2" in dom.stdout
    assert "core-seconds per million records" in dom.stdout
    assert "99.50 %" in dom.stdout  # generator accuracy

    screenshot = tmp_path / "report.png"
    shot = chromium(report, tmp_path, f"--screenshot={screenshot}")
    assert shot.returncode == 0, shot.stderr
    assert console_errors(shot.stderr) == []
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 50_000  # a blank 1200x2000 page compresses to a few kB
