"""A generic SLO's ``sli`` is one the platform samples, or the run is refused before
anything starts, in one line naming the SLO, the SLI and the platform (issue 22, item 2)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench.builtin.platforms import INFO_SLIS, SUT_PROCESS_SLIS
from bench.cli.launch import resolve_run
from bench.config.base import ConfigError
from bench.plugins import Registry, load_plugins
from bench.runtime.host.stats import HostStats
from bench.runtime.kafka.latency import PERCENTILES


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_plugins()


def _run(registry: Registry, tmp_path: Path, sli: str, **opts: Any) -> Any:
    bench = tmp_path / "benchmark.yaml"
    doc = yaml.safe_load(yaml.safe_dump(registry.use_cases["calibrated"].default_benchmark()))
    doc["slos"] = [{"name": "my-slo", "sloType": "generic",
                    "properties": {"sli": sli, "threshold": 1000, "operator": "lt"}}]
    bench.write_text(yaml.safe_dump(doc))
    return resolve_run(registry, {"plugin": "calibrated", "benchmark_file": bench, **opts})


def test_a_misspelt_sli_is_refused_naming_slo_sli_and_platform(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _run(registry, tmp_path, "lagg")
    line = str(info.value)
    assert "\n" not in line
    assert "SLO 'my-slo': SLI 'lagg' is not one the embedded platform samples" in line


@pytest.mark.parametrize("sli", ["lag", "latency-p99", "output-rate", "sut-cpu", "host-steal", "dropped-records"])
def test_the_slis_the_embedded_platform_samples_are_accepted(registry: Registry, tmp_path: Path, sli: str) -> None:
    _run(registry, tmp_path, sli)


def test_the_process_slis_are_refused_where_the_sut_runs_elsewhere(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="SLI 'sut-cpu' is not one the kubernetes platform samples"):
        _run(registry, tmp_path, "sut-cpu", platform_name="kubernetes")


def test_the_declared_informational_slis_are_the_ones_the_samplers_return() -> None:
    assert set(PERCENTILES) <= INFO_SLIS and "output-rate" in INFO_SLIS
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    stats = HostStats(lambda: [os.getpgrp()], clock=clock)
    stats.sample()
    names = set(stats.sample())
    assert names == SUT_PROCESS_SLIS | (INFO_SLIS & names)
    assert SUT_PROCESS_SLIS <= names
