"""The framework's own Prometheus metrics (prometheus-client).

One module owns every metric so that the runtime updates and the exporter (and a
Prometheus server scraping it) agree on names. Label ``experiment`` is the
repetition's experiment id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, start_http_server

CONSUMER_LAG = Gauge(
    "bench_consumer_lag", "Consumer lag of the SUT group (records, clamped at 0)", ["experiment", "group"]
)
GENERATOR_RATE = Gauge("bench_generator_rate", "Records/s the load generators achieved", ["experiment"])
GENERATOR_TARGET = Gauge("bench_generator_target_rate", "Records/s the generators aim at", ["experiment"])
SPARK_INPUT_RATE = Gauge("bench_spark_input_rows_per_second", "Spark input rows/s", ["experiment"])
SPARK_PROCESSED_RATE = Gauge(
    "bench_spark_processed_rows_per_second", "Spark processed rows/s", ["experiment"]
)
SPARK_BATCH_DURATION = Gauge(
    "bench_spark_batch_duration_seconds", "Duration of the last micro-batch", ["experiment"]
)
SPARK_DROPPED = Gauge(
    "bench_spark_dropped_rows", "Rows dropped by watermark (cumulative)", ["experiment"]
)
MALFORMED = Gauge("bench_malformed_records", "Malformed input records skipped (cumulative)", ["experiment"])
EXPERIMENTS = Counter("bench_experiments", "SLO experiments finished", ["verdict"])
#: the values of EXPERIMENTS' label: an experiment's outcome
VERDICTS = ("passed", "failed", "error")


#: the gauges labelled by the CLI per experiment (first label ``experiment``)
PER_EXPERIMENT = (CONSUMER_LAG, GENERATOR_RATE, GENERATOR_TARGET, SPARK_INPUT_RATE, SPARK_PROCESSED_RATE,
                  SPARK_BATCH_DURATION, SPARK_DROPPED, MALFORMED)


def forget_experiment(experiment: str) -> None:
    """Drop an ended experiment's series: prometheus-client keeps every label set it was
    given for the life of the process, so a run of hundreds of experiments held every
    one's gauges (and exported them, stale, at every scrape)."""
    for gauge in PER_EXPERIMENT:
        for labels in [k for k in list(gauge._metrics) if k and k[0] == experiment]:  # noqa: SLF001 - no public listing
            gauge.remove(*labels)


def count_experiment(outcome: str) -> None:
    """One finished SLO experiment by its outcome (``passed``, ``failed``, ``error``)."""
    EXPERIMENTS.labels(outcome if outcome in VERDICTS else "error").inc()


def start_exporter(port: int, addr: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY) -> None:
    """Serve /metrics; port 0 is not supported by prometheus-client's helper, pick one."""
    start_http_server(port, addr=addr, registry=registry)


# --------------------------------------------------------------------------- exported by the SUT
#
# On Kubernetes the engine cannot read the driver's stdout, so the driver itself serves
# these and the platform reads them back from Prometheus (bench.platforms.kubernetes.platform).
# Label ``group`` is the SUT's consumer group: fresh per repetition, so a repetition
# never reads a value its predecessor's driver left in Prometheus.

SUT_DROPPED = Gauge(
    "bench_sut_dropped_records", "Rows the SUT's state operators dropped by watermark (cumulative)",
    ["experiment", "group"],
)  # fmt: skip
SUT_MALFORMED = Gauge(
    "bench_sut_malformed_records", "Malformed input records the SUT skipped (cumulative)", ["experiment", "group"]
)
SUT_INPUT_RATE = Gauge("bench_sut_input_rows_per_second", "Spark input rows/s", ["experiment", "group"])
SUT_PROCESSED_RATE = Gauge("bench_sut_processed_rows_per_second", "Spark processed rows/s", ["experiment", "group"])
SUT_BATCHES = Gauge("bench_sut_batches", "Micro-batches finished (cumulative)", ["experiment", "group"])

#: default port of the SUT driver's exporter on Kubernetes (the JMX exporter's habit)
SUT_METRICS_PORT = 9404

Emit = Callable[[Mapping[str, Any]], None]


def export_progress(experiment: str, group: str, event: Mapping[str, Any]) -> None:
    """One progress line of the Spark driver (:class:`bench.runtime.spark.sut_query.ProgressTotals`)
    into the SUT gauges."""
    SUT_DROPPED.labels(experiment, group).set(float(event.get("droppedByWatermark") or 0))
    SUT_MALFORMED.labels(experiment, group).set(float(event.get("malformed") or 0))
    SUT_INPUT_RATE.labels(experiment, group).set(float(event.get("inputRowsPerSecond") or 0.0))
    SUT_PROCESSED_RATE.labels(experiment, group).set(float(event.get("processedRowsPerSecond") or 0.0))
    SUT_BATCHES.labels(experiment, group).inc()


def exporting(emit: Emit, spec: Mapping[str, Any], serve: Callable[[int, str], None] | None = None) -> Emit:
    """``emit`` that also exports each progress line, when the driver's spec asks for it
    (``metrics_port``); otherwise ``emit`` itself, so the embedded platform pays nothing.

    The counters start at 0 as soon as the exporter serves: a scrape before the first
    micro-batch then says "nothing dropped yet", which is true, instead of "no data",
    which the platform must treat as a gap.
    """
    port = spec.get("metrics_port")
    if not port:
        return emit
    experiment, group = str(spec.get("experiment") or ""), str(spec.get("group_id") or "")
    for gauge in (SUT_DROPPED, SUT_MALFORMED, SUT_INPUT_RATE, SUT_PROCESSED_RATE, SUT_BATCHES):
        gauge.labels(experiment, group).set(0)
    (serve or (lambda p, a: start_exporter(p, addr=a)))(int(port), "0.0.0.0")  # noqa: S104 - scraped from outside the pod

    def wrapped(event: Mapping[str, Any]) -> None:
        if event.get("event") == "progress":
            export_progress(experiment, group, event)
        emit(event)

    return wrapped
