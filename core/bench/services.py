"""Runtime services a plugin may call: the public entries into the core's runtime.

Each function imports the runtime only when called, so that the runtime's layout can
change without breaking a plugin, and so that importing this module stays cheap. Kept
apart from :mod:`bench.api`, which the runtime itself imports: these functions import
the runtime, and one module doing both would make an import cycle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bench.api import (
    EarlyDecision,
    GeneratorReport,
    GeneratorSpec,
    GeneratorType,
    ParamSpec,
    Series,
    SloContext,
    SloVerdict,
    sensor_keys,
)

if TYPE_CHECKING:
    from bench.runtime.kafka.security import KafkaSecurity


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


#: What the open-workload loop (:func:`open_workload`) reads from a generator's params:
#: a generator built on it declares these (``record_generator`` does), since every
#: ``--set`` key reaches it.
OPEN_WORKLOAD_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("partitioner", str, choices=("murmur2", "round-robin"), doc="how keys map to partitions"),
    ParamSpec("keyOffset", int, min=0, doc="index of this instance's first key (set per instance)"),
    ParamSpec("seed", object, doc="seed of the random send phases"),
    ParamSpec("lingerMs", int, min=0, doc="producer linger.ms"),
    ParamSpec("acks", int, choices=(0, 1, -1), doc="producer acks"),
    ParamSpec("batchSize", int, min=1, doc="producer max batch size in bytes"),
    ParamSpec("compression", str, choices=("gzip", "snappy", "lz4", "zstd"), doc="producer compression"),
)

#: What :func:`run_active_power` reads from its params; a generator that wraps it
#: (UC4's) declares these too, since every ``--set`` key reaches it.
ACTIVE_POWER_PARAMS: tuple[ParamSpec, ...] = (
    *OPEN_WORKLOAD_PARAMS,
    ParamSpec("valueInW", float, doc="the valueInW every record carries"),
    RecordTemplateParam("recordTemplate", str,
                        doc="JSON record with {key} and {timestamp} placeholders, instead of an ActivePowerRecord"),
)

#: ``record(key, timestamp_ms)``: the value of the record ``key`` sends at ``timestamp_ms``
#: (its scheduled time, epoch ms, also the Kafka record's timestamp); ``str`` goes out as UTF-8
RecordFunction = Callable[[str, int], bytes | str]


async def open_workload(spec: GeneratorSpec, record: RecordFunction) -> GeneratorReport:
    """Run one generator instance's open workload with ``record`` making each value.

    The loop the built-in ``active-power`` generator runs: one aiokafka producer (with
    :func:`kafka_security`), every key of ``spec.keys`` sends one record every
    ``spec.period_ms`` with its own random phase, keyed by the key (partitioned with
    murmur2 like any Kafka client, or ``partitioner: round-robin``), until
    ``spec.duration_s`` passes or the platform asks it to stop
    (:func:`bench.api.generator_control`). It reports progress every second, which the
    platform requires, and returns the rate the broker acknowledged. Use it inside a
    ``GeneratorType.run`` that does something first (read params, publish a registry);
    :func:`record_generator` builds the whole ``GeneratorType``. The params it reads:
    :data:`OPEN_WORKLOAD_PARAMS`.
    """
    from bench.runtime.load.generator import run_records

    return await run_records(spec, record)


def record_generator(
    name: str,
    description: str,
    record: RecordFunction | None = None,
    *,
    record_for: Callable[[GeneratorSpec], RecordFunction] | None = None,
    params: Sequence[ParamSpec] = (),
    keys: Callable[[int, Mapping[str, Any]], list[str]] | None = None,
    prepare: Callable[[GeneratorSpec], Awaitable[None]] | None = None,
) -> GeneratorType:
    """A :class:`bench.api.GeneratorType` whose records come from a function, on
    :func:`open_workload` (stop signal, progress, producer and rate schedule included).

    Give ``record(key, timestamp_ms) -> bytes | str``, or ``record_for(spec) -> record``
    when the records depend on the instance's params (``spec.params``: the merged
    ``--set`` and benchmark params). ``params`` declares what ``record_for`` reads (the
    loop's :data:`OPEN_WORKLOAD_PARAMS` are added); ``keys(load, params)`` names the keys
    for a load value (default ``s_0 ... s_{load-1}``); ``prepare`` as in ``GeneratorType``.
    """
    if (record is None) == (record_for is None):
        raise TypeError(f"record_generator {name!r}: give exactly one of record= and record_for=")

    async def run(spec: GeneratorSpec) -> GeneratorReport:
        function = record_for(spec) if record_for is not None else record
        assert function is not None
        return await open_workload(spec, function)

    own = {p.name for p in params}
    return GeneratorType(name=name, description=description, run=run, prepare=prepare,
                         keys=keys or sensor_keys,
                         params=(*params, *(p for p in OPEN_WORKLOAD_PARAMS if p.name not in own)))


async def run_active_power(spec: GeneratorSpec) -> GeneratorReport:
    """The built-in ``active-power`` generator's emitting loop (open workload model) for
    one instance, so that a plugin's generator (UC4's) measures exactly as it does."""
    from bench.runtime.load.generator import run_active_power as run

    return await run(spec)


def kafka_security() -> KafkaSecurity:
    """This process's Kafka client security settings (empty on PLAINTEXT).

    Every Kafka client a plugin builds must get them, or it works only on an unsecured
    cluster: ``AIOKafkaProducer(..., **kafka_security().aiokafka())``, or
    ``.confluent()`` for confluent-kafka's clients.
    """
    from bench.runtime.kafka.security import current

    return current()


def freeze_worker_heap() -> None:
    """Hide everything imported so far from the garbage collector, once per process; call
    it first in a function a PySpark Python worker runs per task (``mapInArrow``,
    ``foreachBatch`` helpers): a reused worker otherwise collects its whole heap after
    every task (:mod:`bench.runtime.kafka.source.worker_heap`)."""
    from bench.runtime.kafka.source.worker_heap import freeze_worker_heap as freeze

    freeze()


def trend_decision(series: Series, ctx: SloContext, threshold: float, operator: str,
                   lag: bool = False) -> EarlyDecision:
    """The early decision of an SLO on the OLS trend of one repetition's ``series``, for
    :attr:`SloType.decide_early` (the rule: :mod:`bench.slo.early_stop`). The caller resolves
    ``threshold`` exactly as its ``check`` does, so that an early verdict is the final one.
    ``operator`` is the comparison of slope and threshold that passes: ``lt``, ``lte``,
    ``gt`` or ``gte`` (``lt``: the slope must stay below the threshold). ``lag=True`` when
    ``series`` is the consumer lag: no early "fail" while the SUT has consumed nothing
    since the warm-up. It reads two optional SLO properties from ``ctx.properties``:
    ``earlyStopConfidence`` (two-sided confidence of the slope's interval, default 0.99,
    at least 0.5) and ``earlyStopMinSamples`` (samples after the warm-up before any
    decision, at least 3)."""
    from bench.slo.early_stop import trend_decision as decide

    return decide(series, ctx, threshold, operator, lag=lag)


def external_slo_verdict(properties: Mapping[str, Any], series: Sequence[Series], threshold: float,
                         warmup: float, extra: Sequence[str] = ()) -> SloVerdict | None:
    """The verdict of the external SLO checker an SLO's properties name
    (``externalSloChecker`` / ``externalSloUrl``, :mod:`bench.slo.external`), or None when
    they name none or one of the reference's bundled checkers, whose rule the SLO type
    applies itself. ``extra``: properties passed on in the metadata when given."""
    from bench.slo.external import external_url, external_verdict, metadata

    url = external_url(properties)
    if url is None:
        return None
    return external_verdict(url, series, metadata(properties, threshold, warmup, extra))
