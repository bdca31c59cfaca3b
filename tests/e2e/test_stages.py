"""``bench stages`` on real parts: UC2 with short windows, every stage on the broker's clock.

The stage latencies of a known pipeline must add up to the end-to-end latency: per
record they telescope exactly (each stage starts where the previous one's record was
appended), so the sum of the stage means must equal the end-to-end mean within
:data:`MEAN_TOLERANCE_MS` (only records of different windows are averaged per stage),
and the sum of the stage medians must be within :data:`MEDIAN_TOLERANCE` of the
end-to-end median (medians do not add exactly).

Four 5-s windows after the warm-up (200 window results of 50 sensors) are enough: with
seven, the sums missed by 0.3 % (medians) and 0.1 % (means), far inside the tolerances.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

MEAN_TOLERANCE_MS = 250.0
MEDIAN_TOLERANCE = 0.35


def test_uc2_stage_latencies_add_up_to_the_end_to_end_latency(tmp_path: Path) -> None:
    cmd = [str(Path(sys.executable).parent / "bench"), "stages", "--plugin", "uc2", "--sensors", "50",
           "--duration", "36", "--warmup", "15", "--drain", "12", "--set", "windowSizeMs=5000",
           "--set", "allowedLatenessMs=1000", "--results", str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    print(done.stdout)
    for stage in ("baseline", "ingest+parse", "window aggregation", "output", "end-to-end"):
        assert stage in done.stdout
    doc = json.loads(next(tmp_path.glob("stages-uc2-*.json")).read_text())
    assert next(tmp_path.glob("stages-uc2-*.png")).stat().st_size > 1000
    rows = {r["stage"]: r for r in doc["stages"]}
    assert all(rows[s]["records"] > 0 for s in rows), rows
    assert all(rows[s]["median"] >= 0 and not math.isnan(rows[s]["p99"]) for s in rows)
    stages = ("ingest+parse", "window aggregation", "output")
    e2e = rows["end-to-end"]
    assert abs(sum(rows[s]["mean"] for s in stages) - e2e["mean"]) <= MEAN_TOLERANCE_MS + 0.1 * e2e["mean"], rows
    assert abs(doc["sumOfStageMedians"] - e2e["median"]) <= MEDIAN_TOLERANCE * e2e["median"], rows
