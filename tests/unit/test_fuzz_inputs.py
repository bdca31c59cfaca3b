"""Property-based fuzz of every command's inputs (issue 23, item 7): the bytes of YAML
and properties files, the arguments of every command, and stored result folders. Every
example ends in exit code 0 or in one line ``bench: error: ...`` with exit code 2: never
a traceback, never a hang, and never a start (platform factories, the broker and the
stage pipeline are replaced by stand-ins that refuse)."""

from __future__ import annotations

import csv
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.cli.commands import cli
from bench.errors import UserError
from bench.plugins import Registry
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fakes import nothing_starts

pytestmark = pytest.mark.usefixtures("registry")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
STARTED = "a stand-in was asked to start"


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise UserError(STARTED)

    with pytest.MonkeyPatch.context() as mp, nothing_starts(mp, forbidden) as loaded:
        mp.setattr("bench.plugins.load_plugins", lambda *a, **k: loaded)
        mp.setattr("bench.stages.pipeline.run_stages", forbidden)
        mp.setattr("bench.runtime.kafka.broker.running_broker", forbidden)
        yield loaded


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_ok_or_one_line(result: Result) -> None:
    assert "Traceback" not in result.output, result.output
    if result.exit_code == 0:
        return
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: error: "), result.output


GOOD_EXECUTION = yaml.safe_dump({
    "load": {"loadValues": [1000, 2000]}, "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "repetitions": 1},
}).encode()


def _mutated(base: bytes) -> st.SearchStrategy[bytes]:
    """``base`` with a few bytes inserted, replaced or cut away (encodings, BOMs, NULs included)."""
    special = st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\xe9", b"&a [*a]", b"{", b": :", b"\t"])
    chunk = st.one_of(st.binary(min_size=1, max_size=6), special)

    def apply(args: tuple[int, int, bytes, str]) -> bytes:
        at, length, piece, how = args
        at %= len(base) + 1
        if how == "insert":
            return base[:at] + piece + base[at:]
        if how == "replace":
            return base[:at] + piece + base[at + length:]
        return base[:at]
    return st.tuples(st.integers(0, 10_000), st.integers(0, 8), chunk,
                     st.sampled_from(["insert", "replace", "truncate"])).map(apply)


@SETTINGS
@given(data=st.one_of(st.binary(max_size=120), _mutated(GOOD_EXECUTION)))
def test_bytes_of_an_execution_file(workdir: Path, data: bytes) -> None:
    path = workdir / "exec.yaml"
    path.write_bytes(data)
    assert_ok_or_one_line(invoke("run", "--plugin", "calibrated", "--execution", str(path), "--dry-run"))
    assert_ok_or_one_line(invoke("validate", str(path)))


@SETTINGS
@given(data=st.one_of(st.binary(max_size=120),
                      _mutated(b"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=u\n")))
def test_bytes_of_a_properties_file(workdir: Path, data: bytes) -> None:
    path = workdir / "client.properties"
    path.write_bytes(data)
    assert_ok_or_one_line(invoke("run", "--plugin", "calibrated", "--kafka-config-file", str(path), "--dry-run"))


#: values that stress the options of every command: signs, NaN, huge, text, addresses
ODD_VALUES = st.sampled_from([
    "nan", "inf", "-inf", "-1", "0", "1e300", "1e-300", "5", "abc", "", " ", "1,2", "x=1", "=",
    "http://h:1", "h h:1", "127.0.0.1:1", "[::1]:1", "local[0]", "A_B", "\x00", "é",
])
COMMAND_OPTIONS: dict[str, list[str]] = {
    "run": ["--loads", "--resources", "--duration", "--warmup", "--repetitions", "--threshold",
            "--threshold-rel-to-rate", "--threshold-rel-to-load", "--sample-interval", "--trigger", "--set",
            "--bootstrap-servers",
            "--spark-master", "--namespace", "--metrics-port", "--conf", "--kafka-config", "--platform"],
    "stages": ["--sensors", "--duration", "--warmup", "--drain", "--instances", "--set", "--bootstrap-servers"],
    "analyze": ["--exp", "--threshold", "--threshold-rel-to-rate", "--threshold-rel-to-load", "--warmup", "--metric",
                "--confidence"],
    "report": ["--confidence"],
}


@SETTINGS
@given(command=st.sampled_from(sorted(COMMAND_OPTIONS)), data=st.data())
def test_arguments_of_every_command(workdir: Path, command: str, data: st.DataObject) -> None:
    make_run(workdir / "run", 0)
    options = data.draw(st.lists(st.tuples(st.sampled_from(COMMAND_OPTIONS[command]), ODD_VALUES),
                                 min_size=1, max_size=3), label="options")
    args = [part for option, value in options for part in (option, value)]
    if command == "run":
        argv = ["run", "--plugin", "calibrated", "--results", str(workdir / "results"), "--dry-run", *args]
    elif command == "stages":
        argv = ["stages", "--plugin", "uc1", "--results", str(workdir / "stages"), *args]
    elif command == "analyze":
        argv = ["analyze", str(workdir / "run"), "-o", str(workdir / "out.csv"), *args]
    else:
        argv = ["report", str(workdir / "run"), "-o", str(workdir / "report.html"), *args]
    result = invoke(*argv)
    if STARTED in result.output:
        return  # every check passed: the command went on to start
    assert_ok_or_one_line(result)


@SETTINGS
@given(old=st.text(alphabet="abc:/.01_ ", max_size=12), new=st.sampled_from(["run", "missing", "run:0", "run:x"]))
def test_arguments_of_compare(workdir: Path, old: str, new: str) -> None:
    make_run(workdir / "run", 0)
    assert_ok_or_one_line(invoke("compare", old or "x", str(workdir / new)))


# --------------------------------------------------------------------------- stored results


def make_run(directory: Path, exp_id: int, seed: int = 1) -> None:
    """A small stored run: lag series of 2 loads x 2 resource amounts, one repetition each."""
    if directory.exists():
        return
    directory.mkdir(parents=True)
    rng = random.Random(seed)
    for load in (100, 200):
        for res in (1, 2):
            with open(directory / f"exp{exp_id}_{load}_{res}_sli_lag-trend_0.csv", "w", newline="") as fh:
                writer = csv.writer(fh, lineterminator="\n")
                writer.writerow(["labels", "timestamp", "value"])
                for i in range(40):
                    writer.writerow(["consumergroup=bench", f"{1_700_000_000 + 5 * i:.3f}",
                                     repr(max(0.0, (load - 120 * res) * 5 * i + rng.uniform(0, 300)))])
    (directory / f"exp{exp_id}_demand.csv").write_text("load,resources\n100,1\n200,2\n")


@SETTINGS
@given(which=st.integers(0, 4), data=st.data(), command=st.sampled_from(["analyze", "report", "compare"]))
def test_stored_result_folders(workdir: Path, which: int, data: st.DataObject,
                               command: str) -> None:
    base = workdir / "good"
    make_run(base, 0)
    folder = workdir / "fuzzed"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(base, folder)
    victim = sorted(folder.iterdir())[which]
    victim.write_bytes(data.draw(_mutated(victim.read_bytes()), label="bytes"))
    if command == "analyze":
        result = invoke("analyze", str(folder), "-o", str(workdir / "fuzzed-out.csv"))
    elif command == "report":
        result = invoke("report", str(folder), "-o", str(workdir / "fuzzed.html"))
    else:
        result = invoke("compare", str(base), str(folder / "exp0_demand.csv"))
        if result.exit_code == 3:  # a regression found in the fuzzed table: a verdict, not an error
            return
    assert_ok_or_one_line(result)
