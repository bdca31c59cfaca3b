"""Which processes belong to a SUT: its process groups and everything they started.

A child of bench runs in a process group of its own (:mod:`bench.runtime.host.procs`),
and that group held the SUT until PySpark's worker daemon was found to leave it: the
daemon calls ``os.setpgid(0, 0)``, so its Python workers sit in a group of their own
under the JVM. Whatever must cover the SUT (its CPU limit, its CPU and memory figures)
therefore follows parent links as well as the group.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

PROC = "/proc"


def stat_fields(text: str) -> list[str]:
    """The fields of one ``/proc/<pid>/stat`` line from field 3 (state) on.

    The command name (field 2) may hold spaces and parentheses; fields are counted
    after its last ``)``: ``[1]`` is the parent pid, ``[2]`` the process group.
    """
    return text[text.rindex(")") + 2 :].split()


def processes(proc: str = PROC) -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live process."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = stat_fields(fh.read())
            found[int(entry)] = (int(fields[1]), int(fields[2]))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def members(groups: Iterable[int], table: Mapping[int, tuple[int, int]]) -> set[int]:
    """The processes of ``groups`` (a group's leader pid is its id) and all their descendants."""
    wanted = set(groups)
    chosen = {pid for pid, (_, pgrp) in table.items() if pid in wanted or pgrp in wanted}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    stack = list(chosen)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in chosen:
                chosen.add(child)
                stack.append(child)
    return chosen
