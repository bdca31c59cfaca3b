"""Built-in generators: ``active-power`` (ActivePowerRecords, open workload model)."""

from __future__ import annotations

from bench.api import Registrar
from bench.hookspecs import hookimpl


@hookimpl
def bench_register_generators(register: Registrar) -> None:
    # aiokafka is a core dependency, so importing the generator here is cheap enough.
    from bench.runtime.generator import ACTIVE_POWER

    register(ACTIVE_POWER)
