"""Stage latency arithmetic of ``bench stages``, without a broker."""

from __future__ import annotations

import pytest
from bench.stages.measure import Index, format_table, key_of, stage_latencies, stats
from click.testing import CliRunner


def rec(identifier: str, t: int, appended: float, field: str = "timestamp") -> tuple[bytes, float]:
    return f'{{"identifier":"{identifier}","{field}":{t},"valueInW":1.0}}'.encode(), appended


def test_keys_prefer_the_windows_latest_event_time() -> None:
    assert key_of(b'{"identifier":"s_1","timestamp":5}') == (b"s_1", 5.0)
    assert key_of(b'{"identifier":"s_1","windowEnd":60,"latestEventTime":42}') == (b"s_1", 42.0)
    assert key_of(b'{"timestamp":5}') is None


def test_per_record_stage_latencies_add_up_to_the_end_to_end_latency() -> None:
    inputs = [rec("s_1", 100, 1000.0), rec("s_1", 200, 1100.0), rec("s_2", 150, 1050.0)]
    parsed = [rec("s_1", 100, 1040.0), rec("s_1", 200, 1130.0), rec("s_2", 150, 1090.0)]
    # the window of s_1 is completed by its record at 200, that of s_2 by 150
    aggregated = [rec("s_1", 200, 1500.0, "latestEventTime"), rec("s_2", 150, 1480.0, "latestEventTime")]
    output = [rec("s_1", 200, 1520.0, "latestEventTime"), rec("s_2", 150, 1530.0, "latestEventTime")]
    parse = stage_latencies(Index.of(inputs), parsed)
    window = stage_latencies(Index.of(parsed), aggregated)
    out = stage_latencies(Index.of(aggregated), output)
    e2e = stage_latencies(Index.of(inputs), output)
    assert parse == [40.0, 30.0, 40.0]
    assert window == [370.0, 390.0]
    assert out == [20.0, 50.0]
    assert e2e == [420.0, 480.0] == [30.0 + 370 + 20, 40.0 + 390 + 50]


def test_a_result_of_a_group_is_matched_by_event_time_alone() -> None:
    inputs = [rec("s_1", 100, 1000.0), rec("s_2", 100, 1010.0)]
    group = [rec("g_0", 100, 1600.0, "latestEventTime")]
    assert stage_latencies(Index.of(inputs), group) == [590.0]  # the newest input with that time


def test_records_whose_input_came_in_the_warmup_are_left_out() -> None:
    inputs = [rec("s_1", 100, 1000.0), rec("s_1", 200, 2000.0)]
    parsed = [rec("s_1", 100, 1100.0), rec("s_1", 200, 2100.0)]
    assert stage_latencies(Index.of(inputs), parsed, since_ms=1500.0) == [100.0]


def test_stats_and_table() -> None:
    row = stats("ingest+parse", list(range(1, 101)))
    assert (row.records, row.median, row.p95) == (100, pytest.approx(50.5), pytest.approx(95.05))
    assert "ingest+parse" in format_table([row, stats("output", [])])


def test_the_command_is_registered_as_a_builtin() -> None:
    from bench.cli.commands import cli

    result = CliRunner().invoke(cli, ["stages", "--help"])
    assert result.exit_code == 0, result.output
    assert "--plugin" in result.output and "LogAppendTime" in result.output
