"""Offline analysis of result folders: re-evaluate, judge confidence, compare, report.

Everything here reads the files a run left behind (METHOD.md names), never a live
run, so it works on any folder, including one from an interrupted run or from
another machine. The commands (`bench analyze`, `bench report`, `bench compare`)
live in :mod:`bench.analysis.commands`.
"""
