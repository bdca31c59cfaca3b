"""Child processes that can never outlive the benchmark.

Every child the runtime starts (broker, Spark master/workers, the Spark driver, SUT
and generator processes) goes through here, for three reasons:

- it gets its own session/process group, so that killing the group also kills what
  the child started itself (the JVM behind a PySpark driver, java behind a shell);
- it asks the kernel to SIGKILL it when its parent dies (``PR_SET_PDEATHSIG``), so
  that even a SIGKILLed benchmark leaves nothing behind;
- it is recorded in a process-wide table that an ``atexit`` hook and
  :func:`kill_all` empty, so Ctrl-C and errors clean up too.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
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
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
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
