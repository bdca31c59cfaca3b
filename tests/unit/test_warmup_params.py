"""Which parameters the Spark warm-up's topology runs with (``UseCase.warmup_params``):
a use case with its own sink points it at the throw-away directory, so valid records
warm its whole path and none reaches the user's store; any other keeps its parameters,
and its own sink gets only records every parser rejects."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.api import UseCase
from bench.runtime.spark.sut_query import warmup_params
from bench_uc1 import UC1


@pytest.mark.parametrize(("sink", "name"), [("log", "logs"), ("sqlite", "uc1.sqlite")])
def test_uc1_stores_its_warm_up_under_the_scratch_directory(sink: str, name: str, tmp_path: Path) -> None:
    user = {"sink": sink, "path": "/srv/users/store", "log_max_mb": 64}
    params, redirected = warmup_params(UC1, user, str(tmp_path))
    assert redirected
    assert params == {"sink": sink, "path": str(tmp_path / name), "log_max_mb": 64}
    assert user["path"] == "/srv/users/store"  # the run's own parameters are not touched


def test_uc1_without_a_sink_given_warms_its_default_log(tmp_path: Path) -> None:
    params, _ = warmup_params(UC1, {}, str(tmp_path))
    assert params["path"] == str(tmp_path / "logs")


def test_a_use_case_without_the_hook_keeps_its_parameters(tmp_path: Path) -> None:
    plain = UseCase("plain", "test", dict, topology=lambda ctx: None)  # type: ignore[arg-type, return-value]
    given = {"path": "/srv/users/store"}
    params, redirected = warmup_params(plain, given, str(tmp_path))
    assert not redirected
    assert params == given
