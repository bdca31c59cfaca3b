"""``bench new-plugin`` end to end: the template's plugin, written outside the repository
and installed as a distribution, passes its own tests on the shipped testing kit and
runs to a demand table.

The plugin is pip-installed with ``--target`` into a folder of its own and reaches the
processes through ``PYTHONPATH``, not into the test environment: bench finds it by its
entry point all the same, and nothing is left installed after the test. Its tests run
in a pytest process of their own (as a team runs them in its folder) on the session's
broker (``BENCH_TEST_BOOTSTRAP``); its query runs here on the session's Spark, which
saves a second JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e


def test_a_new_plugin_installs_passes_its_tests_and_runs_to_a_demand_table(
    tmp_path: Path, kafka_bootstrap: str, spark: Any
) -> None:
    from bench.cli.new_plugin import write_plugin
    from bench.testing import run_topology

    source, site = tmp_path / "bench-wordcount", tmp_path / "site"
    write_plugin("wordcount", source)
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                              "--target", str(site), str(source)], capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, install.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "BENCH_TEST_BOOTSTRAP": kafka_bootstrap}

    # its own tests, in its own folder, with the kit (bench finds the plugin by its entry
    # point in the first, runs it to a demand table in the last); all but the query,
    # which runs below
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not query",
                            "-W", "ignore::DeprecationWarning"], cwd=source, env=env,
                           capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "6 passed, 1 deselected" in tests.stdout, tests.stdout[-2000:]  # the demand-table run among them

    sys.path.insert(0, str(site))
    try:
        import bench_wordcount  # type: ignore[import-not-found]

        lines = [("s_0", "kafka spark kafka", 1_000), ("s_1", "spark", 2_000), ("s_0", "kafka", 6_000)]
        result = run_topology(bench_wordcount.USE_CASE, {"input": lines}, bootstrap_servers=kafka_bootstrap,
                              spark=spark)
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("bench_wordcount", None)
    latest = {}
    for row in result:
        doc = json.loads(row["value"])
        latest[(doc["windowStart"], doc["word"])] = doc["count"]
    assert sorted(latest.values()) == [1, 2, 2]


def test_the_kit_finds_a_generator_that_would_stall_a_run(kafka_bootstrap: str) -> None:
    """A generator written without the contract (no progress) fails in one line before
    any real run; one built on record_generator keeps it and writes its records."""
    import asyncio

    from bench.api import GeneratorReport, GeneratorSpec, GeneratorType
    from bench.services import record_generator
    from bench.testing import GeneratorContractError, run_generator

    async def silent(spec: GeneratorSpec) -> GeneratorReport:
        await asyncio.sleep(3.0)  # sends nothing, says nothing
        return GeneratorReport(0.0, 0.0, 0, 3.0)

    with pytest.raises(GeneratorContractError, match=r"^generator quiet: no progress at all; a platform faults"):
        run_generator(GeneratorType("quiet", "says nothing", silent), kafka_bootstrap, seconds=3.5)

    avro_like = record_generator("bytes", "fixed bytes per key", lambda key, ts: b"\x00\x01" + key.encode())
    run = run_generator(avro_like, kafka_bootstrap, load=3, period_ms=200, seconds=2.0)
    assert run.report.records == len(run.records) > 0 and len(run.progress) >= 1
    assert {r["value"] for r in run.records} <= {"\x00\x01s_0", "\x00\x01s_1", "\x00\x01s_2"}
