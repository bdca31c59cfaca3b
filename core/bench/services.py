"""Runtime services a plugin may call: the public entries into the core's runtime.

Each function imports the runtime only when called, so that the runtime's layout can
change without breaking a plugin, and so that importing this module stays cheap. Kept
apart from :mod:`bench.api`, which the runtime itself imports: these functions import
the runtime, and one module doing both would make an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bench.api import EarlyDecision, GeneratorReport, GeneratorSpec, ParamSpec, Series, SloContext, SloVerdict

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


#: What :func:`run_active_power` reads from its params; a generator that wraps it
#: (UC4's) declares these too, since every ``--set`` key reaches it.
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
    ``lag=True`` when ``series`` is the consumer lag: no early "fail" while the SUT has
    consumed nothing since the warm-up."""
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
