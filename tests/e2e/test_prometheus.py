"""A real Prometheus server scraping the framework's own exporter, read back through
the SLI source. The binary comes from the Debian package (.ci/install-prometheus.sh)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench import metrics
from bench.runtime.prometheus import EmptyResultError, PrometheusError, PrometheusSource, lag_query

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("prometheus") is None,
        reason="the prometheus binary is absent (run .ci/install-prometheus.sh)",
    ),
]

EXPERIMENT = "e2e-prom"
GROUP = "bench-sut-e2e"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(what: str, check, limit: float = 60.0) -> None:
    """Polls ``check`` until true; the limit only guards against a hang."""
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def exporter_port() -> int:
    port = free_port()
    metrics.start_exporter(port)
    return port


@pytest.fixture(scope="module")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory, exporter_port: int) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp("prometheus")
    port = free_port()
    config = tmp / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: bench\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
    )
    log = (tmp / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"prometheus exited with {proc.returncode}: see {tmp / 'prometheus.log'}")
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    try:
        wait_until("prometheus to become ready", ready)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def scraped(url: str, query: str, value: float) -> bool:
    source = PrometheusSource(url, retries=1)
    try:
        return asyncio.run(source.value(query)) == value
    except EmptyResultError:
        return False


async def test_lag_series_read_back_matches_exporter(prometheus_url: str) -> None:
    gauge = metrics.CONSUMER_LAG.labels(experiment=EXPERIMENT, group=GROUP)
    query = f'sum(bench_consumer_lag{{group="{GROUP}"}})'
    start = time.time()
    written = [1000.0, 2500.0, 0.0]
    for value in written:
        gauge.set(value)
        # each value stays until Prometheus has stored it at least once
        await asyncio.to_thread(wait_until, f"lag {value} scraped", lambda v=value: scraped(prometheus_url, query, v))
    end = time.time() + 1

    source = PrometheusSource(prometheus_url, step=1.0)
    series = await source.query_range(query, start, end)
    assert len(series) == 1
    values = series[0].values
    timestamps = series[0].timestamps
    assert timestamps == sorted(timestamps)
    assert all(start - 1 <= t <= end + 1 for t in timestamps)
    # every sample is a value the exporter published, and all of them appear in order
    assert set(values) <= set(written)
    firsts = [values.index(v) for v in written]
    assert firsts == sorted(firsts)

    by_label = await source.query_range(f'bench_consumer_lag{{experiment="{EXPERIMENT}"}}', start, end, step=2)
    assert len(by_label) == 1
    assert f"group={GROUP}" in by_label[0].labels
    assert f"experiment={EXPERIMENT}" in by_label[0].labels


async def test_empty_result_is_an_error_naming_the_query(prometheus_url: str) -> None:
    source = PrometheusSource(prometheus_url)
    now = time.time()
    query = lag_query("no-such-group")
    assert query == 'sum(kafka_consumergroup_lag{consumergroup="no-such-group"})'
    with pytest.raises(EmptyResultError, match="no-such-group"):
        await source.query_range(query, now - 30, now)


async def test_bad_query_fails_without_retries(prometheus_url: str) -> None:
    source = PrometheusSource(prometheus_url, retries=3, retry_delay=30)
    with pytest.raises(PrometheusError, match=r"rejected query 'sum\(\('"):
        await source.query_range("sum((", time.time() - 10, time.time())


async def test_unreachable_server_retries_then_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    source = PrometheusSource(url, retries=2, retry_delay=0.05, timeout=2)
    with pytest.raises(PrometheusError, match="after 2 tries") as info:
        await source.query_range("up", time.time() - 10, time.time())
    assert url in str(info.value)


async def test_kubernetes_platform_samples_lag_from_prometheus(prometheus_url: str) -> None:
    from bench.api import ExperimentSpec, TopicSpec, UseCase
    from bench.platforms.kubernetes.platform import KubernetesPlatform

    group = "bench-sut-k8s"
    metrics.CONSUMER_LAG.labels(experiment="k8s", group=group).set(321.0)
    query = f'sum(bench_consumer_lag{{group="{group}"}})'
    await asyncio.to_thread(wait_until, "lag 321 scraped", lambda: scraped(prometheus_url, query, 321.0))
    platform = KubernetesPlatform(
        {
            "api_url": "http://127.0.0.1:1",  # never contacted by sample()
            "prometheus_url": prometheus_url,
            "lag_query": 'sum(bench_consumer_lag{{group="{group}"}})',
        }
    )
    await platform.open()
    try:
        spec = ExperimentSpec(
            experiment_id="k8s",
            use_case=UseCase(name="uc1", description="", default_benchmark=dict),
            objects=[],
            topics=[TopicSpec("input", "input-k8s")],
            params={},
            load=1,
            resources=1,
            group_id=group,
        )
        sample = await platform.sample(spec)
        assert sample.values["lag"] == 321.0
        missing = ExperimentSpec(**{**spec.__dict__, "group_id": "absent-group"})
        gap = await platform.sample(missing)
        assert gap.values["lag"] != gap.values["lag"]  # NaN: a gap, never a fake zero
    finally:
        await platform.close()
