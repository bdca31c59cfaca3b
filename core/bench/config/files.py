"""Reading the files a user names (Benchmark and Execution YAML, properties, scripts,
templates), safely and with one line naming the file when a file is not what it claims.

Why one module: every reader used to trust the file (``open().read()`` then
``yaml.safe_load``), so a UTF-16 file, a binary one, a 3 GB one, a FIFO, YAML nested
ten thousand levels deep or an alias bomb ended in a traceback, a hang or all the
memory. Here, in this order, before anything is parsed:

* the path is a regular file (not a folder, FIFO or device: reading one may never end);
* its size is at most :data:`MAX_BYTES` (from ``stat``, and the read stops there too);
* it is UTF-8 text: no byte-order mark (a UTF-16/UTF-32 file, or UTF-8 with a BOM,
  gets the fix to save it as UTF-8), no NUL or other control bytes, valid UTF-8.

YAML is then scanned as a stream of events (PyYAML's parser keeps its own stack, so
this cannot overflow Python's) for nesting deeper than :data:`MAX_DEPTH`, aliases that
refer to themselves, and more than :data:`MAX_NODES` values once aliases are expanded
(the "billion laughs"); only then is it composed and constructed, refusing a mapping
that holds the same key twice (PyYAML keeps the last one silently, which hides a typo
or a merge gone wrong).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from bench.config.base import ConfigError

#: the largest configuration file read (a Benchmark with a dozen manifests is ~50 kB)
MAX_BYTES = 1024 * 1024
#: the deepest nesting of mappings and lists in a YAML file (Kubernetes manifests: ~10)
MAX_DEPTH = 64
#: the most values (scalars, mappings, lists) a YAML file may hold once aliases expand
MAX_NODES = 200_000

_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\xef\xbb\xbf", "UTF-8 with a byte-order mark"),
    (b"\xfe\xff", "UTF-16"),
    (b"\xff\xfe", "UTF-16"),
)
#: control characters text may hold: tab, line feed, carriage return
_TEXT_CONTROLS = frozenset("\t\n\r")


class FileError(ConfigError):
    """A file named by the user that cannot be used as it is; the message names it."""


def _label(path: str | Path, what: str) -> str:
    return f"{what} {path}" if what else str(path)


def read_bytes(path: str | Path, what: str = "", max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes; a :class:`FileError` unless it is a regular file of at most
    ``max_bytes``. ``what`` is how the user named it (``--execution``), for the message."""
    label = _label(path, what)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):  # the link is there, what it names is not
            raise FileError(f"{label}: a symbolic link to {os.readlink(path)!r}, which does not exist") from None
        raise FileError(f"{label}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileError(f"{label}: a loop of symbolic links (one names another that names it again)") from None
        raise FileError(f"{label}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileError(f"{label}: is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise FileError(f"{label}: is not a regular file (a pipe or device is not read)")
    if info.st_size > max_bytes:
        raise FileError(f"{label}: {info.st_size:,} bytes is more than the {max_bytes:,} a file of this kind "
                        "may have; is it the right file?")
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise FileError(f"{label}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise FileError(f"{label}: more than the {max_bytes:,} bytes a file of this kind may have")
    return data


def decode_text(data: bytes, label: str) -> str:
    """UTF-8 text without a byte-order mark or control bytes, else a :class:`FileError`
    that says which encoding the bytes look like and how to fix it."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise FileError(f"{label}: is {encoding}, not plain UTF-8; save it as UTF-8 without a byte-order mark")
    if b"\x00" in data:
        raise FileError(f"{label}: holds NUL bytes (a binary file, or UTF-16/UTF-32 text); "
                        "save it as UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileError(f"{label}: is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                        "save it as UTF-8") from None
    for number, line_text in enumerate(text.splitlines(), 1):
        bad = next((c for c in line_text if (ord(c) < 32 or ord(c) == 127) and c not in _TEXT_CONTROLS), None)
        if bad is not None:
            raise FileError(f"{label}: control character 0x{ord(bad):02x} on line {number}: "
                            "a binary file, not text")
    return text


def read_text(path: str | Path, what: str = "", max_bytes: int = MAX_BYTES) -> str:
    """A user's text file: regular, at most ``max_bytes``, UTF-8 (see the module doc)."""
    return decode_text(read_bytes(path, what, max_bytes), _label(path, what))


# --------------------------------------------------------------------------- YAML


class _DuplicateKey(yaml.constructor.ConstructorError):
    pass


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (merge keys excepted)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: the base class says so
                    continue
                if first is not None:
                    raise _DuplicateKey(
                        None, None,
                        f"key {key!r} is given twice (lines {first.start_mark.line + 1} and "
                        f"{key_node.start_mark.line + 1}); keep one",
                        key_node.start_mark)
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's message on one line: the problem and where (its own text spans lines)."""
    problem = getattr(exc, "problem", None) or str(exc)
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None and not isinstance(
        exc, _DuplicateKey) else ""
    return " ".join(f"{problem}{where}".split())


def _line(event: yaml.Event) -> int | str:
    return event.start_mark.line + 1 if event.start_mark is not None else "?"


def check_yaml_shape(text: str, label: str) -> None:
    """Depth, self-referring aliases and the expanded size, from the event stream alone."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [count, anchor] per open mapping or list
    total = 0
    aliases = False

    def add(n: int) -> None:
        nonlocal total
        if stack:
            stack[-1][0] += n
        else:
            total += n
        if total + sum(frame[0] for frame in stack) > MAX_NODES:
            how = " once its aliases (*name) are expanded" if aliases else ""
            raise FileError(f"{label}: holds more than {MAX_NODES:,} values{how}; a configuration needs "
                            "far fewer")

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise FileError(f"{label}: nested more than {MAX_DEPTH} levels deep (line {_line(event)}); "
                                "a configuration needs far fewer")
            stack.append([1, event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            count, anchor = stack.pop()
            if anchor is not None:
                sizes[anchor] = count
            add(count)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                sizes[event.anchor] = 1
            add(1)
        elif isinstance(event, yaml.AliasEvent):
            aliases = True
            if event.anchor in {frame[1] for frame in stack}:
                raise FileError(f"{label}: alias *{event.anchor} (line {_line(event)}) refers to "
                                "the value that holds it: a value cannot contain itself")
            add(sizes.get(event.anchor or "", 1))


def parse_yaml(text: str, label: str) -> Any:
    """YAML text, checked by :func:`check_yaml_shape`, keys unique; errors name ``label``."""
    try:
        check_yaml_shape(text, label)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise FileError(f"{label}: is not valid YAML: {yaml_problem(exc)}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, FileError):
            raise
        # a well-formed scalar PyYAML cannot build, e.g. a date in a thirteenth month
        raise FileError(f"{label}: a value cannot be read: {' '.join(str(exc).split())}") from None


def parse_yaml_all(text: str, label: str) -> list[Any]:
    """Every document of a YAML stream (``---`` between them), with the checks of
    :func:`parse_yaml`; a ConfigMap key may hold several manifests."""
    try:
        check_yaml_shape(text, label)
        return [doc for doc in yaml.load_all(text, Loader=_StrictLoader) if doc is not None]  # noqa: S506
    except yaml.YAMLError as exc:
        raise FileError(f"{label}: is not valid YAML: {yaml_problem(exc)}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, FileError):
            raise
        raise FileError(f"{label}: a value cannot be read: {' '.join(str(exc).split())}") from None


def load_yaml(path: str | Path, what: str = "") -> Any:
    """A user's YAML file (Benchmark, Execution), read and parsed safely; one written in
    the reference's schema comes back in bench's shape (bench.config.reference)."""
    from bench.config.reference import as_bench

    return as_bench(parse_yaml(read_text(path, what), _label(path, what)), Path(path),
                    lambda file, where: parse_yaml(read_text(file, where), f"{where} {file}"))


def parse_yaml_value(text: str, label: str) -> Any:
    """A value typed on the command line (``--set k=V``) read as YAML; text that is not
    YAML stays the text, but a bomb, a too deep value or a key given twice is refused."""
    try:
        check_yaml_shape(text, label)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as exc:
        raise FileError(f"{label}: {yaml_problem(exc)}") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, FileError):
            raise
        return text
