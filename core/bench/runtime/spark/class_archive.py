"""A class-data-sharing archive for the Spark driver's JVM, made once by ``scripts/install``.

Why: every repetition starts a fresh Spark driver (as the reference deploys a fresh
SUT), and on a quarter-core laptop instance most of its start-up is the JVM loading and
verifying Spark's classes: a session took 12.4 s and its first job 5.0 s; with this
archive 7.9 s and 3.2 s (medians, docs/performance.md, "The driver's
class archive"). The archive only maps already-parsed classes into memory; the code the
JIT compiles, and with it the SUT's throughput, is the same.

The archive is a JDK dynamic archive (``-XX:ArchiveClassesAtExit``, Java 13+) recorded
by a small batch and streaming job on the driver's own class path (pyspark's JARs and
Spark's Kafka connector; :mod:`bench.runtime.spark.archive_recording`). Its file name carries what it was built
for (pyspark version and folder, each class-path JAR's size and modification time, the
``java`` found): the JVM refuses an archive whose JARs changed, and with ``-Xshare:auto``
runs without it, silently slower, so a virtualenv installed again at the same path must
get a new key (CI does exactly that: an archive matched by name alone would be used
with not one class coming from it). A missing
archive costs only time, so nothing at run time builds one:
``bench.runtime.spark.session`` uses it when it is there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from bench.runtime.host.jars import cache_dir, connector_jars, pyspark_version

ENV_OFF = "BENCH_NO_CLASS_ARCHIVE"
# JVM warnings (an archive that no longer fits, say) go to stderr: the driver's stdout
# is its JSON-lines channel to the platform.
_LOGGING = "-Xlog:disable -Xlog:all=warning:stderr"


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java").resolve())
    found = shutil.which("java")
    return str(Path(found).resolve()) if found else "java"


def _class_path_stamp() -> list[str]:
    """Each class-path JAR with its size and modification time, what the JVM checks an
    archive against; a fresh ``pip install`` writes pyspark's JARs with new times."""
    import pyspark

    jars = [str(jar) for folder in pyspark.__path__ for jar in sorted(Path(folder, "jars").glob("*.jar"))]
    stamps = []
    for jar in [*jars, *connector_jars()]:
        try:
            stat = os.stat(jar)
        except OSError:
            stamps.append(f"{jar} missing")
            continue
        stamps.append(f"{jar} {stat.st_size} {stat.st_mtime_ns}")
    return stamps


def archive_path() -> Path:
    """Where the archive for this pyspark, connector and JVM is (whether or not it exists).

    pyspark's folder is part of the key: the JVM keeps the class path an archive was
    recorded with, and two virtualenvs with the same pyspark have two class paths.
    """
    import pyspark

    key = "\n".join([pyspark_version(), *pyspark.__path__, _java(), *_class_path_stamp()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_dir().parent / "class-archive" / f"spark-{pyspark_version()}-{digest}.jsa"


def java_options() -> str:
    """The driver JVM's options that use the archive, or "" (none built, or switched off)."""
    if os.environ.get(ENV_OFF):
        return ""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} -Xshare:auto {_LOGGING}" if path.is_file() else ""


def with_archive(conf: dict[str, str]) -> dict[str, str]:
    """``conf`` with the archive's options in front of any ``spark.driver.extraJavaOptions``
    the user gave (theirs come last, so they win where the two disagree)."""
    options = java_options()
    if not options:
        return conf
    key = "spark.driver.extraJavaOptions"
    return {**conf, key: f"{options} {conf[key]}".strip() if conf.get(key) else options}
