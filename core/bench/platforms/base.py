"""The interface every platform implements (embedded, external, kubernetes).

The engine drives one experiment through these calls in this order:
``reset_topics`` -> ``start_sut`` -> (delay) -> ``start_generators`` -> ``sample`` every
sampling interval for ``duration`` -> ``stop_generators`` -> ``stop_sut`` ->
``delete_topics``. ``open``/``close`` bracket a whole run. Everything is async; blocking
work runs in threads or subprocesses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bench.api import GeneratorReport, Manifest, UseCase


@dataclass
class TopicSpec:
    logical: str  # input, output, configuration, aggregation-feedback
    name: str  # the real (fresh per experiment) name
    partitions: int = 4


@dataclass
class ExperimentSpec:
    """Everything a platform needs for one repetition of one experiment."""

    experiment_id: str  # unique per repetition, used for topic and group names
    use_case: UseCase
    objects: list[Manifest]  # patched deployment (BenchSut / BenchGenerator or k8s)
    topics: list[TopicSpec]
    params: Mapping[str, Any]  # SUT + generator parameters after --set
    load: float
    resources: float
    group_id: str = "bench-sut"

    def topic_map(self) -> dict[str, str]:
        return {t.logical: t.name for t in self.topics}


@dataclass
class Sample:
    """SLI values read at one instant (epoch seconds)."""

    timestamp: float
    values: dict[str, float] = field(default_factory=dict)


class Platform(Protocol):
    name: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def reset_topics(self, spec: ExperimentSpec) -> None: ...

    async def start_sut(self, spec: ExperimentSpec) -> None: ...

    async def start_generators(self, spec: ExperimentSpec) -> None: ...

    async def sample(self, spec: ExperimentSpec) -> Sample:
        """Read every SLI this platform knows now: at least ``lag`` (records, clamped
        at 0); where available ``dropped-records`` (cumulative), ``input-rate``,
        ``generated-records``, ``malformed-records``, ``batch-duration``."""
        ...

    async def stop_generators(self, spec: ExperimentSpec) -> Sequence[GeneratorReport]: ...

    async def stop_sut(self, spec: ExperimentSpec) -> None: ...

    async def delete_topics(self, spec: ExperimentSpec) -> None: ...
