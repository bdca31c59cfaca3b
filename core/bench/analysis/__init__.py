"""Offline analysis of result folders: re-evaluate, judge confidence, compare, report.

Everything here reads the files a run left behind (named as the Theodolite method's
result files, listed in README.md under "Results"), never a live run, so it works on
any folder, including one from an interrupted run or from another machine. The
commands (`bench analyze`, `bench report`, `bench compare`) live in
:mod:`bench.analysis.commands`.
"""
