"""``bench new-plugin NAME``: write a working plugin package to start from.

The package (template files under ``plugin_template/``, shipped as package data) holds
a use case with its own generator and PySpark query, an SLO type, a load type with its
patcher, tests on bench's testing kit and a pyproject.toml with the entry point. It
installs with ``pip install -e`` and passes its own tests and a one-experiment run
unchanged (tests/e2e/test_new_plugin.py), so that a team starts from something that
runs and changes one part at a time.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from bench.errors import OptionError

#: a plugin name: what ``--plugin`` takes and the entry point's name
NAME_PATTERN = re.compile(r"[a-z][a-z0-9-]{0,39}")
TEMPLATE = "plugin_template"
SUFFIX = ".tmpl"


def names(name: str) -> dict[str, str]:
    """The placeholders of the template for plugin ``name``."""
    if not NAME_PATTERN.fullmatch(name) or name.endswith("-") or "--" in name:
        raise OptionError(f"new-plugin {name!r}: a name is lower-case letters, digits and single dashes, "
                          "starting with a letter (at most 40 characters), e.g. wordcount")
    package = "bench_" + name.replace("-", "_")
    return {"__NAME__": name, "__PKG__": package, "__DIST__": f"bench-{name}"}


def _files(root: Traversable, prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            out += _files(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(SUFFIX):
            out.append((prefix + entry.name.removesuffix(SUFFIX), entry.read_text(encoding="utf-8")))
    return out


def write_plugin(name: str, directory: Path) -> list[Path]:
    """Write the plugin ``name`` into ``directory`` (created; refused when it holds
    anything), returning the files written."""
    values = names(name)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise OptionError(f"new-plugin: {directory} exists and is not an empty folder; choose another --dir")
    written: list[Path] = []
    for relative, text in _files(resources.files("bench.cli").joinpath(TEMPLATE)):
        relative = relative.replace("package/", f"{values['__PKG__']}/", 1)
        if relative.startswith("tests/test_plugin.py"):
            relative = f"tests/test_{values['__PKG__'].removeprefix('bench_')}.py"
        for key, value in values.items():
            text = text.replace(key, value)
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
