"""How a run ends on a signal: SIGTERM as Ctrl-C, also in a background job."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill``, a CI job's time limit, a container stopping) ends a run the way
    Ctrl-C does: the running experiment is torn down, every finished one stays, one line
    says so. Without it the embedded broker's handler turned SIGTERM into SystemExit in
    the middle of the event loop, which printed asyncio's "exception was never retrieved"
    traceback instead.

    A shell without job control starts a background job (``bench run ... &`` in a
    script, under nohup) with SIGINT ignored, and Python then installs no handler for it:
    SIGTERM turned into an ignored SIGINT, and ``kill`` left the run going to its end. For
    the run SIGINT gets Python's handler back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    previous = signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
