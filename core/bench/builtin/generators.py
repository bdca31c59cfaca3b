"""Built-in generators: ``active-power`` (ActivePowerRecords, open workload model, or the
records of a user's JSON template: ``bench run --job ... --record-template FILE``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench.api import ParamSpec, Registrar
from bench.hookspecs import hookimpl


class RecordTemplateParam(ParamSpec):
    """``recordTemplate``: a string that is JSON once its placeholders are filled in, checked
    before the run (a broken template would otherwise show only as rows the SUT cannot parse)."""

    def check(self, value: Any) -> None:
        super().check(value)
        from bench.runtime.load.generator import check_record_template

        try:
            check_record_template(str(value))
        except ValueError as exc:
            raise ValueError(f"is not JSON once {{key}} and {{timestamp}} are filled in: {exc}") from None


#: What ``bench.runtime.load.generator.run_active_power`` reads from its params; a generator
#: that wraps it (UC4's) declares these too, since every ``--set`` key reaches it.
ACTIVE_POWER_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("partitioner", str, choices=("murmur2", "round-robin"), doc="how keys map to partitions"),
    ParamSpec("keyOffset", int, min=0, doc="index of this instance's first key (set per instance)"),
    ParamSpec("valueInW", float, doc="the valueInW every record carries"),
    ParamSpec("seed", object, doc="seed of the random send phases"),
    ParamSpec("lingerMs", int, min=0, doc="producer linger.ms"),
    ParamSpec("acks", int, choices=(0, 1, -1), doc="producer acks"),
    ParamSpec("batchSize", int, min=1, doc="producer max batch size in bytes"),
    ParamSpec("compression", str, choices=("gzip", "snappy", "lz4", "zstd"), doc="producer compression"),
    RecordTemplateParam("recordTemplate", str,
                        doc="JSON record with {key} and {timestamp} placeholders, instead of an ActivePowerRecord"),
)


@hookimpl
def bench_register_generators(register: Registrar) -> None:
    # aiokafka is a core dependency, so importing the generator here is cheap enough.
    from bench.runtime.load.generator import ACTIVE_POWER

    register.generator(dataclasses.replace(ACTIVE_POWER, params=ACTIVE_POWER_PARAMS))
