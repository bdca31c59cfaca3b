"""Property-based fuzz of ``bench run`` options and execution YAML (issue 15, item 7).

Every invalid input must end with exit code 2 and exactly one line on stderr-or-stdout
(``bench: error: ...``), never a traceback, and before anything starts: every platform
factory is replaced by one that raises AssertionError, which the CLI does not turn into
a one-line error, so a bad value that slips through fails the property.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.commands import cli
from bench.config.params import declared_params
from bench.plugins import Registry
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fakes import nothing_starts

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
USE_CASES = ("uc1", "uc2", "uc3", "uc4", "calibrated")


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with pytest.MonkeyPatch.context() as mp, nothing_starts(mp) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def invoke(workdir: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["run", "--results", str(workdir / "results"), *args])


def assert_one_line_exit_2(result: Result) -> None:
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("bench: error: "), result.output


# --------------------------------------------------------------------------- values

#: numbers that are never a valid positive quantity
not_positive = st.one_of(
    st.floats(max_value=0, allow_nan=False).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "-0.0"]),
)
#: text that click cannot read as a float (whitespace-only excluded: click strips it)
not_a_number = st.text(alphabet="abcxyz_,;!", min_size=1, max_size=6)

#: option -> strategy of values it must refuse (with every use case's default execution:
#: UC2's and UC3's leave 90 s after their warm-up, so a sample interval up to 45 s is valid there;
#: the calibrated one's 15-s warm-up and 2-s samples make any duration from 19 s valid)
BAD_OPTIONS: dict[str, st.SearchStrategy[str]] = {
    "--threshold": st.one_of(not_positive, not_a_number),
    "--threshold-rel-to-rate": st.one_of(not_positive, not_a_number,
                                         st.floats(min_value=1.001, max_value=1e9).map(repr)),
    "--threshold-rel-to-load": st.one_of(not_positive, not_a_number,
                                         st.floats(min_value=1.001e12, max_value=1e300).map(repr)),
    "--trigger": st.one_of(st.floats(max_value=-1e-9, allow_nan=False).map(repr), st.sampled_from(["nan", "inf"]),
                           not_a_number),
    "--sample-interval": st.one_of(not_positive, not_a_number, st.floats(min_value=60.001, max_value=1e12).map(repr)),
    "--duration": st.one_of(not_positive, not_a_number,
                            st.floats(min_value=0.001, max_value=19, exclude_max=True).map(repr)),
    "--warmup": st.one_of(st.floats(max_value=-1e-9, allow_nan=False).map(repr), st.sampled_from(["nan", "inf"]),
                          st.floats(min_value=120, max_value=1e12).map(repr), not_a_number),
    "--repetitions": st.one_of(st.integers(max_value=0).map(str), not_a_number),
    "--metrics-port": st.one_of(st.integers(max_value=0).map(str), st.integers(min_value=65536).map(str)),
    "--loads": st.one_of(
        st.lists(st.floats(min_value=1, max_value=1e6), min_size=0, max_size=3).flatmap(
            lambda xs: not_positive.map(lambda bad: ",".join([*map(repr, xs), bad]))
        ),
        not_a_number.filter(lambda s: s.strip(",")),
        st.just(","),
        st.just("1000,1000"),
    ),
    "--resources": st.one_of(not_positive, not_a_number.filter(lambda s: s.strip(",")), st.just("2,2")),
    "--bootstrap-servers": st.sampled_from(["localhost", ":9092", "host:", "host:99999", "host:port", "a:1,b"]),
    "--search": st.text(alphabet="xyz", min_size=1, max_size=4),
}


@SETTINGS
@given(use_case=st.sampled_from(USE_CASES), option=st.sampled_from(sorted(BAD_OPTIONS)), data=st.data())
def test_bad_option_values(registry: Registry, workdir: Path, use_case: str, option: str, data: st.DataObject) -> None:
    value = data.draw(BAD_OPTIONS[option], label="value")
    assert_one_line_exit_2(invoke(workdir, "--plugin", use_case, f"{option}={value}"))


key_text = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,14}", fullmatch=True)


@SETTINGS
@given(use_case=st.sampled_from(USE_CASES), data=st.data())
def test_unknown_set_keys(registry: Registry, workdir: Path, use_case: str, data: st.DataObject) -> None:
    declared, complete = declared_params(registry.use_cases[use_case], registry)
    assert complete
    key = data.draw(key_text.filter(lambda k: k not in declared), label="key")
    value = data.draw(st.one_of(st.integers().map(str), key_text), label="value")
    assert_one_line_exit_2(invoke(workdir, "--plugin", use_case, "--set", f"{key}={value}"))


def _bad_values(kind: type, low: float | None, high: float | None) -> st.SearchStrategy[str]:
    """--set values (YAML scalars) a parameter of this type and range refuses."""
    text = st.from_regex(r"[a-z]{2,8}", fullmatch=True).filter(
        lambda s: s not in {"true", "false", "yes", "no", "on", "off", "null", "nan", "inf"})
    options: list[st.SearchStrategy[str]] = []
    if kind in (int, float):
        options += [text, st.sampled_from(["true", "false", "[1]", "{a: 1}", ".nan", ".inf"])]
        if kind is int:
            options.append(st.floats(allow_nan=False, allow_infinity=False).filter(
                lambda x: not x.is_integer() and (low is None or x >= low) and (high is None or x <= high)).map(repr))
        if low is not None:
            options.append(st.floats(max_value=low, exclude_max=True, allow_nan=False, allow_infinity=False,
                                     min_value=-1e12).filter(lambda x: x < low).map(repr))
    elif kind is bool:
        options.append(text)
    return st.one_of(options) if options else st.nothing()


@SETTINGS
@given(use_case=st.sampled_from(USE_CASES), data=st.data())
def test_bad_set_values(registry: Registry, workdir: Path, use_case: str, data: st.DataObject) -> None:
    declared, _ = declared_params(registry.use_cases[use_case], registry)
    checkable = [s for s in declared.values() if not s.choices and s.type in (int, float, bool)]
    spec = data.draw(st.sampled_from(checkable), label="param")
    value = data.draw(_bad_values(spec.type, spec.min, spec.max), label="value")
    assert_one_line_exit_2(invoke(workdir, "--plugin", use_case, "--set", f"{spec.name}={value}"))


# --------------------------------------------------------------------------- YAML

GOOD_EXECUTION: dict[str, Any] = {
    "load": {"loadValues": [1000, 2000]},
    "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "repetitions": 1, "sampleInterval": 5},
}

#: (path, values that must be refused there)
BAD_FIELDS: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    (("load", "loadValues"), st.one_of(
        st.lists(st.booleans(), min_size=1, max_size=3),
        st.lists(st.floats(max_value=0) | st.just(math.inf), min_size=1, max_size=3),
        st.just([]), st.text(max_size=4), st.none())),
    (("resources", "resourceValues"), st.one_of(st.just([True]), st.just([0]), st.just(["x"]), st.just({}))),
    (("execution", "duration"),
     st.one_of(st.booleans(), st.floats(max_value=30), st.just(math.inf), st.text(max_size=3))),
    (("execution", "warmup"), st.one_of(st.booleans(), st.floats(max_value=-1e-9), st.floats(min_value=120))),
    (("execution", "repetitions"), st.one_of(st.booleans(), st.integers(max_value=0), st.floats(0.1, 0.9))),
    (("execution", "sampleInterval"), st.one_of(st.booleans(), st.floats(max_value=0), st.floats(min_value=45.5))),
    (("execution", "metric"), st.text(max_size=8).filter(lambda s: s not in ("demand", "capacity"))),
    (("execution", "earlyStop"), st.one_of(st.integers(), st.text(max_size=3))),
    (("execution", "strategy", "name"), st.text(alphabet="qwz", min_size=1, max_size=6)),
]


def _with(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = yaml.safe_load(yaml.safe_dump(doc))
    target = out
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = value
    return out


@SETTINGS
@given(field=st.sampled_from(range(len(BAD_FIELDS))), data=st.data())
def test_bad_execution_fields(registry: Registry, workdir: Path, field: int, data: st.DataObject) -> None:
    path, values = BAD_FIELDS[field]
    doc = _with(GOOD_EXECUTION, path, data.draw(values, label="value"))
    file = workdir / "exec.yaml"
    file.write_text(yaml.safe_dump(doc))
    assert_one_line_exit_2(invoke(workdir, "--plugin", "uc1", "--execution", str(file)))


SECTIONS = ((), ("load",), ("resources",), ("execution",), ("execution", "strategy"))


@SETTINGS
@given(section=st.sampled_from(SECTIONS), key=key_text, use_case=st.sampled_from(USE_CASES))
def test_unknown_execution_keys(registry: Registry, workdir: Path, section: tuple[str, ...], key: str,
                                use_case: str) -> None:
    base = {**GOOD_EXECUTION, "params": {}}
    target: dict[str, Any] = base
    for part in section:
        target = target.setdefault(part, {})
    if key in target or (not section and key in ("name", "benchmark", "slos", "configOverrides", "params",
                                                  "spec", "kind", "apiVersion", "metadata")):
        return
    doc = _with(base, (*section, key), 1)
    file = workdir / "exec.yaml"
    file.write_text(yaml.safe_dump(doc))
    assert_one_line_exit_2(invoke(workdir, "--plugin", use_case, "--execution", str(file)))


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("ab:-[]{},\n #'\"&*!|>%@`\t1")), max_size=40))
def test_arbitrary_yaml_never_tracebacks(registry: Registry, workdir: Path, text: str) -> None:
    """Any file at all: accepted (dry run) or one line and exit 2."""
    file = workdir / "any.yaml"
    file.write_text(text)
    result = invoke(workdir, "--plugin", "calibrated", "--execution", str(file), "--dry-run")
    if result.exit_code != 0:
        assert_one_line_exit_2(result)
