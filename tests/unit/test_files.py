"""Files that are not what they claim end in one line naming the file (issue 23, item 1):
other encodings, a byte-order mark, binary bytes, too large, not a regular file, nested
too deep, an alias bomb, a key given twice; read through ``bench.config.files`` by every reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.config import files
from bench.config.files import FileError, load_yaml, parse_yaml_value, read_text
from bench.config.options import parse_sets
from bench.runtime.kafka.security import KafkaConfigError, KafkaSecurity

BOMB = "\n".join(
    [f"a0: &a0 [{', '.join(['x'] * 9)}]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
) + "\n"

BAD_FILES: list[tuple[bytes, str]] = [
    ("load: 1\n".encode("utf-16"), "UTF-16"),
    ("load: 1\n".encode("utf-16-le"), "NUL bytes"),
    ("load: 1\n".encode("utf-32"), "UTF-32"),
    (b"\xef\xbb\xbfload: 1\n", "byte-order mark"),
    (b"load: \xe9t\xe9\n", "not UTF-8 text (byte 0xe9 on line 1)"),
    (b"load: 1\nx: \x01\x02\n", "control character 0x01 on line 2"),
    (("a: " + "[" * 200 + "]" * 200 + "\n").encode(), "nested more than 64 levels"),
    (BOMB.encode(), "once its aliases (*name) are expanded"),
    (b"a: &x [1, *x]\n", "refers to the value that holds it"),
    (b"load:\n  v: 1\n  v: 2\n", "key 'v' is given twice (lines 2 and 3)"),
    (b"when: 2024-13-45\n", "a value cannot be read"),
    (b"a: [1, 2\n", "is not valid YAML"),
]


@pytest.mark.parametrize(("data", "message"), BAD_FILES)
def test_a_bad_yaml_file_is_one_error_naming_it(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "exec.yaml"
    path.write_bytes(data)
    with pytest.raises(FileError) as info:
        load_yaml(path, "--execution")
    text = str(info.value)
    assert text.startswith(f"--execution {path}: "), text
    assert message in text
    assert "\n" not in text


def test_size_is_capped_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("# pad\n" * 300_000)
    read = []
    monkeypatch.setattr(files, "open", lambda *a, **k: read.append(a), raising=False)
    with pytest.raises(FileError, match="bytes is more than the 1,048,576"):
        load_yaml(path)
    assert read == []  # refused from stat alone


def test_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would wait for a writer for ever
    with pytest.raises(FileError, match="not a regular file"):
        read_text(fifo, "--execution")
    with pytest.raises(FileError, match="is a folder"):
        read_text(tmp_path, "--execution")
    with pytest.raises(FileError, match="no such file"):
        read_text(tmp_path / "missing.yaml", "--execution")


def test_good_yaml_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {x: 1}\nother:\n  <<: *b\n  x: 2\nlist: [*b, *b]\n")
    assert load_yaml(path) == {"base": {"x": 1}, "other": {"x": 2}, "list": [{"x": 1}, {"x": 1}]}


def test_set_values_refuse_bombs_and_duplicates_but_keep_plain_text() -> None:
    assert parse_sets(["a=500", "b=x: y: z", "c=[1, 2"]) == {"a": 500, "b": "x: y: z", "c": "[1, 2"}
    with pytest.raises(FileError, match="given twice"):
        parse_sets(["a={k: 1, k: 2}"])
    flow = "[&a [x,x,x,x,x,x,x,x,x,x]" + "".join(
        f", &a{i} [{','.join(['*a' if i == 0 else f'*a{i - 1}'] * 10)}]" for i in range(6)) + "]"
    with pytest.raises(FileError, match="aliases"):
        parse_yaml_value(flow, "--set x")


@pytest.mark.parametrize(("data", "message"), [
    (bytes(range(256)), "NUL bytes"),
    (b"security.protocol=SSL\n\xff\xfe=1\n", "not UTF-8"),
    (b"security.protocol=SSL\nsecurity.protocol=PLAINTEXT\n", ":2: security.protocol is given twice"),
])
def test_a_bad_properties_file_is_one_error_naming_it(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "client.properties"
    path.write_bytes(data)
    with pytest.raises(KafkaConfigError, match="--kafka-config-file") as info:
        KafkaSecurity.parse((), str(path))
    assert message in str(info.value)
