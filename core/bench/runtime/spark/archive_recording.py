"""Recording the driver's class archive (``python -m bench.runtime.spark.archive_recording``,
run by ``scripts/install``); :mod:`bench.runtime.spark.class_archive` says why and where.

Apart from the archive's options because recording builds a Spark session, and the
session module needs the options: one module each keeps the imports one way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.runtime.spark.class_archive import ENV_OFF, archive_path


def _record(target: Path) -> None:
    """A small batch and streaming job: JSON parsing, aggregation, windows and state
    are what every use case's driver loads at start. Recording the use cases' own
    warm-ups on a broker was tried: ten minutes of install for a few
    more classes, so the archive keeps to this job."""
    from bench.runtime.spark.session import build_session

    spark = build_session("local[1]", "bench-class-archive", 1,
                          {"spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={target}"})
    from pyspark.sql import functions as F

    rows = spark.range(200).select(F.to_json(F.struct((F.col("id") % 7).alias("k"), F.col("id").alias("v"))).alias("j"))
    parsed = rows.select(F.from_json("j", "k INT, v LONG").alias("r")).select("r.*")
    parsed.groupBy("k").agg(F.sum("v"), F.avg("v"), F.count("*")).collect()
    stream = (spark.readStream.format("rate").option("rowsPerSecond", 50).load()
              .withWatermark("timestamp", "1 second")
              .groupBy(F.window("timestamp", "1 second"), (F.col("value") % 3).alias("k")).count())
    query = stream.writeStream.format("memory").queryName("archive").outputMode("update").start()
    query.processAllAvailable()
    query.stop()
    spark.stop()


def build() -> Path:
    """Record the archive (about 75 s on two cores); the JVM writes it when it exits."""
    target = archive_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    # a child process: the archive is written when its JVM exits, and this one's may
    # already run (a caller that imported pyspark)
    code = ("from pathlib import Path; from bench.runtime.spark.archive_recording import _record; "
            f"_record(Path({str(partial)!r}))")
    env = {**os.environ, ENV_OFF: "1"}  # recording on top of an older archive is not possible
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"the JVM wrote no class archive: {tail[0]}")
    partial.replace(target)
    import pyspark

    # which pyspark folder the archive belongs to, so that a later install can remove it
    # once that folder (a deleted virtualenv or clone) is gone
    target.with_suffix(".json").write_text(json.dumps({"pyspark": list(pyspark.__path__)}))
    return target


def prune(folder: Path, current: Path | None = None) -> list[Path]:
    """Remove the archives no JVM can use again, about 164 MB each: those whose pyspark
    folder is gone (a deleted virtualenv or clone), and those of this pyspark folder
    other than ``current`` (its JARs were installed again, so their times changed).
    Archives without a note of their folder (recorded by an older bench) are left alone."""
    import pyspark

    here = [str(f) for f in pyspark.__path__]
    removed = []
    for note in folder.glob("spark-*.json"):
        archive = note.with_suffix(".jsa")
        try:
            folders = json.loads(note.read_text())["pyspark"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not isinstance(folders, list) or not folders:
            continue
        gone = not any(Path(str(f)).is_dir() for f in folders)
        superseded = current is not None and archive != current and [str(f) for f in folders] == here
        if gone or superseded:
            archive.unlink(missing_ok=True)
            note.unlink(missing_ok=True)
            removed.append(archive)
    return removed


def main() -> int:
    """Build the archive unless this pyspark, connector and JVM already have one; a
    failure is a warning (``scripts/install`` goes on: bench only starts slower). Every
    install also removes the archives of deleted virtualenvs, recorded here or not."""
    if archive_path().parent.is_dir():
        prune(archive_path().parent, archive_path())
    if archive_path().is_file() and "--force" not in sys.argv[1:]:
        print(f"class archive for the Spark driver: {archive_path()} (already recorded; --force records it again)")
        return 0
    try:
        path = build()
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        print(f"bench: no class archive for the Spark driver ({exc}); it starts a few seconds slower", file=sys.stderr)
        return 0
    print(f"class archive for the Spark driver: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
