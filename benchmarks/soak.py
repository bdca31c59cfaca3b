"""Soak run: hundreds of short experiments in ONE ``bench run``, with faults injected at random.

What it answers: does a long run hold? A run of hours is many experiments in one CLI
process; whatever each one leaks (memory of the engine, a process, a topic, a temporary
folder, a CPU-limit cgroup, a result not written) adds up, and a set-up that slows as the
run ages makes later experiments measure something else than earlier ones.

How: the calibrated use case (no Spark, each SUT instance a small Python process) over a
grid of loads x instances with the ``full`` strategy, so that every pair is one
experiment and the number run is known beforehand; each experiment short (a few seconds
of load, no tear-down delay), with a CPU limit per SUT instance so that its cgroups are
made and removed each time. The script starts the broker itself and gives bench
``--bootstrap-servers``, so that it can pause that broker (SIGSTOP, a few seconds,
SIGCONT) and list the topics left on it after the run. A thread injects the faults at
random experiments, once one measures: a killed SUT process, a killed generator process,
a broker pause. ``bench run`` gets a marker in its environment (every process it starts
inherits it, so they are found in /proc even re-parented) and a temporary folder of its
own (``TMPDIR``), so that other runs on this shared machine are not counted.

It prints the CLI's RSS after the first experiment, after the warm-up experiments and at
the end, with the growth over the run; processes, topics, temporary files and cgroups
left behind; the per-experiment set-up and tear-down time (wall time minus the measured
duration, experiments without a fault) at the start and at the end (medians of the first
and last ten); experiments run against experiments in the result file. Goal: memory
growth < 5 %, nothing left behind, nothing lost, set-up time flat (end within 20 % or
0.5 s of the start).

    python benchmarks/soak.py              # >= 200 experiments, ~15 faults (20-30 min)
    python benchmarks/soak.py --quick      # 4 experiments, 2 faults (about a minute)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MARK = "BENCH_SOAK_RUN"
FAULT_KINDS = ("sut", "generator", "broker-pause")
#: what the command line of each fault's target contains
NEEDLES = {"sut": "calibrated_sut", "generator": "generator_main"}
#: set-up time counts as flat when the end's median is within this of the start's
FLAT_RATIO, FLAT_SECONDS = 1.2, 0.5
MEMORY_GOAL_PCT = 5.0
#: experiments whose RSS is taken as the run's start: imports and first-use caches are
#: filled by then, and what grows after them is what the run keeps
WARM_EXPERIMENTS = 10
CGROUP_ROOTS = (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup"))


# ------------------------------------------------------------------ pure parts

def grid(experiments: int, resources: Sequence[int] = (1, 2), first: int = 100, step: int = 10) -> list[int]:
    """Loads (sensors) such that loads x ``resources`` gives at least ``experiments`` pairs."""
    count = math.ceil(experiments / len(resources))
    return [first + step * i for i in range(count)]


def execution_doc(loads: Sequence[int], resources: Sequence[int], duration: float, warmup: float,
                  sample_interval: float) -> dict[str, Any]:
    """The execution file: every pair measured once (``full``), no delay between experiments."""
    return {
        "benchmark": "calibrated",
        "load": {"loadType": "NumSensors", "loadValues": list(loads)},
        "resources": {"resourceType": "Instances", "resourceValues": list(resources)},
        "execution": {"strategy": {"name": "full", "restrictions": []}, "duration": duration, "warmup": warmup,
                      "sampleInterval": sample_interval, "repetitions": 1, "afterTeardownDelay": 0,
                      "earlyStop": False},
    }


def fault_plan(experiments: int, faults: int, seed: int) -> list[tuple[int, str]]:
    """``faults`` (experiment index, kind) pairs at distinct random experiments after the
    first (which is the memory baseline's), the kinds taken in turns from a shuffled
    order so that every kind comes up once there are three faults."""
    rng = random.Random(seed)
    faults = max(0, min(faults, experiments - 1))
    at = sorted(rng.sample(range(1, experiments), faults))
    kinds = list(FAULT_KINDS)
    rng.shuffle(kinds)
    return [(index, kinds[i % len(kinds)]) for i, index in enumerate(at)]


def growth_pct(start: float, end: float) -> float:
    return (end - start) / start * 100.0 if start > 0 else float("nan")


def first_last_medians(values: Sequence[float], k: int = 10) -> tuple[float, float]:
    """Median of the first ``k`` and of the last ``k`` values (halves when there are fewer than 2k)."""
    if not values:
        return float("nan"), float("nan")
    k = max(1, min(k, len(values) // 2 or 1))
    return float(statistics.median(values[:k])), float(statistics.median(values[-k:]))


def setup_times(experiments: Iterable[Mapping[str, Any]], duration: float) -> list[float]:
    """Per experiment, in the order they ran: wall time minus the measured duration (the
    set-up and tear-down bench adds), of those without a fault (a retry measures twice)."""
    clean = [e for e in experiments if not e.get("faults") and e.get("finished") and e.get("started")]
    clean.sort(key=lambda e: float(e["started"]))
    return [float(e["finished"]) - float(e["started"]) - duration for e in clean]


def rss_at(samples: Sequence[tuple[float, int]], when: float) -> int | None:
    """The last RSS sample taken at or before ``when`` (epoch seconds, an experiment's end):
    the run as it holds an experiment, not the next one's set-up nor, after the last, the
    final table and plots (matplotlib's import alone is some 15 MiB)."""
    before = [rss for t, rss in samples if t <= when]
    return before[-1] if before else None


def tenths(ended: Sequence[float]) -> list[float]:
    """The ends of the experiments at each tenth of the run (for the RSS trend)."""
    if not ended:
        return []
    return [ended[min(len(ended) - 1, math.ceil(len(ended) * k / 10) - 1)] for k in range(1, 11)]


#: progress lines of one pair: its start, a fault of it, its verdict
_STARTING = re.compile(r"load=(\S+) resources=(\S+)"
                       r"(?: rep \d+/\d+: starting|: PASS|: FAIL|: ERROR| rep \d+/\d+: \S+Error)")


def experiments_started(log: str) -> int:
    """The (load, resources) pairs the engine started, from its progress lines: what it ran,
    independently of what it wrote (a retry starts the same pair again)."""
    return len(set(_STARTING.findall(log)))


def leftover_topics(names: Iterable[str]) -> list[str]:
    """Topics on the soak's own broker after the run, but the broker's internal ones (``__*``)."""
    return sorted(n for n in names if not n.startswith("_"))


def flat(start: float, end: float) -> bool:
    return end <= max(start * FLAT_RATIO, start + FLAT_SECONDS)


@dataclass
class Report:
    experiments_planned: int
    experiments_recorded: int = 0
    #: pairs the engine started (its progress lines); the planned ones when it printed none
    experiments_run: int | None = None
    errors: int = 0
    faults_injected: list[str] = field(default_factory=list)
    #: planned faults that found no target (the experiment ended first): said, not hidden
    faults_missed: list[str] = field(default_factory=list)
    rss_first_kb: int | None = None
    rss_warm_kb: int | None = None
    rss_end_kb: int | None = None
    #: at the end of each tenth of the experiments: a leak grows steadily, a cache in steps
    rss_trend_kb: list[int | None] = field(default_factory=list)
    processes_left: list[str] = field(default_factory=list)
    topics_left: list[str] = field(default_factory=list)
    temp_left: list[str] = field(default_factory=list)
    cgroups_left: list[str] = field(default_factory=list)
    setup_start_s: float = float("nan")
    setup_end_s: float = float("nan")
    exit_code: int | None = None
    wall_s: float = 0.0

    @property
    def lost(self) -> int:
        run = self.experiments_planned if self.experiments_run is None else self.experiments_run
        return run - self.experiments_recorded

    @property
    def growth(self) -> float:
        if self.rss_warm_kb is None or self.rss_end_kb is None:
            return float("nan")
        return growth_pct(self.rss_warm_kb, self.rss_end_kb)

    def left_behind(self) -> bool:
        return bool(self.processes_left or self.topics_left or self.temp_left or self.cgroups_left)

    def goals(self) -> dict[str, bool]:
        return {
            f"memory growth < {MEMORY_GOAL_PCT:g} %": self.growth < MEMORY_GOAL_PCT,
            "nothing left behind": not self.left_behind(),
            "nothing lost": self.lost == 0 and self.exit_code == 0 and self.experiments_recorded > 0,
            "set-up time flat": flat(self.setup_start_s, self.setup_end_s),
        }

    def lines(self) -> list[str]:
        kb = lambda v: "?" if v is None else f"{v / 1024:.1f} MiB"  # noqa: E731
        goals = self.goals()
        return [
            f"experiments: {self.experiments_planned} planned, {self.experiments_run} run, "
            f"{self.experiments_recorded} in the result file, "
            f"{self.lost} lost ({self.errors} with outcome error); bench exit code {self.exit_code}; "
            f"{self.wall_s:.0f} s",
            f"faults injected ({len(self.faults_injected)}): {'; '.join(self.faults_injected) or 'none'}"
            + (f"; missed: {'; '.join(self.faults_missed)}" if self.faults_missed else ""),
            f"CLI RSS: {kb(self.rss_first_kb)} after the first experiment, {kb(self.rss_warm_kb)} after the "
            f"warm-up ones, {kb(self.rss_end_kb)} at the end: growth {self.growth:+.1f} %",
            "CLI RSS at each tenth of the experiments: " + (", ".join(kb(v) for v in self.rss_trend_kb) or "?"),
            f"left behind: processes {self.processes_left or 'none'}; topics {self.topics_left or 'none'}; "
            f"temporary files {self.temp_left or 'none'}; cgroups {self.cgroups_left or 'none'}",
            f"set-up + tear-down per experiment: {self.setup_start_s:.2f} s at the start, "
            f"{self.setup_end_s:.2f} s at the end (medians of the first and last {WARM_EXPERIMENTS})",
            "goal: " + ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in goals.items()),
        ]


# ------------------------------------------------------------------ the run

def marked(token: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment carries the soak's marker."""
    found: dict[int, str] = {}
    needle = f"{MARK}={token}".encode()
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


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def recorded(result: Path) -> list[dict[str, Any]]:
    try:
        doc = json.loads(result.read_text())
    except (OSError, ValueError):
        return []
    return list(doc.get("experiments") or [])


class Soak:
    def __init__(self, experiments: int, faults: int, seed: int, duration: float, warmup: float,
                 sample_interval: float, pause_s: float, cpu_per_instance: float) -> None:
        self.loads = grid(experiments)
        self.resources = [1, 2]
        self.planned = len(self.loads) * len(self.resources)
        self.plan = fault_plan(self.planned, faults, seed)
        self.rng = random.Random(seed + 1)
        self.duration, self.warmup, self.interval = duration, warmup, sample_interval
        self.pause_s, self.cpu = pause_s, cpu_per_instance
        self.token = uuid.uuid4().hex
        self.rss: list[tuple[float, int]] = []
        self.injected: list[str] = []
        self.missed: list[str] = []
        self.done = threading.Event()
        self.keep = False

    def run(self) -> Report:
        from bench.runtime.kafka.broker import start_broker_sync

        work = Path(tempfile.mkdtemp(prefix="soak-"))
        tmp = work / "tmp"  # bench's own TMPDIR: all it leaves there is left behind
        tmp.mkdir()
        execution = work / "execution.json"
        execution.write_text(json.dumps(execution_doc(self.loads, self.resources, self.duration, self.warmup,
                                                      self.interval)))
        results = work / "results"
        report = Report(self.planned)
        broker = start_broker_sync()
        try:
            cmd = [sys.executable, "-m", "bench.cli.commands", "run", "--plugin", "calibrated",
                   "--execution", str(execution), "--bootstrap-servers", broker.bootstrap_servers,
                   "--results", str(results), "--retries", "2", "--set", "capacity=100000",
                   "--set", f"sut.cpuPerInstance={self.cpu:g}", "--early-sample-interval", "0",
                   # every experiment passes: a failure at the most instances would let the search
                   # infer the loads above it instead of running them, and the soak counts runs
                   "--threshold", "1000000"]
            env = {**os.environ, MARK: self.token, "TMPDIR": str(tmp)}
            started = time.monotonic()
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            result = results / "exp0-result.json"
            threads = [threading.Thread(target=self._sample, args=(proc.pid,), daemon=True),
                       threading.Thread(target=self._inject, args=(result, broker.pid), daemon=True)]
            for t in threads:
                t.start()
            _, stderr = proc.communicate()
            self.done.set()
            for t in threads:
                t.join(timeout=self.pause_s + 5)
            report.wall_s = time.monotonic() - started
            report.exit_code = proc.returncode
            report.experiments_run = experiments_started(stderr) or None
            if proc.returncode != 0 or self.keep:
                (work / "bench-run.stderr").write_text(stderr)
                if proc.returncode != 0:
                    print(f"bench run exited {proc.returncode}: {stderr[-2000:]}", file=sys.stderr)
            time.sleep(1.0)  # what a clean exit stops is gone by now
            self._account(report, recorded(result), proc.pid, tmp)
            report.topics_left = leftover_topics(_topics(broker.bootstrap_servers))
        finally:
            broker.stop_sync()
            if not self.keep:
                shutil.rmtree(work, ignore_errors=True)
            else:
                print(f"kept: {work}")
        return report

    def _account(self, report: Report, experiments: list[dict[str, Any]], pid: int, tmp: Path) -> None:
        report.experiments_recorded = len({(e.get("load"), e.get("resources")) for e in experiments})
        report.errors = sum(1 for e in experiments if e.get("outcome") == "error")
        report.faults_injected, report.faults_missed = list(self.injected), list(self.missed)
        ended = sorted(float(e["finished"]) for e in experiments if e.get("finished"))
        if ended:
            report.rss_first_kb = rss_at(self.rss, ended[0])
            warm = ended[min(WARM_EXPERIMENTS, len(ended) // 4)] if len(ended) > 1 else ended[0]
            report.rss_warm_kb = rss_at(self.rss, warm)
            # the last experiment's end, not the process's: the final table and plots load
            # libraries once per run, which is not what a longer run would keep adding to
            report.rss_end_kb = rss_at(self.rss, ended[-1]) or (self.rss[-1][1] if self.rss else None)
            report.rss_trend_kb = [rss_at(self.rss, t) for t in tenths(ended)]
        report.processes_left = [f"{p} {c[:80]}" for p, c in marked(self.token).items()]
        report.temp_left = sorted(p.name for p in tmp.iterdir())
        report.cgroups_left = sorted(str(p) for root in CGROUP_ROOTS if root.is_dir()
                                     for p in root.glob(f"bench-{pid}-*"))
        report.setup_start_s, report.setup_end_s = first_last_medians(setup_times(experiments, self.duration),
                                                                      WARM_EXPERIMENTS)

    def _sample(self, pid: int) -> None:
        while not self.done.is_set():
            value = rss_kb(pid)
            if value is not None:
                self.rss.append((time.time(), value))
            self.done.wait(0.5)

    def _inject(self, result: Path, broker_pid: int) -> None:
        """Each planned fault once its experiment measures (its generator runs), 0.5-1.5 s in."""
        for index, kind in self.plan:
            while not self.done.is_set():
                if len(recorded(result)) >= index and any("generator_main" in c for c in
                                                          marked(self.token).values()):
                    break
                self.done.wait(0.5)
            if self.done.wait(self.rng.uniform(0.5, 1.5)):
                return
            index = len(recorded(result))  # the experiment measuring now (the planned one, or the next)
            try:
                if kind == "broker-pause":
                    os.kill(broker_pid, signal.SIGSTOP)
                    try:
                        time.sleep(self.pause_s)
                    finally:
                        os.kill(broker_pid, signal.SIGCONT)
                    self.injected.append(f"broker paused {self.pause_s:g} s in experiment {index + 1}")
                    continue
                target = next((p for p, c in marked(self.token).items() if NEEDLES[kind] in c), None)
                if target is None:
                    self.missed.append(f"{kind}: no process to kill in experiment {index + 1}")
                    continue
                os.kill(target, signal.SIGKILL)
                self.injected.append(f"{kind} process killed in experiment {index + 1}")
            except OSError as exc:
                self.missed.append(f"{kind} in experiment {index + 1}: {exc}")


def _topics(bootstrap: str) -> list[str]:
    from confluent_kafka.admin import AdminClient

    return list(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="4 experiments of 4 s, 2 faults (the e2e test's mode, about a minute)")
    parser.add_argument("--experiments", type=int, default=200)
    parser.add_argument("--faults", type=int, default=15)
    parser.add_argument("--seed", type=int, default=69)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of load per experiment")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds a broker pause lasts")
    parser.add_argument("--cpu-per-instance", type=float, default=0.5, help="the SUT's CPU limit per instance")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the run's folder (results, execution file)")
    args = parser.parse_args(argv)
    if args.quick:
        args.experiments, args.faults, args.duration = 4, 2, 4.0
    soak = Soak(args.experiments, args.faults, args.seed, args.duration, warmup=1.0, sample_interval=1.0,
                pause_s=args.pause, cpu_per_instance=args.cpu_per_instance)
    soak.keep = args.keep
    one, five, fifteen = os.getloadavg()
    print(f"== soak: {soak.planned} experiments, {len(soak.plan)} faults, seed {args.seed} "
          f"(load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores)", flush=True)
    report = soak.run()
    for line in report.lines():
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps({**asdict(report), "lost": report.lost, "growth_pct": report.growth,
                                               "goals": report.goals()}, indent=2))
    return 0 if all(report.goals().values()) else 1


if __name__ == "__main__":
    sys.exit(main())
