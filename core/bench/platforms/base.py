"""Where the platform contracts used to live; they are public contracts, so they moved to
``bench.api`` (one module for everything a plugin implements). Re-exported here so that
``from bench.platforms.base import ExperimentSpec`` keeps working.
"""

from __future__ import annotations

from bench.api import ExperimentSpec, Platform, Sample, TopicSpec

__all__ = ["ExperimentSpec", "Platform", "Sample", "TopicSpec"]
