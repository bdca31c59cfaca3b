"""The load generator's ``--set`` keys change its Kafka producer and its records.

Why: a generator parameter the open workload never reads would be accepted and ignored
(tests/unit/test_no_inert_setting.py points here). Both built-in generators
(``active-power`` and UC4's ``uc4-registry``) send through this loop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench.api import GeneratorSpec
from bench.runtime.load import generator


class _Stop(Exception):
    pass


async def _producer_settings(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    class Producer:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)

        async def start(self) -> None:
            raise _Stop

    monkeypatch.setattr(generator, "AIOKafkaProducer", Producer)
    spec = GeneratorSpec("127.0.0.1:9", "input", ["s_0"], 1000.0, 1.0, params, {})
    with pytest.raises(_Stop):
        await generator.run_open_workload(spec, lambda key: generator.record_template(json.dumps(key), 1.0))
    return seen


@pytest.mark.parametrize(("params", "setting", "value"), [
    ({"acks": -1}, "acks", -1),
    ({"batchSize": 4096}, "max_batch_size", 4096),
    ({"compression": "gzip"}, "compression_type", "gzip"),
    ({"lingerMs": 50}, "linger_ms", 50),
])
async def test_producer_keys_reach_the_kafka_producer(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any],
                                                      setting: str, value: Any) -> None:
    assert (await _producer_settings(monkeypatch, {}))[setting] != value
    assert (await _producer_settings(monkeypatch, params))[setting] == value


async def _first_record(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> bytes:
    captured: dict[str, Any] = {}

    async def capture(spec: GeneratorSpec, encode: Any) -> None:
        captured["encode"] = encode

    monkeypatch.setattr(generator, "run_open_workload", capture)
    await generator.run_active_power(GeneratorSpec("127.0.0.1:9", "input", ["s_0"], 1000.0, 1.0, params, {}))
    return bytes(captured["encode"]("s_0") % 1_700_000_000_000)


async def test_value_in_w_and_record_template_shape_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    assert json.loads(await _first_record(monkeypatch, {}))["valueInW"] == 10.0
    assert json.loads(await _first_record(monkeypatch, {"valueInW": 42.5}))["valueInW"] == 42.5
    templated = json.loads(await _first_record(monkeypatch, {"recordTemplate": '{"k": "{key}", "t": {timestamp}}'}))
    assert templated == {"k": "s_0", "t": 1_700_000_000_000}
