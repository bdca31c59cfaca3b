"""Ctrl-C in the middle of an experiment leaves no process behind.

A real ``bench run`` is started as a child with a unique marker in its environment;
every process it starts (broker, SUT processes, generators, Spark's JVM) inherits
the marker, so they can be found in /proc even after being re-parented. Other
engineers' and tests' brokers and JVMs on this machine lack the marker and are
ignored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from bench.runtime.kafka.broker import DEFAULT_KIND
from e2e_procs import marked as marked_by

pytestmark = pytest.mark.e2e

MARK = "BENCH_ORPHAN_TEST"
#: what the default embedded broker's command line contains (Apache Kafka: "java ... kafka.Kafka
#: .../server.properties", tansu: "tansu broker ...", noida-db: "noida-db start --only kafka ...")
BROKER = {"kafka": "kafka.Kafka", "tansu": "tansu", "noida": "noida-db"}[DEFAULT_KIND]


def marked(token: str) -> dict[int, str]:
    return marked_by(MARK, token)


def wait_for(token: str, needles: list[str], timeout: float) -> dict[int, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs = marked(token)
        if all(any(n in cmd for cmd in procs.values()) for n in needles):
            return procs
        time.sleep(0.5)
    pytest.fail(f"not all of {needles} appeared within {timeout} s; saw {sorted(marked(token).values())}")


def bench_cli() -> str:
    return str(Path(sys.executable).parent / "bench")


@pytest.mark.parametrize(
    ("plugin", "needles", "sig"),
    [
        ("calibrated", [BROKER, "calibrated_sut", "generator_main"], signal.SIGINT),
        ("uc1", [BROKER, "spark.driver", "java"], signal.SIGINT),
        # kill, a CI job's time limit: the same ending as Ctrl-C, not a traceback
        ("calibrated", [BROKER, "calibrated_sut", "generator_main"], signal.SIGTERM),
    ],
    ids=["calibrated", "uc1", "calibrated-sigterm"],
)
def test_ctrl_c_mid_experiment_leaves_no_process(plugin: str, needles: list[str], sig: signal.Signals,
                                                 tmp_path: Path) -> None:
    from bench.plugins import load_plugins

    if plugin not in load_plugins().use_cases:
        pytest.skip(f"use case {plugin} not installed")
    token = uuid.uuid4().hex
    env = {**os.environ, MARK: token}
    cmd = [
        bench_cli(), "run", "--plugin", plugin, "--loads", "500", "--resources", "2",
        "--duration", "120", "--warmup", "5", "--repetitions", "1", "--results", str(tmp_path / "results"),
        "--no-early-stop",  # a slow start must still find the experiment running, not decided at 55 s
    ]  # fmt: skip
    # SIGINT as a terminal delivers it, even when these tests run as a background job
    # (whose children inherit SIGINT ignored, so Python would install no handler); SIGTERM
    # to a run started as such a job (``bench run ... &`` in a script), SIGINT ignored
    ignore = sig == signal.SIGTERM
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                              signal.SIG_IGN if ignore else signal.SIG_DFL))
    try:
        seen = wait_for(token, needles, timeout=120)
        assert len(seen) >= len(needles)
        child.send_signal(sig)  # SIGINT: what Ctrl-C delivers to the foreground process
        out, _ = child.communicate(timeout=90)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    text = out.decode(errors="replace")
    assert child.returncode == 130, text[-2000:]
    assert "bench: interrupted; every finished experiment is in the results folder" in text, text[-2000:]
    assert "Traceback" not in text and "never retrieved" not in text, text[-2000:]
    deadline = time.monotonic() + 10  # SIGKILLed children may take a moment to vanish
    while marked(token) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked(token) == {}, f"left behind: {marked(token)}"
