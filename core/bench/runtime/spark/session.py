"""Creating the SparkSession the SUT runs in, and the per-session progress listener.

One listener per session does two jobs: it commits each finished micro-batch's source
end offsets to the SUT consumer group (so lag is measurable from outside), and it hands
progress to whoever watches a query (the driver's JSON lines, the test harness).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql.streaming import StreamingQueryListener

from bench.runtime.kafka.source import KafkaDataSource, OffsetCommitter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ProgressCallback = Callable[[Any], object]
#: the watcher key of :meth:`ProgressListener.watch_all` (no query id looks like it)
ALL_QUERIES = "*"

_DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.metricsEnabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "1g",
    "spark.sql.streaming.noDataMicroBatches.enabled": "true",
    "spark.python.worker.reuse": "true",
}


def build_session(
    master: str = "local[1]",
    app_name: str = "bench-sut",
    shuffle_partitions: int = 1,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A quiet session with the bench-kafka data source and listener registered.

    Spark's own ``kafka`` source and sink are on its classpath whenever scripts/install
    fetched the connector (:func:`bench.runtime.host.jars.connector_jars`).
    """
    from pyspark.sql import SparkSession

    from bench.runtime.host.jars import connector_jars
    from bench.runtime.spark.class_archive import with_archive

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(_DEFAULT_CONF)
    settings["spark.sql.shuffle.partitions"] = str(max(1, shuffle_partitions))
    jars = connector_jars()
    if jars:
        settings["spark.jars"] = ",".join(jars)
    settings.update(conf or {})
    settings = with_archive(settings)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(KafkaDataSource)
    progress_listener(spark)
    return spark


class ProgressListener(StreamingQueryListener):
    """Commits offsets and fans progress out to per-query callbacks."""

    def __init__(self) -> None:
        self.committer = OffsetCommitter()
        self._watchers: dict[str, list[ProgressCallback]] = {}
        self._lock = threading.Lock()
        self.errors: list[str] = []

    def watch(self, query_id: str, callback: ProgressCallback) -> None:
        with self._lock:
            self._watchers.setdefault(query_id, []).append(callback)

    def unwatch(self, query_id: str) -> None:
        with self._lock:
            self._watchers.pop(query_id, None)

    def watch_all(self, callback: ProgressCallback) -> None:
        """Progress of every query of the session, also of those not started yet.

        Why: a user's job script (``bench run --job``) starts its queries itself; a
        per-query watch set once the driver saw the query would miss its first batches.
        """
        self.watch(ALL_QUERIES, callback)

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        progress = event.progress
        try:
            self.committer.commit_progress([s.endOffset for s in progress.sources])
        except Exception as exc:  # noqa: BLE001 - a failed commit must not kill the listener bus
            self.errors.append(f"offset commit failed: {exc}")
        with self._lock:
            callbacks = [*self._watchers.get(str(progress.id), ()), *self._watchers.get(ALL_QUERIES, ())]
        for callback in callbacks:
            try:
                callback(progress)
            except Exception as exc:  # noqa: BLE001
                self.errors.append(f"progress callback failed: {exc}")

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass


_LISTENERS: dict[int, ProgressListener] = {}


def progress_listener(spark: SparkSession) -> ProgressListener:
    """The session's listener, added on first use."""
    key = id(spark.sparkContext)
    listener = _LISTENERS.get(key)
    if listener is None:
        listener = ProgressListener()
        spark.streams.addListener(listener)
        _LISTENERS[key] = listener
    return listener


def stop_session(spark: SparkSession) -> None:
    """Stop the session and close the offset committer's Kafka clients.

    Why: librdkafka clients left open keep reconnecting, and logging "Connection
    refused", after the broker they talk to has stopped (seen at the end of test runs).
    """
    listener = _LISTENERS.pop(id(spark.sparkContext), None)
    if listener is not None:
        listener.committer.close()
    spark.stop()
