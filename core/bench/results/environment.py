"""``exp<id>-environment.json``: what actually ran, next to what it measured.

Why: a demand measured on a Kafka-protocol imitation, through bench's Python source,
or on a machine busy with something else does not transfer to another setup, and
bench falls back silently-never but automatically (no Maven, no JARs). Every run
therefore records the broker (implementation, version, nodes), the Spark Kafka
connector, Spark, Java and Python versions, bench and plugin versions, the host's
cores and memory, and the load average at the start and end of each experiment.
"""

from __future__ import annotations

import functools
import json
import os
import platform as pyplatform
import re
import subprocess
import time
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.results.store import atomic_write
from bench.runtime.kafka.security import current as kafka_security


@functools.lru_cache(maxsize=1)
def java_version() -> str | None:
    """``java -version``'s first line (Spark and Kafka run on that JVM), or None."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (out.stderr or out.stdout).strip().splitlines()
    return first[0] if first else None


def _memory_bytes() -> int | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    match = re.search(r"MemTotal:\s+(\d+) kB", text)
    return int(match.group(1)) * 1024 if match else None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def distributions() -> dict[str, str]:
    """bench and every installed plugin distribution (entry point group ``bench.plugins``), with versions."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and (name == "bench" or any(ep.group == "bench.plugins" for ep in dist.entry_points)):
            found[name] = dist.version
    return dict(sorted(found.items()))


def host() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "memoryBytes": _memory_bytes(),
        "system": f"{pyplatform.system()} {pyplatform.release()}",
        "machine": pyplatform.machine(),
        "hostname": pyplatform.node(),
    }


class EnvironmentRecord:
    """Collected once per run, rewritten (atomically) after every experiment."""

    def __init__(self, path: Path, runtime: Mapping[str, Any]) -> None:
        import pyspark

        self.path = path
        self.data: dict[str, Any] = {
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **dict(runtime),
            "java": java_version(),
            "python": pyplatform.python_version(),
            "packages": distributions(),
            "kafkaClientSecurity": kafka_security().redacted(),
            "host": host(),
            "experiments": [],
        }
        self._open: dict[tuple[float, float], dict[str, Any]] = {}
        self._refresh: Callable[[], Mapping[str, Any]] | None = None
        self.data["spark"] = {"version": pyspark.__version__, **dict(runtime.get("spark") or {})}

    @classmethod
    def of_platform(cls, path: Path, platform: object) -> EnvironmentRecord:
        """Platforms that can say what runs implement ``describe()``; others record only the host side."""
        describe = getattr(platform, "describe", None)
        runtime = describe() if callable(describe) else {"platform": getattr(platform, "name", None)}
        record = cls(path, runtime)
        if callable(describe):
            record._refresh = describe  # what the platform learns during the run (a CPU limit) is kept
        return record

    def experiment_started(self, load: float, resources: float) -> None:
        entry = {"load": load, "resources": resources, "started": time.time(), "loadAverageStart": load_average()}
        self._open[(load, resources)] = entry
        self.data["experiments"].append(entry)

    def experiment_finished(self, load: float, resources: float, cores_per_instance: float | None = None) -> None:
        """``cores_per_instance``: the CPU an SUT instance had (a CPU limit counts), for cost figures."""
        entry = self._open.pop((load, resources), None)
        if entry is not None:
            entry["finished"] = time.time()
            entry["loadAverageEnd"] = load_average()
            entry["coresPerInstance"] = cores_per_instance
        self.write()

    def refresh(self) -> None:
        """Take in what the platform learnt since (whether a CPU limit applied, ...)."""
        if self._refresh is not None:
            fresh = dict(self._refresh())
            self.data["spark"] = {**self.data["spark"], **dict(fresh.pop("spark", None) or {})}
            self.data.update(fresh)

    def write(self) -> None:
        self.refresh()
        atomic_write(self.path, json.dumps(self.data, indent=2, default=str))
