"""A SIGKILLed run's temp folders are removed by the next start, and nobody else's are."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.runtime.host import procs


def _owned_by(base: Path, name: str, pid: int, started: str | None) -> Path:
    folder = base / name
    (folder / "data").mkdir(parents=True)
    (folder / procs.OWNER_FILE).write_text(f"{pid} {started or '-'}\n")
    return folder


def test_sweep_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_start = procs._start_time(dead.pid)
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        gone = _owned_by(tmp_path, f"bench-{dead.pid}-x", dead.pid, dead_start)
        running = _owned_by(tmp_path, f"bench-{alive.pid}-y", alive.pid, procs._start_time(alive.pid))
        # a reused pid: the process that runs under it now started at another time
        reused = _owned_by(tmp_path, f"bench-{alive.pid}-z", alive.pid, "1")
        unmarked = tmp_path / "bench-kafka-abc"
        unmarked.mkdir()
        other = _owned_by(tmp_path, "something-else", dead.pid, dead_start)
        removed = procs.sweep_stale_tempdirs(str(tmp_path))
    finally:
        alive.kill()
        alive.wait()
    assert sorted(removed) == sorted([str(gone), str(reused)])
    assert not gone.exists() and not reused.exists()
    assert running.exists() and unmarked.exists() and other.exists()


def test_children_put_their_temp_files_in_the_owned_folder() -> None:
    root = procs.owned_tempdir()
    assert Path(root, procs.OWNER_FILE).read_text().split()[0] == str(__import__("os").getpid())
    env = procs.child_env()
    assert env["TMPDIR"] == root and env["SPARK_LOCAL_DIRS"] == root
