"""The framework's own Prometheus metrics (prometheus-client).

One module owns every metric so that the runtime updates and the exporter (and a
Prometheus server scraping it) agree on names. Label ``experiment`` is the
repetition's experiment id.
"""

from __future__ import annotations

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


def start_exporter(port: int, addr: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY) -> None:
    """Serve /metrics; port 0 is not supported by prometheus-client's helper, pick one."""
    start_http_server(port, addr=addr, registry=registry)
