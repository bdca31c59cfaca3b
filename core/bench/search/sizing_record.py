"""What a sizing is made of and how it is kept: the probes' figures, the chosen values,
the reason, as ``exp<id>-sizing.json`` holds them and ``bench report`` prints them.

Apart from the arithmetic that chooses (:mod:`bench.search.sizing`) because the CLI, the
result outcome and the report read a sizing without choosing anything.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

#: of the records/s the load path pushed when it fell behind, the share a load may ask
#: (a generator more than 1 % short faults the experiment)
PATH_SHARE = 0.7
#: where the load path kept up with the probe, the records/s a load may ask, in the
#: probe's: a path that kept up pushes more still. The generator alone pushes 2 million
#: records/s (docs/performance.md, "Generator"), and beside three quarter-core UC1
#: instances on 2 cores the path pushed 80,000 (twice the probe's 40,000). The probe
#: itself stays moderate: a Spark SUT far behind reads more per second in its ever larger
#: micro-batches (two UC1 instances: 20,051 records/s each of 40,000, 37,669 of 80,000),
#: which a run's verdict does not see.
PATH_HEADROOM = 2.0

@dataclass
class AutoSize:
    """What the user left to bench (``RunConfig.auto``): the loads, the resources, or both."""

    loads: bool
    resources: bool
    #: why the CPU limit per instance may not be lowered (the user gave it), or None
    cpu_fixed: str | None = None


@dataclass
class ProbeFigures:
    """One probe as sizing reads it."""

    #: records/s one instance processed (a lower bound when not saturated)
    per_instance_rate: float
    saturated: bool
    #: records/s the load asked for, and what the generators wrote (None: not counted)
    load_rate: float
    input_rate: float | None
    #: the CPU limit per instance it ran at (0: none)
    cpu: float
    load: float = 0.0
    seconds: float = 0.0
    source: str = ""
    #: the instances the probe ran (its records/s divided among them)
    instances: float = 1.0

    @property
    def path_limited(self) -> bool:
        """Whether the load path fell behind the probe's load (it pushed its most)."""
        return self.input_rate is not None and self.input_rate < 0.95 * self.load_rate

    @property
    def path_rate(self) -> float:
        """Records/s the load path pushed: its limit when it fell behind, else a lower bound."""
        return self.input_rate if self.path_limited and self.input_rate is not None else self.load_rate

    @property
    def lag_growth(self) -> float:
        """Records/s the lag grew by: what the generators wrote less what the instances read."""
        written = self.input_rate if self.input_rate is not None else self.load_rate
        return written - self.per_instance_rate * self.instances

    @property
    def usable_rate(self) -> float:
        """The heaviest records/s a sized load may ask."""
        return PATH_SHARE * self.path_rate if self.path_limited else PATH_HEADROOM * self.path_rate


@dataclass
class Sizing:
    """What the probes measured and what was chosen from it, kept in ``exp<id>-sizing.json``."""

    probes: list[ProbeFigures]
    #: the chosen values; None: the user's were kept
    loads: list[float] | None
    resources: list[float] | None
    #: load -> records/s, for the chosen or given loads
    rates: dict[float, float] = field(default_factory=dict)
    #: the CPU limit per instance the run uses, and the use case's own one when it was lowered
    cpu: float = 0.0
    cpu_lowered_from: float | None = None
    reason: str = ""
    #: one line of what to do where bench could not size a curve; None when it could
    advice: str | None = None
    #: the probe's own sure failure (``bench.execution.probe_verdict``): load, records/s,
    #: instances, CPU limit, SLO, slope, its interval's low end, threshold; None: none
    probe_fail: dict[str, Any] | None = None
    #: what a flat measured table added (``bench.search.flat_table.Extension.to_json``); None: nothing
    added: dict[str, Any] | None = None
    #: the probe's sure pass (``probe_verdict.probe_pass``): load, the records/s its instances
    #: kept up with, the records/s a load may ask to pass, instances, CPU limit; None: none
    probe_pass: dict[str, Any] | None = None

    @property
    def per_instance_rate(self) -> float:
        return self.probes[-1].per_instance_rate if self.probes else 0.0

    @property
    def lower_bound(self) -> bool:
        """Whether the records/s per instance is only a lower bound (the probe's instances kept up)."""
        return bool(self.probes) and not self.probes[-1].saturated

    def to_json(self) -> dict[str, Any]:
        return {"probes": [asdict(p) for p in self.probes], "loads": self.loads, "resources": self.resources,
                "rates": [[k, v] for k, v in self.rates.items()], "cpuPerInstance": self.cpu,
                "cpuLoweredFrom": self.cpu_lowered_from, "reason": self.reason, "advice": self.advice,
                "probeFail": self.probe_fail, "added": self.added, "probePass": self.probe_pass}

    @classmethod
    def from_json(cls, data: Any) -> Sizing | None:
        """The stored sizing, or None when it does not read as one (``--resume`` probes again)."""
        if not isinstance(data, dict):
            return None
        try:
            probes = [ProbeFigures(**p) for p in data["probes"]]
            loads = None if data["loads"] is None else [float(x) for x in data["loads"]]
            resources = None if data["resources"] is None else [float(x) for x in data["resources"]]
            rates = {float(k): float(v) for k, v in data.get("rates") or []}
            cpu = float(data.get("cpuPerInstance") or 0.0)
            lowered = data.get("cpuLoweredFrom")
            fail, added, passed = data.get("probeFail"), data.get("added"), data.get("probePass")
            return cls(probes, loads, resources, rates, cpu, None if lowered is None else float(lowered),
                       str(data.get("reason") or ""), data.get("advice"), dict(fail) if fail else None,
                       dict(added) if added else None, dict(passed) if passed else None)
        except (KeyError, TypeError, ValueError):
            return None

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def describe(self) -> list[str]:
        """The lines ``bench report`` and ``--resume`` show: each probe's, then the choice."""
        return [probe_line(p) for p in self.probes] + self.choice()

    def choice(self) -> list[str]:
        """What was chosen and why: printed once the probes are done (each probe's line is
        printed as it ends, :func:`probe_line`)."""
        lines = []
        chosen = []
        if self.loads is not None:
            chosen.append("loads " + ", ".join(f"{x:g} ({self.rates.get(x, 0):,.0f} records/s)" for x in self.loads))
        if self.resources is not None:
            chosen.append("resources " + ", ".join(f"{x:g}" for x in self.resources))
        if self.cpu_lowered_from is not None:
            chosen.append(f"CPU per instance {self.cpu:g} (the use case's {self.cpu_lowered_from:g})")
        if chosen:
            lines.append("sized for this machine: " + "; ".join(chosen))
        if self.reason:
            lines.append(f"  why: {self.reason}")
        if self.advice:
            lines.append(f"  {self.advice}")
        if self.probe_fail:
            f = self.probe_fail
            how = (f"its lag grew {float(f['slope']):,.0f} records/s between batch ends" if f.get("basis") == "batches"
                   else f"slope {float(f['slope']):,.4g}, at least {float(f['low']):,.4g}")
            lines.append(f"  the probe failed {float(f['rate']):,.0f} records/s on {float(f['instances']):g} instances "
                         f"({f['slo']}: {how}, vs {float(f['threshold']):,.4g}): a heavier load on as many instances "
                         "or fewer fails too, and is not measured again")
        if self.probe_pass:
            p = self.probe_pass
            lines.append(f"  the probe's {float(p['instances']):g} instances kept up with {float(p['kept_up']):,.0f} "
                         f"records/s: a load of at most {float(p['rate']):,.0f} on as many instances or more passes, "
                         "and is not measured")
        if self.added:
            lines.append(f"  the measured table was flat: {self.added['why']}")
        return lines


def probe_line(p: ProbeFigures) -> str:
    """One probe's figures as one line (an estimate's too)."""
    cpu = f"{p.cpu:g} core per instance" if p.cpu else "no CPU limit"
    if p.source == "estimated":
        return f"sizing estimate ({cpu}): {p.per_instance_rate:,.0f} records/s per instance"
    on = f"{p.instances:g} instances, " if p.instances != 1 else ""
    bound = "" if p.saturated else " at least (not saturated)"
    path = (f"the load path pushed {p.path_rate:,.0f} of {p.load_rate:,.0f} records/s" if p.path_limited
            else f"the load path kept up with {p.load_rate:,.0f} records/s")
    return f"sizing probe ({on}{cpu}): {p.per_instance_rate:,.0f} records/s per instance{bound}; {path}"
