"""Each use case's non-default workload dimension reaches a demand table through
``bench run`` on the real parts (Apache Kafka, Spark): one load value, one resource
amount, one short repetition each, so the load type's patchers, the SUT's parameter
and the table's load column are exercised, not the SUT's capacity.

The dimensions (plugins/*/README.md): UC1 message frequency (MessagePeriod), UC2
window size, UC3 the number of time-attribute values, UC4 window size.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from e2e_procs import bench_run

pytestmark = pytest.mark.e2e

#: any verdict will do (an error too: the table must still come): a repetition long
#: enough for a slope after the warm-up, no longer
SHORT = ["--resources", "1", "--duration", "16", "--warmup", "6", "--sample-interval", "2", "--repetitions", "1",
         "--no-spark-warmup"]

CASES = {
    "uc1-MessagePeriod": ("uc1", "MessagePeriod", "2000", ["--set", "generator.sensors=100"]),
    "uc2-WindowSize": ("uc2", "WindowSize", "5000", ["--set", "generator.sensors=100", "--set",
                                                     "allowedLatenessMs=1000"]),
    "uc3-NumTimeAttributeValues": ("uc3", "NumTimeAttributeValues", "7", ["--set", "generator.sensors=100"]),
    "uc4-WindowSize": ("uc4", "WindowSize", "5000", []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_non_default_dimension_reaches_a_demand_table(case: str, kafka_bootstrap: str, tmp_path: Path) -> None:
    plugin, load_type, value, extra = CASES[case]
    out = bench_run("--bootstrap-servers", kafka_bootstrap, "--results", str(tmp_path), "--plugin", plugin,
                    "--load-type", load_type, "--loads", value, *SHORT, *extra, timeout=300)
    assert out.returncode in (0, 1), out.stderr[-3000:]  # 1: an experiment ended in error, still a table
    with open(tmp_path / "exp0_demand.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:2] == ["load", "resources"] and [r[0] for r in rows[1:]] == [value], rows
    config = (tmp_path / "exp0-execution-configuration.json").read_text()
    assert f'"loadType": "{load_type}"' in config
