"""A key inside a YAML or Java-properties file held by a ConfigMap."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from bench.api import Manifest
from bench.patchers.common import PatcherError, decorate, each, plain, require, text


def _file(obj: Manifest, file_name: str) -> tuple[dict[str, Any], str]:
    data = obj.setdefault("data", {})
    if data is None:
        data = obj["data"] = {}
    return data, str(data.get(file_name, "") or "")


def patch_yaml(content: str, key: str, value: Any) -> str:
    # a ConfigMap's file is user input like any benchmark file: the same checks (depth,
    # alias bombs, a key given twice) apply before it is patched
    from bench.config.files import FileError, parse_yaml

    try:
        loaded = parse_yaml(content, "the ConfigMap's YAML file") if content.strip() else {}
    except FileError as exc:
        raise PatcherError(str(exc)) from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise PatcherError("the YAML file does not hold a mapping")
    loaded[key] = plain(value)
    return yaml.safe_dump(loaded, default_flow_style=False, sort_keys=False)


_ASSIGN = re.compile(r"^(\s*)([^#!\s=:][^=:]*?)(\s*[=:]\s*)(.*)$")


def patch_properties(content: str, key: str, value: Any) -> str:
    """Replace ``key``'s line (``key=value`` or ``key: value``), keeping comments and order;
    append the key if it is absent."""
    lines = content.splitlines()
    rendered = text(value)
    found = False
    for i, line in enumerate(lines):
        match = _ASSIGN.match(line)
        if match and match.group(2).strip() == key:
            lines[i] = f"{match.group(1)}{key}{match.group(3)}{rendered}"
            found = True
    if not found:
        lines.append(f"{key}={rendered}")
    return "\n".join(lines) + "\n"


def _make(editor: Any) -> Any:
    def patch(objects: list[Manifest], value: Any, properties: Mapping[str, Any]) -> list[Manifest]:
        file_name = str(require(properties, "fileName"))
        key = str(require(properties, "variableName"))
        decorated = decorate(value, properties)

        def apply(obj: Manifest) -> None:
            if obj.get("kind", "ConfigMap") != "ConfigMap":
                return
            data, content = _file(obj, file_name)
            data[file_name] = editor(content, key, decorated)

        return each(objects, apply)

    return patch


config_map_yaml_patcher = _make(patch_yaml)
config_map_properties_patcher = _make(patch_properties)
