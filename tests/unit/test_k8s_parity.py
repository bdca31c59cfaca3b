"""Kubernetes parity: the SUT exports dropped and malformed records to Prometheus, the
Kubernetes platform reads them back (and the generators' achieved rate), so UC2 and UC3
can be decided there as on the embedded platform."""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from typing import Any

import pytest
from bench import metrics
from bench.runtime.kafka.broker import free_port
from prometheus_client import REGISTRY


def value(name: str, group: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"experiment": "exp9", "group": group})


def test_exporting_is_a_no_op_without_a_port() -> None:
    lines: list[Mapping[str, Any]] = []
    assert metrics.exporting(lines.append, {"group_id": "g"}) == lines.append


def test_progress_lines_become_sut_gauges_from_zero() -> None:
    served: list[tuple[int, str]] = []
    lines: list[Mapping[str, Any]] = []
    emit = metrics.exporting(
        lines.append,
        {"metrics_port": 9404, "experiment": "exp9", "group_id": "g-1"},
        serve=lambda port, addr: served.append((port, addr)),
    )
    assert served == [(9404, "0.0.0.0")]
    assert value("bench_sut_dropped_records", "g-1") == 0.0, "0 before the first batch, not absent"
    emit({"event": "started"})
    emit({"event": "progress", "droppedByWatermark": 7, "malformed": 2, "inputRowsPerSecond": 10.0})
    emit({"event": "progress", "droppedByWatermark": 9, "malformed": 2, "processedRowsPerSecond": 12.5})
    assert [e["event"] for e in lines] == ["started", "progress", "progress"], "stdout unchanged"
    assert value("bench_sut_dropped_records", "g-1") == 9.0, "cumulative, as the driver counts"
    assert value("bench_sut_malformed_records", "g-1") == 2.0
    assert value("bench_sut_processed_rows_per_second", "g-1") == 12.5
    assert value("bench_sut_batches", "g-1") == 2.0


def test_the_real_exporter_serves_the_sut_gauges() -> None:
    port = free_port()
    emit = metrics.exporting(lambda e: None, {"metrics_port": port, "experiment": "exp9", "group_id": "g-2"})
    emit({"event": "progress", "droppedByWatermark": 3, "malformed": 0})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:  # noqa: S310
        text = resp.read().decode()
    assert 'bench_sut_dropped_records{experiment="exp9",group="g-2"} 3.0' in text


# --------------------------------------------------------------------------- the platform side


def experiment(group: str = "bench-sut-r1") -> Any:
    from bench.api import ExperimentSpec, TopicSpec, UseCase

    return ExperimentSpec(
        experiment_id="exp9",
        use_case=UseCase(name="uc2", description="test", default_benchmark=dict),
        objects=[
            {"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": {"replicas": 2, "params": {}}},
            {"kind": "BenchGenerator", "metadata": {"name": "generator"}, "spec": {"replicas": 1, "sensors": 10}},
        ],
        topics=[TopicSpec("input", "input-r1", 4), TopicSpec("output", "output-r1", 4)],
        params={},
        load=10,
        resources=2,
        group_id=group,
    )


def test_driver_pods_serve_metrics_where_prometheus_finds_them() -> None:
    import json

    from bench.platforms.kubernetes.manifests import render_manifests

    for mode, kind in (("spark-operator", "SparkApplication"), ("standalone", "Job")):
        objects = render_manifests(experiment(), {"sut_mode": mode})
        config = next(o for o in objects if o["kind"] == "ConfigMap")
        payload = json.loads(config["data"]["spec.json"])
        assert (payload["metrics_port"], payload["experiment"], payload["group_id"]) == (9404, "exp9", "bench-sut-r1")
        obj = next(o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(("-sut", "-driver")))
        if kind == "SparkApplication":
            pod = obj["spec"]["driver"]
            labels, annotations, ports = pod["labels"], pod["annotations"], pod["ports"]
        else:
            template = obj["spec"]["template"]
            labels, annotations = template["metadata"]["labels"], template["metadata"]["annotations"]
            ports = template["spec"]["containers"][0]["ports"]
        assert labels["bench/metrics"] == "true", mode
        assert annotations["prometheus.io/port"] == "9404", mode
        assert ports == [{"name": "metrics", "containerPort": 9404, "protocol": "TCP"}], mode


class FakePrometheus:
    """Answers instant queries from a dict; an unknown query has no series yet."""

    def __init__(self, answers: dict[str, float]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def value(self, query: str, at: float | None = None) -> float:
        from bench.runtime.prometheus import EmptyResultError

        self.asked.append(query)
        if query not in self.answers:
            raise EmptyResultError(query)
        return self.answers[query]


async def test_kubernetes_samples_dropped_and_malformed_records_of_the_repetition() -> None:
    import math

    from bench.platforms.kubernetes.platform import KubernetesPlatform

    platform = KubernetesPlatform({"lag_query": 'sum(lag{{group="{group}"}})'})
    platform._prometheus = FakePrometheus(
        {
            'sum(lag{group="bench-sut-r1"})': 40.0,
            'sum(bench_sut_dropped_records{group="bench-sut-r1"})': 12.0,
            'sum(bench_sut_malformed_records{group="bench-sut-r1"})': 1.0,
            'sum(bench_generator_pod_records{group="bench-sut-r1"})': 5000.0,
            'sum(bench_generator_pod_rate{group="bench-sut-r1"})': 998.5,
        }
    )
    sample = await platform.sample(experiment())
    assert sample.values == {"lag": 40.0, "dropped-records": 12.0, "malformed-records": 1.0,
                             "generated-records": 5000.0, "generator-rate": 998.5}
    # the next repetition (a fresh group) reads nothing its predecessor left: gaps, not zeros
    fresh = await platform.sample(experiment("bench-sut-r2"))
    assert all(math.isnan(v) for v in fresh.values.values())


async def test_uc2_dropped_records_slo_is_decided_from_kubernetes_samples() -> None:
    """The failure this fixes: UC2's dropped-records SLO got no series on Kubernetes."""
    from bench.api import Series, SloContext
    from bench.builtin.slos import check_dropped
    from bench.platforms.kubernetes.platform import KubernetesPlatform

    answers: dict[str, float] = {}
    platform = KubernetesPlatform({})
    platform._prometheus = FakePrometheus(answers)
    query = 'sum(bench_sut_dropped_records{group="bench-sut-r1"})'
    timestamps, values = [], []
    for i in range(40):  # 200 s at 5 s; 10 records/s; 2 dropped per sample = 4 %
        answers[query] = 2.0 * i
        sample = await platform.sample(experiment())
        timestamps.append(float(i * 5))
        values.append(sample.values["dropped-records"])
    ctx = SloContext(properties={"maxRatio": 0.01}, warmup=60.0, load=10.0, load_rate=10.0, resources=2.0)
    verdict = check_dropped([Series(timestamps, values)], ctx)
    assert not verdict.passed
    assert verdict.details["maxObservedRatio"] == pytest.approx(0.04)
