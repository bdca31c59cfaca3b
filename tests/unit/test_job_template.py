"""The generator's template mode (``recordTemplate``, ``bench run --job --record-template``)."""

from __future__ import annotations

import json

import pytest
from bench.config.base import ConfigError
from bench.config.params import declared_params, validate_params
from bench.plugins import load_plugins
from bench.runtime.load.generator import check_record_template, encode_record, record_template, user_record_template

TEMPLATE = '{"sensor": "{key}", "ts": {timestamp}, "kind": "100% power", "nested": {"a": [1, 2]}}'


def test_template_fills_key_and_timestamp_and_keeps_json_braces_and_percent() -> None:
    raw = user_record_template(TEMPLATE, "s_7") % 1_700_000_000_123
    assert isinstance(raw, bytes)
    assert json.loads(raw) == {"sensor": "s_7", "ts": 1_700_000_000_123, "kind": "100% power", "nested": {"a": [1, 2]}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"k": "{key}"}', {"k": "s_1"}),  # no timestamp at all
        ('{"a": {timestamp}, "b": {timestamp}, "k": "{key}{key}"}', {"a": 42, "b": 42, "k": "s_1s_1"}),
    ],
)
def test_template_with_no_or_several_timestamps(text: str, expected: dict[str, object]) -> None:
    assert json.loads(user_record_template(text, "s_1") % 42) == expected


def test_key_with_percent_sign_is_not_a_format() -> None:
    assert json.loads(user_record_template('{"k": "{key}", "t": {timestamp}}', "a%d") % 5) == {"k": "a%d", "t": 5}


def test_default_path_is_unchanged() -> None:
    # the ActivePowerRecord path keeps its one-% bytes template (no wrapper object)
    assert isinstance(record_template('"s_0"', 10.0), bytes)
    assert json.loads(encode_record('"s_0"', 5, 10.0)) == {"identifier": "s_0", "timestamp": 5, "valueInW": 10.0}


def test_check_rejects_a_template_that_is_not_json() -> None:
    check_record_template(TEMPLATE)
    with pytest.raises(ValueError):
        check_record_template('{"sensor": {key}}')  # the key unquoted


def test_record_template_param_is_checked_before_a_run() -> None:
    registry = load_plugins()
    declared, complete = declared_params(registry.use_cases["calibrated"], registry)
    validate_params({"recordTemplate": TEMPLATE}, declared, complete, "--set")
    with pytest.raises(ConfigError, match=r"--set recordTemplate=.*not JSON once \{key\} and \{timestamp\}"):
        validate_params({"recordTemplate": "{oops"}, declared, complete, "--set")
