"""SIGTERM ends a run like Ctrl-C also where the run was started as a background job of a
shell without job control (``bench run ... &`` in a script): such a job inherits SIGINT
ignored, and SIGTERM, turned into that ignored SIGINT, left the run going to its end."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from bench.cli import interrupts


@pytest.fixture
def sigint_ignored() -> Iterator[None]:
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def test_sigterm_interrupts_a_run_whose_sigint_was_ignored(sigint_ignored: None) -> None:
    with pytest.raises(KeyboardInterrupt), interrupts.sigterm_as_ctrl_c():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):  # the handler runs between bytecodes of the main thread
            pass
    # and after the run the job's own setting is back
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_sigterm_interrupts_a_run_in_the_foreground() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), interrupts.sigterm_as_ctrl_c():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):
            pass
    assert signal.getsignal(signal.SIGINT) is before
