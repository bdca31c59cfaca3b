"""Built-in generators: ``active-power`` (ActivePowerRecords, open workload model, or the
records of a user's JSON template: ``bench run --job ... --record-template FILE``)."""

from __future__ import annotations

import dataclasses

from bench.api import Registrar
from bench.hookspecs import hookimpl
from bench.services import ACTIVE_POWER_PARAMS


@hookimpl
def bench_register_generators(register: Registrar) -> None:
    # aiokafka is a core dependency, so importing the generator here is cheap enough.
    from bench.runtime.load.generator import ACTIVE_POWER

    register.generator(dataclasses.replace(ACTIVE_POWER, params=ACTIVE_POWER_PARAMS))
