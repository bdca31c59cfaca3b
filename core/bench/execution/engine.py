"""The names callers of the run loop import; the loop itself is :mod:`bench.execution`."""

from __future__ import annotations

from bench.execution.config import RunConfig, RunOutcome
from bench.execution.deployment import build_objects, merged_params
from bench.execution.experiments import NOT_FAULTS
from bench.execution.run import Engine

#: the exceptions that end a run instead of being retried as a fault
_NOT_FAULTS = NOT_FAULTS

__all__ = ["Engine", "RunConfig", "RunOutcome", "build_objects", "merged_params"]
