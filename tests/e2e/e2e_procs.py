"""Finding the processes a test started, by a marker in their environment.

Not a test module; the e2e tests that check "nothing is left behind" import it by name.
Every child inherits its parent's environment, so a marker set on the CLI's command
reaches the broker, the Spark JVM and every Python worker it started.
"""

from __future__ import annotations

import os
from pathlib import Path


def marked(mark: str, token: str) -> dict[int, str]:
    """pid -> command line of every live, non-zombie process whose environment has ``mark=token``."""
    found: dict[int, str] = {}
    needle = f"{mark}={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            found[int(entry.name)] = cmd
    return found
