"""Child processes that can never outlive the benchmark.

Every child the runtime starts (broker, Spark master/workers, the Spark driver, SUT
and generator processes) goes through here, for three reasons:

- it gets its own session/process group, so that killing the group also kills what
  the child started itself (the JVM behind a PySpark driver, java behind a shell);
- it asks the kernel to SIGKILL it when its parent dies (``PR_SET_PDEATHSIG``), so
  that even a SIGKILLed benchmark leaves nothing behind;
- it is recorded in a process-wide table that an ``atexit`` hook and
  :func:`kill_all` empty, so Ctrl-C and errors clean up too.

Temporary files go below one folder per process (:func:`owned_tempdir`,
``$TMPDIR/bench-<pid>-*``) that names its owner (pid and start time) in
``.bench-owner``. A SIGKILLed run cannot remove it, so every start removes the
folders whose owner is gone (:func:`sweep_stale_tempdirs`); a pid alone could have
been reused, hence the start time.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_LIVE: dict[int, str] = {}  # pgid -> description
_LOCK = threading.Lock()


def _child_setup() -> None:
    """Runs in the child between fork and exec (keep it async-signal-safe-ish)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # not Linux/glibc: fall back to process groups + atexit only
        pass


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: its temp files (Python's, Spark's local dirs) go below
    this process's own temp folder, so that even a SIGKILLed run's are found and removed."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if _ROOT is not None and os.path.isdir(_ROOT):
        env["TMPDIR"] = _ROOT
        env.setdefault("SPARK_LOCAL_DIRS", _ROOT)
    if extra:
        env.update(extra)
    return env


def _remember(pid: int, what: str) -> None:
    with _LOCK:
        _LIVE[pid] = what


def forget(pid: int) -> None:
    with _LOCK:
        _LIVE.pop(pid, None)


def popen(cmd: Sequence[str], *, what: str = "", **kwargs: Any) -> subprocess.Popen[bytes]:
    """Blocking-world variant (tests, sync context managers)."""
    proc = subprocess.Popen(  # noqa: S603 - commands are built by the runtime
        list(cmd), start_new_session=True, preexec_fn=_child_setup, **kwargs
    )
    _remember(proc.pid, what or cmd[0])
    return proc


async def spawn(cmd: Sequence[str], *, what: str = "", **kwargs: Any) -> asyncio.subprocess.Process:
    """Start a child in its own session; the session id equals its pid."""
    proc = await asyncio.create_subprocess_exec(*cmd, start_new_session=True, preexec_fn=_child_setup, **kwargs)
    _remember(proc.pid, what or cmd[0])
    return proc


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    if sig == signal.SIGKILL:
        forget(pid)


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_group_sync(pid: int, grace: float = 3.0) -> None:
    """SIGTERM the group, wait up to ``grace`` s, then SIGKILL it."""
    kill_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _alive(pid):
        _reap(pid)
        time.sleep(0.05)
    kill_group(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


async def terminate(proc: asyncio.subprocess.Process, grace: float = 3.0) -> int | None:
    """Stop a child and everything in its group; returns its exit code."""
    if proc.returncode is None:
        kill_group(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            pass
    kill_group(proc.pid, signal.SIGKILL)  # the group may outlive its leader
    if proc.returncode is None:
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 5)
    return proc.returncode


def kill_all() -> None:
    """Kill every group still recorded (atexit, Ctrl-C, fatal errors)."""
    with _LOCK:
        pids = list(_LIVE)
    for pid in pids:
        kill_group(pid, signal.SIGKILL)
        _reap(pid)


def live() -> dict[int, str]:
    with _LOCK:
        return dict(_LIVE)


atexit.register(kill_all)

# ---------------------------------------------------------------- temporary folders

OWNER_FILE = ".bench-owner"
_ROOT: str | None = None
_BASE: str | None = None


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now = _start_time(pid)
    return started is None or now is None or now == started


def owned_tempdir() -> str:
    """This process's temp folder, created and marked with its owner on first use."""
    global _ROOT, _BASE
    if _ROOT is None or not os.path.isdir(_ROOT):
        _BASE = _BASE or tempfile.gettempdir()
        root = tempfile.mkdtemp(prefix=f"bench-{os.getpid()}-", dir=_BASE)
        Path(root, OWNER_FILE).write_text(f"{os.getpid()} {_start_time(os.getpid()) or '-'}\n")
        _ROOT = root
        atexit.register(_remove_root, root)
    return _ROOT


def _remove_root(root: str) -> None:
    kill_all()  # first: a broker still running would write into what is being removed
    shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def tempdir_in(root: str) -> Iterator[None]:
    """``tempfile``'s default folder is ``root`` meanwhile: for code that makes its own temp
    folders (the broker, a Spark cluster) without a ``dir`` argument."""
    saved = tempfile.tempdir
    tempfile.tempdir = root
    try:
        yield
    finally:
        tempfile.tempdir = saved


def sweep_stale_tempdirs(base: str | None = None) -> list[str]:
    """Remove the ``bench-*`` temp folders whose owner process is gone; returns their paths.

    Only folders with an owner file are touched: another user's or another tool's
    ``bench-*`` folder, or one of a run that is still alive, stays.
    """
    removed: list[str] = []
    folder = base or _BASE or tempfile.gettempdir()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith("bench-") or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            pid_text, _, started = Path(entry.path, OWNER_FILE).read_text().strip().partition(" ")
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if pid == os.getpid() or _owner_alive(pid, None if started in ("", "-") else started):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def install_sigterm_handler() -> None:
    """Turn SIGTERM into SystemExit so ``finally`` blocks and atexit run.

    Only from the main thread and only if nobody installed a handler already.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
