"""The class archive ``scripts/install`` records is the one a real driver maps: most of
a Spark session's classes then come from it rather than from the JARs."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.runtime.spark.class_archive import ENV_OFF, archive_path

pytestmark = pytest.mark.e2e


def test_a_session_loads_its_classes_from_the_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.runtime.spark.session import build_session

    monkeypatch.delenv(ENV_OFF, raising=False)
    assert archive_path().is_file(), f"scripts/install records {archive_path()}; it is missing"
    log = tmp_path / "classes.log"
    # the user's options are kept beside the archive's: this one logs where each class came from
    spark = build_session("local[1]", "bench-archive-test", 1,
                          {"spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={log}"})
    try:
        spark.range(10).selectExpr("sum(id)").collect()
    finally:
        spark.stop()
    lines = [line for line in log.read_text().splitlines() if "source:" in line]
    from_archive = [line for line in lines if "shared objects file (top)" in line]
    assert len(lines) > 5000
    assert len(from_archive) > 0.5 * len(lines), f"{len(from_archive)} of {len(lines)} classes from the archive"
