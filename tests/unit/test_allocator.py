"""bench run fixes glibc's mapping threshold (bench.runtime.host.allocator)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from bench.runtime.host import allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_the_threshold_is_fixed_where_glibc_is() -> None:
    """In a child: mallopt accepts the fixed threshold there, and a process without it
    says so rather than failing."""
    code = ("from bench.runtime.host import allocator; import platform; "
            "print(allocator.steady_heap(), platform.libc_ver()[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == ("True" if out[1:] == ["glibc"] else "False")


def test_elsewhere_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.steady_heap() is False
