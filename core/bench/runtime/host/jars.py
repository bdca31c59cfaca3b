"""Where bench finds the JARs that ``scripts/install`` fetched through Maven.

Why a cache folder of plain JARs: Apache Kafka and Spark's ``spark-sql-kafka-0-10``
connector do not install from PyPI. ``scripts/install`` runs ``mvn
dependency:copy-dependencies`` on the small poms under ``scripts/maven/`` (so a user's
own ``settings.xml`` mirror is honoured, which Spark's Ivy-based
``spark.jars.packages`` would not see) into::

    <cache>/kafka-<version>/*.jar              the broker and its runtime dependencies
    <cache>/spark-sql-kafka-<spark>/*.jar      the connector for exactly that Spark

``<cache>`` is ``$BENCH_JARS_DIR``, else ``$XDG_CACHE_HOME/bench/jars``, else
``~/.cache/bench/jars``. Nothing here downloads: a missing folder means "not
installed", and callers fall back (noida broker, bench's Python source) and say so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ENV = "BENCH_JARS_DIR"
INSTALL_HINT = "run scripts/install (it fetches them with mvn)"


def cache_dir() -> Path:
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "bench", "jars")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


@dataclass(frozen=True)
class KafkaJars:
    version: str
    folder: Path

    @property
    def classpath(self) -> str:
        return str(self.folder / "*")


def kafka_jars() -> KafkaJars | None:
    """The newest Apache Kafka installed in the cache, or None."""
    root = cache_dir()
    if not root.is_dir():
        return None
    found: list[KafkaJars] = []
    for folder in root.glob("kafka-*"):
        version = folder.name.removeprefix("kafka-")
        if (folder / f"kafka_2.13-{version}.jar").is_file():
            found.append(KafkaJars(version, folder))
    return max(found, key=lambda k: _version_key(k.version), default=None)


def pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def _artifact(jar: Path) -> str:
    """``kafka-clients-3.9.2.jar`` -> ``kafka-clients``."""
    return re.sub(r"-\d[\w.\-]*$", "", jar.stem)


@lru_cache(maxsize=4)
def _connector_jars(folder: str, spark_jars: str) -> tuple[str, ...]:
    wheel = {_artifact(j) for j in Path(spark_jars).glob("*.jar")}
    # Spark's own JARs, Scala, Hadoop client... are already in the pyspark wheel: a second,
    # different version of them on the classpath would be a conflict waiting to happen.
    return tuple(str(j) for j in sorted(Path(folder).glob("*.jar")) if _artifact(j) not in wheel)


def connector_jars(spark_version: str | None = None) -> list[str]:
    """JARs that add Spark's ``kafka`` source and sink to the installed pyspark ([] if absent)."""
    import pyspark

    version = spark_version or pyspark_version()
    folder = cache_dir() / f"spark-sql-kafka-{version}"
    if not any(folder.glob(f"spark-sql-kafka-0-10_2.13-{version}.jar")):
        return []
    spark_jars = Path(next(iter(pyspark.__path__)), "jars")
    return list(_connector_jars(str(folder), str(spark_jars)))


def native_connector_available() -> bool:
    return bool(connector_jars())


def default_connector() -> str:
    """``native`` when Spark's connector is installed, else ``python``."""
    return "native" if native_connector_available() else "python"


def connector_description(connector: str) -> dict[str, str]:
    """What ``--connector`` means in artifacts and versions (for the environment record)."""
    if connector == "native":
        artifact = "org.apache.spark:spark-sql-kafka-0-10_2.13"
        return {"name": "native", "artifact": artifact, "version": pyspark_version()}
    return {"name": connector, "artifact": "bench-kafka (bench's Python data source)"}
