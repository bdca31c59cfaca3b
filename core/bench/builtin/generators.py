"""Built-in generators: ``active-power`` (ActivePowerRecords, open workload model, or the
records of a user's JSON template: ``bench run --job ... --record-template FILE``).

It runs on the same open-workload loop and the same :class:`bench.api.GeneratorControl`
that ``bench.services.open_workload`` and ``record_generator`` give a plugin; only its
record encoding is its own (a per-key bytes template, the loop's hot path).
"""

from __future__ import annotations

import dataclasses

from bench.api import Registrar, hookimpl
from bench.services import ACTIVE_POWER_PARAMS


@hookimpl
def bench_register_generators(register: Registrar) -> None:
    # aiokafka is a core dependency, so importing the generator here is cheap enough.
    from bench.runtime.load.generator import ACTIVE_POWER

    register.generator(dataclasses.replace(ACTIVE_POWER, params=ACTIVE_POWER_PARAMS))
