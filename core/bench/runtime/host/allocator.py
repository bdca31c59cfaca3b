"""The C allocator of a long run: large transient buffers go back to the system.

glibc serves a request of 128 KiB or more with its own mapping, returned when freed;
but each such free raises that threshold (up to 32 MiB), after which the same sizes
come from the heap, which keeps what it grew to. A run's CLI makes buffers of that size
now and then (sample arrays, result and plot files, Kafka responses), and a
200-experiment soak's RSS grew by about 60 KiB an experiment, steadily, where the
Python objects it kept grew by a third of that (docs/performance.md, "Soak"). Fixing
the threshold at its default keeps those buffers mapped and returned: the same run in
one process grew 30 KiB an experiment, half as much.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: glibc's ``mallopt`` parameter for the mapping threshold, and its default value
M_MMAP_THRESHOLD = -3
THRESHOLD = 128 * 1024


def steady_heap() -> bool:
    """Fix glibc's mapping threshold for this process; False where there is no glibc
    (macOS, musl) or it refuses, and nothing changes."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    except (OSError, AttributeError):  # musl has no mallopt
        return False
