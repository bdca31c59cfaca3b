"""The ``calibrated`` use case's ``--set`` keys change its SUT: the capacity it paces to,
how a group shares it, the consumer's session timeout and the output's delay.

Why: a parameter of the use case whose capacity is known by construction that nothing
read would make its known demand silently wrong (tests/unit/test_no_inert_setting.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bench.runtime import calibrated_sut


class _Stop(Exception):
    pass


async def _started(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], instances: int = 2) -> dict[str, Any]:
    """What ``calibrated_sut.run`` builds from ``params`` before it consumes anything."""
    seen: dict[str, Any] = {}

    class Consumer:
        def __init__(self, **kwargs: Any) -> None:
            seen["consumer"] = kwargs

        def subscribe(self, *args: Any, **kwargs: Any) -> None:
            pass

        async def start(self) -> None:
            raise _Stop

    class Producer:
        def __init__(self, **kwargs: Any) -> None:
            pass

        async def start(self) -> None:
            pass

    def worker(consumer: Any, capacity: float, instances: int, mode: str, output: Any, work_s: float) -> Any:
        seen.update(capacity=capacity, mode=mode, delay_s=output.delay_s if output else None, work_s=work_s)
        return type("W", (), {})()

    monkeypatch.setattr(calibrated_sut, "AIOKafkaConsumer", Consumer)
    monkeypatch.setattr(calibrated_sut, "AIOKafkaProducer", Producer)
    monkeypatch.setattr(calibrated_sut, "Worker", worker)
    spec = {"params": params, "bootstrap_servers": "127.0.0.1:9", "group_id": "g", "instances": instances,
            "topics": {"input": "in", "output": "out"}}
    with pytest.raises(_Stop):
        await calibrated_sut.run(spec, asyncio.Event())
    return seen


async def test_capacity_key_cost_mode_session_and_delay_reach_the_sut(monkeypatch: pytest.MonkeyPatch) -> None:
    default = await _started(monkeypatch, {})
    given = await _started(monkeypatch, {"capacity": 123, "capacityMode": "instance", "sessionTimeoutMs": 9000,
                                         "delayMs": 250, "workUs": 400})
    assert (default["work_s"], given["work_s"]) == (0.0, pytest.approx(400e-6))
    assert given["capacity"] == 123 and default["capacity"] != 123
    assert (default["mode"], given["mode"]) == ("share", "instance")
    assert given["consumer"]["session_timeout_ms"] == 9000 != default["consumer"]["session_timeout_ms"]
    assert (default["delay_s"], given["delay_s"]) == (0.0, 0.25)
    costly = await _started(monkeypatch, {"capacity": 1000, "keyCost": 0.001, "keys": 1000})
    assert costly["capacity"] == pytest.approx(500.0), "every key lowers the capacity by keyCost"
    # a group of one carries the fixed cost more instances share (soloShare)
    alone = await _started(monkeypatch, {"capacity": 1000, "soloShare": 0.1}, instances=1)
    shared = await _started(monkeypatch, {"capacity": 1000, "soloShare": 0.1}, instances=2)
    assert (alone["capacity"], shared["capacity"]) == (pytest.approx(100.0), 1000)
