"""The HTML report (placeholder until its commit)."""

from __future__ import annotations

from bench.analysis.runs import RunFiles


def build_report(runs: list[RunFiles], confidence: float = 0.95) -> str:
    raise NotImplementedError
