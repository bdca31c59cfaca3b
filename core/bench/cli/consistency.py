"""Checks across a run's inputs, made once they are all resolved and before anything
starts: options that exclude each other, a ``--set`` a patcher would replace, a threshold
expression over the execution's whole load x resource grid, ``--expect`` of the other
metric. Apart from :mod:`bench.cli.checks` (one input at a time) because each rule here
reads several inputs together; every one raises
:class:`bench.config.model.ConfigError` (one line, exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bench.config.base import ConfigError, Execution


def check_resolved(opts: Mapping[str, Any], use_case: Any, slos: Iterable[Any], execution: Execution,
                   ptype: Any = None) -> None:
    """The rules of this module that need no deployment built, in one call (``opts``: the
    options with the platform's, as the platform reads them; ``ptype``: its PlatformType)."""
    check_option_pairs(opts, use_case)
    if ptype is not None:
        check_platform_inputs(opts, ptype)
    check_threshold_expressions(slos, execution.load.loadValues, execution.resources.resourceValues)
    if opts.get("expected_metric"):  # --expect OLD: its table is of the metric this run finds
        check_expect(str(opts.get("expect")), str(opts["expected_metric"]), execution.execution.metric)


def check_strategy(strategy: Any) -> None:
    """``execution.strategy`` is a mapping; ``strategy: 5`` ended in a TypeError."""
    if not isinstance(strategy or {}, dict):
        raise ConfigError(f"execution.execution.strategy: expected a mapping (name: linear, restrictions: "
                          f"[LowerBound]), got {strategy!r:.40}")


def check_threshold_expressions(slos: Iterable[Any], loads: Iterable[float], resources: Iterable[float]) -> None:
    """Every SLO whose threshold is an expression, evaluated at every (load, resources)
    pair of the execution: an expression that divides by zero, overflows or turns
    negative at one of them is refused now, with that point, rather than found by the
    experiment there after the lighter ones ran."""
    from bench import slo_math

    loads, resources = list(loads), list(resources)
    for slo in slos:
        props = slo.properties
        if slo_math.reference_threshold_key(props, slo_math.THRESHOLD_FORMS) != "thresholdFromExpression":
            continue
        try:
            slo_math.check_expression(str(props["thresholdFromExpression"]), loads, resources)
        except ValueError as exc:
            raise ConfigError(f"slo {slo.name!r}: {exc}") from None

def check_option_pairs(opts: Mapping[str, Any], use_case: Any) -> None:
    """Options that exclude each other, or that the chosen use case cannot use: accepted,
    one of them was silently ignored (a cluster of three brokers never started because
    Kafka was given; Spark settings for a use case that runs no Spark)."""
    if opts.get("bootstrap_servers"):
        for option in ("brokers", "broker"):
            if opts.get(option) is not None:
                raise ConfigError(f"--{option} {opts[option]}: starts an embedded broker, and --bootstrap-servers "
                                  "uses the Kafka there instead; give one of them")
    if opts.get("spark_master") and opts.get("spark_mode"):
        raise ConfigError(f"--spark-mode {opts['spark_mode']}: chooses the Spark bench starts, and --spark-master "
                          f"{opts['spark_master']} uses that one instead; give one of them")
    if opts.get("spark_conf") and getattr(use_case, "topology", None) is None:
        raise ConfigError(f"--conf {opts['spark_conf'][0]}: the use case {use_case.name!r} runs no Spark job, so no "
                          "Spark setting reaches it; drop --conf")


def check_platform_inputs(opts: Mapping[str, Any], ptype: Any) -> None:
    """Inputs the chosen platform cannot serve, found before it starts anything: SASL or
    TLS client settings for the broker bench starts itself (it listens in PLAINTEXT only,
    so every client would fail to connect after the broker, Spark and the generator had
    started), and Spark's native Kafka connector on this machine without its JARs (the
    SUT would die at its first query)."""
    starts_broker = ptype.option("broker") is not None and not opts.get("bootstrap_servers")
    if starts_broker and (opts.get("kafka_config") or opts.get("kafka_config_file")):
        from bench.runtime.kafka.security import KafkaSecurity

        security = KafkaSecurity.parse(opts.get("kafka_config") or (), opts.get("kafka_config_file"))
        if security.protocol != "PLAINTEXT":
            raise ConfigError(f"{security.where('security.protocol')} security.protocol={security.protocol}: the "
                              f"broker the {ptype.name} platform starts has no SASL or TLS; give "
                              "--bootstrap-servers of a Kafka that does, or drop the setting")
    local_spark = ptype.option("spark_mode") is not None  # the platforms that run Spark on this machine
    if local_spark and opts.get("connector") == "native":
        from bench.runtime.host.jars import INSTALL_HINT, cache_dir, native_connector_available

        if not native_connector_available():
            raise ConfigError(f"--connector native: Spark's Kafka connector is not installed in {cache_dir()}; "
                              f"{INSTALL_HINT}, or give --connector python")


def check_expect(source: str, expected_metric: str, metric: str) -> None:
    """``--expect OLD`` holds a table of the metric the run will find: a demand table
    compared with a capacity one is found now, not after the whole run."""
    if expected_metric != metric:
        raise ConfigError(f"--expect {source}: holds a {expected_metric} table, and this run finds the {metric}; "
                          f"give a {metric} run (or --metric {expected_metric})")
