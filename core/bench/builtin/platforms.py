"""Built-in platforms: what each reads, honours and needs, and how to create it.

Factories import lazily: the CLI must start fast and a missing optional dependency of
one platform must not break the others. Everything that differs between platforms
while a run is prepared lives here, so the run's preparation (:mod:`bench.cli.launch`)
never names a platform.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.api import (
    ExperimentSpec,
    Manifest,
    PlatformCapabilities,
    PlatformOption,
    PlatformType,
    Registrar,
    UseCase,
)
from bench.hookspecs import hookimpl

if TYPE_CHECKING:
    from bench.plugins import Registry

#: the platform of ``bench run`` without ``--platform``
DEFAULT_PLATFORM = "embedded"

# --------------------------------------------------------------------------- options

BOOTSTRAP = PlatformOption("bootstrap_servers", "Kafka to use (HOST:PORT,...)", "--bootstrap-servers")
TRIGGER = PlatformOption("trigger_seconds", "Spark micro-batch trigger interval in seconds", "--trigger",
                         float, min=0)
CONNECTOR = PlatformOption("connector", "Spark's Kafka I/O: native or python", "--connector",
                           choices=("native", "python"))


def _spark_keys(conf: Mapping[str, str]) -> None:
    for key in conf:
        if not key.startswith("spark."):
            raise ValueError(f"--conf {key}: Spark reads only keys that start with 'spark.'")


SPARK_CONF = PlatformOption("spark_conf", "Spark configuration of the SUT's session, e.g. "
                            "spark.sql.shuffle.partitions=8; recorded in exp<id>-environment.json", "--conf", dict,
                            validate=_spark_keys)
METRICS_PORT = PlatformOption("metrics_port", "port of the run's Prometheus metrics", "--metrics-port", int,
                              min=1, max=65535)
#: Whether the Spark driver runs the topology over throw-away topics before the
#: experiment's query starts (:func:`bench.runtime.spark.sut_query.warm_up`, 4-8 s per
#: SUT start on 2 cores). Off only for runs whose verdicts do not matter (tests of
#: faults, interrupts, plumbing; smoke runs): the first measured micro-batch then
#: compiles the plan, so the early lag is distorted.
SPARK_WARMUP = PlatformOption("spark_warmup", "warm the SUT's query up before measuring (default; "
                              "--no-spark-warmup: faster smoke runs and tests, but the first micro-batch's plan "
                              "compilation distorts the early lag)", "--spark-warmup", bool, default=True)
#: what the platforms that run the SUT on this machine read besides Kafka
LOCAL_SPARK = (
    PlatformOption("spark_master", "Spark master URL instead of local Spark", "--spark-master"),
    PlatformOption("spark_mode", "local Spark: local[N] in one JVM or a standalone master + workers",
                   "--spark-mode", choices=("local", "standalone")),
    SPARK_WARMUP,
    TRIGGER,
    CONNECTOR,
    SPARK_CONF,
    METRICS_PORT,
)
EMBEDDED_OPTIONS = (
    PlatformOption("bootstrap_servers", "Kafka to use instead of starting a broker", "--bootstrap-servers"),
    PlatformOption("broker", "the broker to start: kafka, noida or tansu", "--broker",
                   choices=("kafka", "noida", "tansu")),
    PlatformOption("brokers", "nodes of the started Apache Kafka cluster", "--brokers", int, min=1, max=9),
    *LOCAL_SPARK,
)
EXTERNAL_OPTIONS = (BOOTSTRAP, *LOCAL_SPARK)
KUBERNETES_OPTIONS = (
    PlatformOption("bootstrap_servers", "Kafka the pods and bench reach (else BENCH_K8S_KAFKA_BOOTSTRAP)",
                   "--bootstrap-servers"),
    PlatformOption("namespace", "namespace (else $BENCH_K8S_NAMESPACE or 'default')", "--namespace"),
    TRIGGER,
    CONNECTOR,
    SPARK_CONF,
    METRICS_PORT,
)

# --------------------------------------------------------------------------- capabilities

#: patchers of Kubernetes objects and fields: the local platforms read only the BenchSut
#: and BenchGenerator fields (replicas, cores, memory, CPU limit, sensors, period, params)
KUBERNETES_ONLY_PATCHERS = frozenset({
    "EnvVarPatcher", "ResourceLimitPatcher", "ResourceRequestPatcher", "ConfigMapYamlPatcher",
    "ConfigMapPropertiesPatcher", "LabelPatcher", "MatchLabelPatcher", "TemplateLabelPatcher",
    "ServiceSelectorPatcher", "NamePatcher", "ImagePatcher", "NodeSelectorPatcher", "SchedulerNamePatcher",
    "DataVolumeLoadGeneratorReplicaPatcher",
})
#: the informational SLIs every built-in platform samples (bench.runtime.info_sampler):
#: output latency percentiles and rate (use cases with an output topic), the records the
#: SUT committed per second, and the load and CPU of the host bench runs on
INFO_SLIS = frozenset({
    "latency-p50", "latency-p95", "latency-p99", "latency-max", "latency-share", "output-rate", "processed-rate",
    "host-load1", "host-cpu", "host-steal",
})
#: CPU and memory of the SUT's processes: only where they run on bench's host
SUT_PROCESS_SLIS = frozenset({"sut-cpu", "sut-rss"})
#: every SLI the local platforms sample: lag, the generators' and the Spark driver's reports
LOCAL_SLIS = frozenset({
    "lag", "generated-records", "generator-rate", "dropped-records", "malformed-records", "input-rate",
    "batch-duration", "spark-processed-rate", "spark-input-rows", "spark-batch-end",
}) | INFO_SLIS | SUT_PROCESS_SLIS
LOCAL = PlatformCapabilities(slis=LOCAL_SLIS, ignored_patchers=KUBERNETES_ONLY_PATCHERS,
                             kafka_security=True, local_job=True)
#: the SUT's dropped and malformed records and the generator pods' records and rate only
#: with ``prometheus_url``; Kafka security reaches the pods from a Secret, ``--job`` as a ConfigMap
KUBERNETES = PlatformCapabilities(slis=frozenset({"lag", "dropped-records", "malformed-records",
                                                  "generated-records", "generator-rate"}) | INFO_SLIS,
                                  kafka_security=True, local_job=True)

# --------------------------------------------------------------------------- checks


def check_java(options: Mapping[str, Any], use_case: UseCase) -> None:
    """Spark's driver runs on this machine: a use case with a Spark topology needs Java."""
    if use_case.topology is None:
        return
    java = shutil.which("java") or (
        os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else None
    )
    if not java or not os.path.exists(java):
        raise ValueError(
            "Java 17+ is needed to run Spark and was not found (no `java` on PATH, no JAVA_HOME); "
            "on Debian/Ubuntu: apt-get install openjdk-17-jre-headless"
        )


def _embedded_valid(options: Mapping[str, Any], use_case: UseCase) -> None:
    from bench.runtime.kafka.apache_kafka import heap_problem
    from bench.runtime.kafka.broker import DEFAULT_KIND

    problem = heap_problem()
    if problem is not None and not options.get("bootstrap_servers"):
        raise ValueError(problem)
    if (options.get("brokers") or 1) > 1 and (options.get("broker") or DEFAULT_KIND) != "kafka":
        raise ValueError(f"--brokers {options.get('brokers')}: only the embedded Apache Kafka (--broker kafka) "
                         "runs as a cluster")


def _kubernetes_valid(options: Mapping[str, Any], use_case: UseCase) -> None:
    from bench.platforms.kubernetes.options import environment_problem, refuse_without_prometheus

    problem = environment_problem()
    if problem is not None:
        raise ValueError(problem)
    refuse_without_prometheus(options, options.get("slo_slis") or {})


def _external_valid(options: Mapping[str, Any], use_case: UseCase) -> None:
    if not options.get("bootstrap_servers"):
        raise ValueError("--platform external needs --bootstrap-servers HOST:PORT (or kafkaConfig.bootstrapServer "
                         "in the benchmark)")


def _kubernetes_host(options: Mapping[str, Any], use_case: UseCase) -> None:
    from bench.platforms.kubernetes.client import kubeconfig_problem
    from bench.platforms.kubernetes.manifests import option

    problem = kubeconfig_problem(options)
    if problem:
        raise ValueError(f"--platform kubernetes: {problem}")
    if not options.get("bootstrap_servers") and str(option(options, "topics") or "kafka").lower() != "strimzi":
        raise ValueError("--platform kubernetes needs --bootstrap-servers to reach Kafka (or BENCH_K8S_TOPICS=strimzi)")


def _kubernetes_config_maps(sets: Any, options: Mapping[str, Any]) -> list[list[tuple[str, str]]]:
    from bench.platforms.kubernetes.config_maps import read_config_maps

    return read_config_maps(sets, options)


def _kubernetes_config_map_place(options: Mapping[str, Any]) -> str:
    from bench.platforms.kubernetes.config_maps import place

    return place(options)


def _kubernetes_render(spec: ExperimentSpec, options: Mapping[str, Any]) -> list[Manifest]:
    from bench.platforms.kubernetes.manifests import render_manifests

    return render_manifests(spec, options)


# --------------------------------------------------------------------------- factories


def _embedded(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.embedded import EmbeddedPlatform

    return EmbeddedPlatform(options, registry)


def _external(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.external import ExternalPlatform

    return ExternalPlatform(options, registry)


def _kubernetes(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.kubernetes.platform import KubernetesPlatform

    return KubernetesPlatform(options)


PLATFORMS = (
    PlatformType(
        "embedded",
        "local broker subprocess + local Spark on this machine (the default)",
        _embedded,
        options=EMBEDDED_OPTIONS,
        capabilities=LOCAL,
        validate=_embedded_valid,
        check_host=check_java,
    ),
    PlatformType(
        "external",
        "existing Kafka (--bootstrap-servers) and Spark (--spark-master) clusters",
        _external,
        options=EXTERNAL_OPTIONS,
        capabilities=LOCAL,
        validate=_external_valid,
    ),
    PlatformType(
        "kubernetes",
        "deploy SUT and generators as Kubernetes objects (kubernetes-asyncio)",
        _kubernetes,
        options=KUBERNETES_OPTIONS,
        capabilities=KUBERNETES,
        validate=_kubernetes_valid,
        check_host=_kubernetes_host,
        render=_kubernetes_render,
        read_config_maps=_kubernetes_config_maps,
        config_map_place=_kubernetes_config_map_place,
    ),
)


@hookimpl
def bench_register_platforms(register: Registrar) -> None:
    for platform in PLATFORMS:
        register.platform(platform)
