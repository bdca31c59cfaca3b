"""Resource sets and kinds of the wrong shape end in one line naming the place, never a
traceback; a flat file that states its kind parses, one that states the other is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.cli.commands import cli
from bench.patchers.common import PatcherError
from bench.patchers.configmap import patch_yaml
from click.testing import CliRunner

CASES = {
    "configmap-number": ("sut:\n  resources:\n  - configMap: 5\n", "sut.resources[0].configMap: expected a mapping"),
    "filesystem-list": ("sut:\n  resources:\n  - fileSystem: [a]\n", "sut.resources[0].fileSystem: expected a mapping"),
    "resources-number": ("sut:\n  resources: 5\n", "sut.resources"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resource_sets_of_the_wrong_shape_are_one_line(name: str, tmp_path: Path) -> None:
    body, expected = CASES[name]
    path = tmp_path / "bench.yaml"
    path.write_text("kind: Benchmark\nname: x\n" + body)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert expected in result.output


def test_a_flat_file_may_state_its_kind_and_the_wrong_kind_is_named(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("kind: Benchmark\nname: x\n")
    out = CliRunner().invoke(cli, ["validate", str(path)]).output
    assert "kind: unknown field" not in out and "loadTypes" in out
    path.write_text("kind: Execution\nname: x\n")
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--benchmark", str(path)]).output
    assert "kind is 'Execution'" in out and "Benchmark" in out


def test_a_configmap_file_with_a_key_twice_is_a_patcher_error() -> None:
    with pytest.raises(PatcherError, match="twice|duplicate"):
        patch_yaml("a: 1\na: 2\n", "b", 3)
    assert "b: 3" in patch_yaml("a: 1\n", "b", 3)
