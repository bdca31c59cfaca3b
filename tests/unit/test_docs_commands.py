"""Every ``bench ...`` command line the docs show parses, and the image's pins agree with
the package's.

Why: a command in a README that click refuses (a renamed option, a choice that no longer
exists) is the first thing a new user types; and deploy/Dockerfile installed a pyspark
other than the pinned one, so the image did not build. The files are read at test
time, so whatever the docs hold when the tests run is checked.

Each line is parsed exactly as ``bench`` parses it, down to its subcommand's options,
without running anything (no dry run needed, nothing written): only a usage error
(click's, exit code 2) fails; a refusal of the content (a file named in the example that
does not exist here) is not the docs' fault.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest
import yaml
from bench.analysis.commands import bench_add_commands
from bench.cli.commands import cli
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands(text: str) -> list[str]:
    """The ``bench ...`` lines of the fenced code blocks, continuation lines joined,
    prompts and comments dropped; lines with placeholders (``<...>``, ``[options]``, ``...``) skipped."""
    found = []
    for block in FENCE.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            line = re.sub(r"\s+#.*$", "", line)
            if not line.startswith("bench ") or any(p in line for p in ("<", "...", "|", "[")):
                continue
            found.append(line.split(" && ")[0].split(" ; ")[0].split(" > ")[0])
    return found


def _argv(line: str) -> list[str] | None:
    try:
        argv = shlex.split(line)[1:]
    except ValueError:
        return None
    return [a for a in argv if not re.fullmatch(r"[A-Z_]+=\S*", a)]


def parse(argv: list[str]) -> None:
    """Parses ``argv`` as ``bench`` would, down to the subcommand, running nothing: raises
    ``click.UsageError`` (exit code 2) for an unknown option or command, a missing or
    surplus argument, or a value its type or choices refuse."""
    bench_add_commands(cli)
    with cli.make_context("bench", list(argv), resilient_parsing=False) as ctx:
        name, command, rest = cli.resolve_command(ctx, ctx.protected_args + ctx.args)
        if command is not None and "--help" not in rest:
            command.make_context(str(name), rest, parent=ctx).close()


ALL = [(path.relative_to(ROOT).as_posix(), line) for path in doc_files() if path.is_file()
       for line in commands(path.read_text(encoding="utf-8"))]


def test_the_docs_show_commands() -> None:
    assert len(ALL) > 10, ALL  # the extraction found the docs' examples


@pytest.mark.parametrize(("doc", "line"), ALL)
def test_every_command_the_docs_show_parses(doc: str, line: str) -> None:
    argv = _argv(line)
    if argv is None:
        pytest.fail(f"{doc}: {line!r} is not a shell command line")
    try:
        parse(argv)
    except click.exceptions.Exit:
        pass  # --help, --version
    except click.BadParameter as exc:
        if not (isinstance(getattr(exc.param, "type", None), click.Path) and "does not exist" in exc.message):
            pytest.fail(f"{doc}: {line}: {exc.format_message()}")  # a path the example names is not here
    except click.UsageError as exc:
        pytest.fail(f"{doc}: {line}: {exc.format_message()}")


@pytest.mark.parametrize("line", ["bench run --plugin uc1 --searchh linear", "bench run --retries many",
                                  "bench analyze results/ --thresold 3", "bench runn"])
def test_a_command_that_does_not_parse_is_found(line: str) -> None:
    with pytest.raises(click.UsageError):
        parse(_argv(line) or [])


def test_a_run_the_docs_show_also_dry_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One shown run end to end without starting anything: the dry run prints the deployment."""
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(cli, ["run", "--plugin", "uc1", "--loads", "2000,8000", "--resources", "1,2",
                                   "--dry-run"])
    assert out.exit_code == 0, out.output


def _pins() -> dict[str, str]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {}
    for dep in doc["project"]["dependencies"]:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^;\s]+).*", dep)
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def test_the_dockerfile_installs_the_pinned_versions() -> None:
    pins = _pins()
    assert "pyspark" in pins
    text = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    args = dict(re.findall(r"^ARG\s+([A-Z_]+)=(\S+)", text, re.M))
    for name, version in re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', text):
        resolved = re.sub(r"\$\{([A-Z_]+)\}", lambda m: args.get(m.group(1), m.group(0)), version)
        if name.lower() in pins:
            assert resolved == pins[name.lower()], f"deploy/Dockerfile installs {name}=={resolved}, " \
                                                   f"pyproject.toml pins {pins[name.lower()]}"


def test_spark_operator_versions_match_the_pinned_pyspark() -> None:
    from bench.platforms.kubernetes.options import DEFAULTS

    pyspark = _pins()["pyspark"]
    assert DEFAULTS["spark_version"] == pyspark
    for path in sorted((ROOT / "deploy").glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "SparkApplication":
                assert str(doc["spec"]["sparkVersion"]) == pyspark, path
