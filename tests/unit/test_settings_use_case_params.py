"""``--set`` keys of the use cases and generators: honoured, or refused where bench
overwrites them.

Why: ``keyOffset`` is declared as a generator parameter, but every platform sets it per
generator instance (the index of its first key), so a user's value was accepted and
silently replaced.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from bench.cli.commands import cli
from click.testing import CliRunner


def test_set_key_offset_is_refused_as_bench_sets_it(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--set", "keyOffset=5", "--dry-run"])
    assert out.exit_code == 2 and "--set keyOffset: bench sets each generator instance's first key" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
    path = tmp_path / "execution.yaml"
    path.write_text(yaml.safe_dump({"params": {"keyOffset": 3}}))
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--execution", str(path), "--dry-run"])
    assert out.exit_code == 2 and "execution.params keyOffset" in out.output



def test_set_generator_sensors_is_refused_as_the_load_patcher_sets_it() -> None:
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--set", "generator.sensors=5", "--loads", "100",
                                   "--resources", "1", "--dry-run"])
    assert out.exit_code == 2 and "--set generator.sensors=5" in out.output
    assert "a load or resource patcher sets sensors to 100" in out.output
