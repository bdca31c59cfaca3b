"""The ``kubernetes`` platform: one experiment = manifests applied to a namespace.

SUT objects are applied first and awaited (watched) until ready, then the generator
objects; teardown deletes in reverse order and waits until every object is gone, so
no pod of one experiment overlaps the next. Topics are reset through the Kafka admin
API (``--bootstrap-servers`` must reach the cluster's Kafka) or, with option
``topics: strimzi``, through Strimzi KafkaTopic resources. Lag comes from Prometheus
when ``prometheus_url`` is set (e.g. a Kafka exporter's ``kafka_consumergroup_lag``),
else from the Kafka admin API.

Options (each also read from ``BENCH_K8S_<OPTION>`` in the environment): namespace,
kubeconfig, context, in_cluster, api_url (a plain-HTTP API server, for tests), image,
sut_mode (spark-operator|standalone), kafka_bootstrap, ready_timeout (300 s),
teardown_timeout (180 s), topics (kafka|strimzi), kafka_cluster, topic_replicas,
prometheus_url, lag_query (template with {group}), sut_query (template with {metric}
and {group}), sut_metrics_port (9404).

With ``prometheus_url`` each sample also holds ``dropped-records`` and
``malformed-records``: the SUT's driver serves them (``bench_sut_dropped_records``,
labelled with the repetition's consumer group) and Prometheus scrapes its pod
(deploy/podmonitor.yaml). Without Prometheus only the lag is sampled, so an SLO on
dropped records (UC2, UC3) fails for want of data. The generator pods serve their
records and rates the same way (:mod:`bench.platforms.kubernetes.generator_entry`): each sample holds
``generated-records`` and ``generator-rate``, and :meth:`KubernetesPlatform.stop_generators`
returns one report per pod, so the engine's shortfall check (a generator more than 1 %
behind its target) runs as on the embedded platform.

Latency, ``output-rate``, ``processed-rate`` and the host SLIs come from the same
sampler as on one machine (:class:`bench.runtime.info_sampler.InfoSampler`), reading the
output topic through ``--bootstrap-servers``; the host figures are those of the machine
bench runs on. ``--metrics-port`` serves bench's own metrics as on the other platforms;
``--conf`` reaches the SUT's Spark session. With ``--kafka-config`` the platform writes
the Secret the pods read (:func:`bench.platforms.kubernetes.manifests.kafka_secret`) at :meth:`open` and
deletes it at :meth:`close`. A reference benchmark's configMap resource sets are read
from the namespace when the run is prepared (:mod:`bench.platforms.kubernetes.config_maps`), so the
platform sees their manifests as any other.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bench.api import ExperimentSpec, GeneratorReport, Manifest, Sample
from bench.platforms.kubernetes.client import KubeClient, api_client
from bench.platforms.kubernetes.manifests import dns_name, is_ready, option, render_manifests, role_of
from bench.platforms.kubernetes.secrets import kafka_secret
from bench.runtime.kafka.admin import OUTPUT_TOPIC_CONFIG, RESULT_TOPICS

__all__ = ["KubernetesPlatform", "render_manifests"]

STRIMZI_API = "kafka.strimzi.io/v1beta2"
#: the generator pods' gauges (bench.platforms.kubernetes.generator_entry), by the report field each gives
GENERATOR_QUERIES = {
    "records": 'bench_generator_pod_records{{group="{group}"}}',
    "seconds": 'bench_generator_pod_seconds{{group="{group}"}}',
    "target": 'bench_generator_pod_target_rate{{group="{group}"}}',
}
_exporter_started = False


def _float(options: Mapping[str, Any], key: str, default: float) -> float:
    value = option(options, key)
    return float(value) if value is not None else default


class KubernetesPlatform:
    name = "kubernetes"

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.options = dict(options)
        self.namespace = str(option(self.options, "namespace"))
        self.ready_timeout = _float(self.options, "ready_timeout", 300.0)
        self.teardown_timeout = _float(self.options, "teardown_timeout", 180.0)
        self.client: KubeClient | None = None
        self._api: Any = None
        self._rendered: dict[str, list[Manifest]] = {}
        self._samplers: dict[str, Any] = {}
        self._info: dict[str, Any] = {}
        self._prometheus: Any = None
        self._secret: Manifest | None = None

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        self._api = await api_client(self.options)
        self.client = KubeClient(self._api, self.namespace)
        url = option(self.options, "prometheus_url")
        if url:
            from bench.runtime.prometheus import PrometheusSource

            self._prometheus = PrometheusSource(str(url))
        port = self.options.get("metrics_port")
        global _exporter_started
        if port and not _exporter_started:
            from bench import metrics

            metrics.start_exporter(int(port))
            _exporter_started = True
        self._secret = kafka_secret(self.options, self.namespace)
        if self._secret is not None:
            await self.client.apply(self._secret)

    async def close(self) -> None:
        for sampler in [*self._samplers.values(), *self._info.values()]:
            await sampler.close()
        self._samplers.clear()
        self._info.clear()
        if self._secret is not None and self.client is not None:
            import contextlib

            with contextlib.suppress(Exception):  # best effort: a run that ends leaves no credentials behind
                await self.client.delete(self._secret)
            self._secret = None
        if self._api is not None:
            await self._api.close()
            self._api = None
        self.client = None

    def _client(self) -> KubeClient:
        if self.client is None:
            raise RuntimeError("KubernetesPlatform.open() was not called")
        return self.client

    # ------------------------------------------------------------------ objects

    def manifests(self, spec: ExperimentSpec) -> list[Manifest]:
        if spec.experiment_id not in self._rendered:
            self._rendered[spec.experiment_id] = render_manifests(spec, self.options)
        return self._rendered[spec.experiment_id]

    def _role(self, spec: ExperimentSpec, role: str) -> list[Manifest]:
        return [m for m in self.manifests(spec) if role_of(m) == role]

    async def deploy(self, objects: Sequence[Manifest]) -> None:
        """Apply in order, then watch all of them until ready (error names the laggard)."""
        client = self._client()
        for obj in objects:
            await client.apply(obj)
        await asyncio.gather(*(client.wait_for(obj, is_ready, self.ready_timeout, "ready") for obj in objects))

    async def teardown(self, objects: Sequence[Manifest]) -> None:
        """Delete in reverse order, then watch until every object is gone."""
        client = self._client()
        for obj in reversed(objects):
            await client.delete(obj)
        await asyncio.gather(
            *(client.wait_for(obj, lambda o: o is None, self.teardown_timeout, "deleted") for obj in objects)
        )

    async def start_sut(self, spec: ExperimentSpec) -> None:
        await self.deploy(self._role(spec, "sut"))

    async def start_generators(self, spec: ExperimentSpec) -> None:
        await self.deploy(self._role(spec, "generator"))

    async def stop_generators(self, spec: ExperimentSpec) -> Sequence[GeneratorReport]:
        """One report per generator pod, read from Prometheus before the pods go (none
        without ``prometheus_url``: then the shortfall check has nothing to check)."""
        reports = await self.generator_reports(spec) if self._prometheus is not None else []
        await self.teardown(self._role(spec, "generator"))
        return reports

    async def generator_reports(self, spec: ExperimentSpec) -> list[GeneratorReport]:
        """What each generator pod served last: records, seconds and target rate; the
        achieved rate is records over seconds, as a generator computes its report."""
        from bench.runtime.prometheus import EmptyResultError

        fields: dict[str, dict[str, float]] = {}
        for name, template in GENERATOR_QUERIES.items():
            try:
                rows = await self._prometheus.query(template.format(group=spec.group_id))
            except EmptyResultError:
                return []  # not scraped yet (a very short repetition): no report rather than a false one
            for labels, _, value in rows:
                fields.setdefault(labels, {})[name] = value
        reports = []
        for pod in sorted(fields):
            got = fields[pod]
            seconds = got.get("seconds", 0.0)
            records = int(got.get("records", 0.0))
            achieved = records / seconds if seconds > 0 else 0.0
            reports.append(GeneratorReport(target_rate=got.get("target", 0.0), achieved_rate=achieved,
                                           records=records, seconds=seconds))
        return reports

    async def stop_sut(self, spec: ExperimentSpec) -> None:
        await self.teardown(self._role(spec, "sut"))
        self._rendered.pop(spec.experiment_id, None)
        for samplers in (self._samplers, self._info):
            sampler = samplers.pop(spec.experiment_id, None)
            if sampler is not None:
                await sampler.close()

    # ------------------------------------------------------------------ topics

    def _strimzi(self) -> bool:
        return str(option(self.options, "topics") or "kafka").lower() == "strimzi"

    def kafka_topics(self, spec: ExperimentSpec) -> list[Manifest]:
        cluster = str(option(self.options, "kafka_cluster") or "my-cluster")
        replicas = int(option(self.options, "topic_replicas") or 1)
        return [
            {
                "apiVersion": STRIMZI_API,
                "kind": "KafkaTopic",
                "metadata": {
                    "name": dns_name(topic.name),
                    "namespace": self.namespace,
                    "labels": {"strimzi.io/cluster": cluster, "app.kubernetes.io/managed-by": "bench"},
                },
                "spec": {"topicName": topic.name, "partitions": topic.partitions, "replicas": replicas,
                         **({"config": dict(OUTPUT_TOPIC_CONFIG)} if topic.logical in RESULT_TOPICS else {})},
            }
            for topic in spec.topics
        ]

    def _bootstrap(self) -> str:
        servers = self.options.get("bootstrap_servers")
        if not servers:
            raise ValueError("platform 'kubernetes' needs --bootstrap-servers to reach Kafka (or topics=strimzi)")
        return str(servers)

    async def reset_topics(self, spec: ExperimentSpec) -> None:
        if self._strimzi():
            topics = self.kafka_topics(spec)
            await self.teardown(topics)
            await self.deploy(topics)
            return
        from bench.runtime.kafka.admin import create_experiment_topics
        from bench.runtime.kafka.lag import delete_topics

        names = [t.name for t in spec.topics]
        await delete_topics(self._bootstrap(), names)
        await create_experiment_topics(self._bootstrap(), spec.topics)

    async def delete_topics(self, spec: ExperimentSpec) -> None:
        if self._strimzi():
            await self.teardown(self.kafka_topics(spec))
            return
        from bench.runtime.kafka.lag import delete_topics

        await delete_topics(self._bootstrap(), [t.name for t in spec.topics])

    # ------------------------------------------------------------------ SLIs

    async def sample(self, spec: ExperimentSpec) -> Sample:
        now = time.time()
        if self._prometheus is not None:
            from bench.runtime.prometheus import DEFAULT_LAG_QUERY, lag_query

            template = str(option(self.options, "lag_query") or DEFAULT_LAG_QUERY)
            lag = await self._instant(lag_query(spec.group_id, template), now)
            values = {"lag": max(0.0, lag) if not math.isnan(lag) else lag}
            values.update(await self._sut_slis(spec, now))
            values.update(await self._generator_slis(spec, now))
            values.update(await self._info_slis(spec, None))
            return Sample(now, values)
        sampler = self._samplers.get(spec.experiment_id)
        if sampler is None:
            from bench.runtime.kafka.lag import LagSampler

            consumed = [t.name for t in spec.topics if t.logical != "output"]
            sampler = LagSampler(self._bootstrap(), spec.group_id, consumed)
            await sampler.start()
            self._samplers[spec.experiment_id] = sampler
        values = {"lag": max(0.0, float(await sampler.sample()))}
        values.update(await self._info_slis(spec, sum(sampler.last_committed.values())))
        return Sample(now, values)

    async def _info_slis(self, spec: ExperimentSpec, committed: int | None) -> dict[str, float]:
        """Latency, output and processed rate, host figures (informational, as on one
        machine); nothing where bench cannot reach Kafka itself (Strimzi topics only)."""
        if not self.options.get("bootstrap_servers"):
            return {}
        info = self._info.get(spec.experiment_id)
        if info is None:
            from bench.runtime.info_sampler import InfoSampler

            outputs = [t.name for t in spec.topics if t.logical == "output"]
            info = self._info[spec.experiment_id] = InfoSampler(self._bootstrap(), outputs)
        values: dict[str, float] = await info.sample(committed)
        return values

    async def _generator_slis(self, spec: ExperimentSpec, at: float) -> dict[str, float]:
        """``generated-records`` and ``generator-rate`` summed over the generator pods."""
        records = await self._instant(f'sum(bench_generator_pod_records{{group="{spec.group_id}"}})', at)
        rate = await self._instant(f'sum(bench_generator_pod_rate{{group="{spec.group_id}"}})', at)
        return {"generated-records": records, "generator-rate": rate}

    async def _instant(self, query: str, at: float) -> float:
        """An instant value, NaN while the series does not exist yet (target not scraped):
        a gap the SLO skips, never a zero that could pass it."""
        from bench.runtime.prometheus import EmptyResultError

        try:
            return float(await self._prometheus.value(query, at=at))
        except EmptyResultError:
            return math.nan

    async def _sut_slis(self, spec: ExperimentSpec, at: float) -> dict[str, float]:
        """What the embedded platform reads from the driver's stdout, read here from what
        the driver serves to Prometheus (dropped-records decides UC2 and UC3)."""
        from bench.runtime.prometheus import SUT_QUERY, SUT_SLIS, sut_query

        template = str(option(self.options, "sut_query") or SUT_QUERY)
        return {sli: await self._instant(sut_query(sli, spec.group_id, template), at) for sli in SUT_SLIS}
