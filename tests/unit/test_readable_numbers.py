"""Numbers bench prints are written as people write them: the progress line's verdict, the
printed table and the report share one rule (bench.numbers.readable)."""

from __future__ import annotations

import math

from bench.analysis.report_slis import num
from bench.api import SloVerdict
from bench.numbers import readable
from bench.slo.evaluator import summary


def test_large_numbers_get_separators_small_ones_keep_their_digits() -> None:
    assert readable(23216.4) == "23,216" and readable(-9528.2) == "-9,528" and readable(1e4) == "10,000"
    assert readable(400.0) == "400" and readable(0.0123456) == "0.01235" and readable(math.nan) == "-"
    assert num(12345.6) == readable(12345.6)


def test_the_progress_line_verdict_is_readable() -> None:
    line = summary(SloVerdict(False, {"median": 23216.4, "threshold": 400.0, "slopes": [23216.4]}))
    assert line == "median=23,216 threshold=400"
    assert "e+" not in summary(SloVerdict(True, {"median": -1.2e5, "threshold": 1e5}))
