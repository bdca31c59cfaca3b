"""A fake platform for engine tests: lag grows at max(0, rate - instances x capacity).

It models the calibrated use case without processes, so the engine, strategies, SLOs
and result files can be tested in milliseconds. The real thing is tested in tests/e2e.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from bench.api import ExperimentSpec, GeneratorReport, Sample, UseCase, standard_benchmark
from bench.builtin.platforms import check_java
from bench.plugins import Registry, load_plugins

CAPACITY = 1000.0


def fake_benchmark() -> dict[str, Any]:
    return standard_benchmark("fake", {"input": 4}, generator={"sensors": 10})


FAKE_USE_CASE = UseCase(name="fake", description="fake for tests", default_benchmark=fake_benchmark, sut_process="fake")


class FakePlatform:
    """Simulated time: every sample() advances the clock by one sampling interval."""

    name = "fake"

    def __init__(
        self,
        interval: float = 5.0,
        behind: float = 0.0,
        fail_at: int | None = None,
        faults: dict[int, BaseException] | None = None,
        behind_at: set[int] | None = None,
    ) -> None:
        """``fail_at``: every SUT start from the n-th on fails; ``faults``: the n-th SUT start's
        repetition raises that exception at its third sample (a process that dies mid-way);
        ``behind_at``: which starts' generators fall ``behind`` (default: all)."""
        self.interval = interval
        self.behind = behind
        self.fail_at = fail_at
        self.faults = dict(faults or {})
        self.behind_at = behind_at
        self.samples_in_rep = 0
        #: every sample() of the run, for tests that count what was asked of the platform
        self.sample_calls = 0
        self.calls: list[str] = []
        self.experiments: list[tuple[float, float]] = []
        self.clock = 1_700_000_000.0
        #: the engine's clock, when a test shares it: sample times then follow the ticks
        self.now: Callable[[], float] | None = None
        self.last = 0.0
        self.lag = 0.0
        self.open_count = 0
        self.closed = False

    async def open(self) -> None:
        self.open_count += 1

    async def close(self) -> None:
        self.closed = True

    async def reset_topics(self, spec: ExperimentSpec) -> None:
        self.calls.append("reset")

    async def start_sut(self, spec: ExperimentSpec) -> None:
        self.calls.append("start_sut")
        self.experiments.append((spec.load, spec.resources))
        if self.fail_at is not None and len(self.experiments) >= self.fail_at:
            raise RuntimeError("SUT failed to start")
        self.lag = 0.0
        self.samples_in_rep = 0

    async def start_generators(self, spec: ExperimentSpec) -> None:
        self.calls.append("start_gen")

    async def sample(self, spec: ExperimentSpec) -> Sample:
        self.samples_in_rep += 1
        self.sample_calls += 1
        fault = self.faults.get(len(self.experiments))
        if fault is not None and self.samples_in_rep == 3:
            raise fault
        step = self.interval
        if self.now is not None:  # the engine's simulated clock: samples as often as it asks
            step = self.now() - self.last if self.samples_in_rep > 1 else self.interval
            self.last = self.now()
        self.clock += step
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        capacity = float(spec.params.get("capacity", CAPACITY))
        rate = gen["spec"]["sensors"] * 1000 / gen["spec"]["periodMs"]
        self.lag = max(0.0, self.lag + (rate - sut["spec"]["replicas"] * capacity) * step)
        return Sample(self.clock, {"lag": self.lag})

    async def stop_generators(self, spec: ExperimentSpec) -> Sequence[GeneratorReport]:
        self.calls.append("stop_gen")
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        target = float(gen["spec"]["sensors"])
        behind = self.behind if self.behind_at is None or len(self.experiments) in self.behind_at else 0.0
        return [GeneratorReport(target, target * (1 - behind), int(target * 10), 10.0)]

    async def stop_sut(self, spec: ExperimentSpec) -> None:
        self.calls.append("stop_sut")

    async def delete_topics(self, spec: ExperimentSpec) -> None:
        self.calls.append("delete")


@contextlib.contextmanager
def nothing_starts(
    mp: pytest.MonkeyPatch, forbidden: Callable[..., Any] | None = None
) -> Iterator[Registry]:
    """The installed plugins, with every platform's ``create`` replaced by ``forbidden``
    (default: an AssertionError) and the Java host check lifted: the bad-input tests assert
    that a refused input starts nothing, and need no Java to say so. The CLI uses this
    registry."""
    loaded = load_plugins()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a platform was created for an invalid run")

    for platform in loaded.platforms.values():
        mp.setattr(platform, "create", forbidden or refuse)
        if platform.check_host is check_java:  # a host check, not what these tests check
            mp.setattr(platform, "check_host", None)
    mp.setattr("bench.cli.commands._registry", lambda: loaded)
    yield loaded
