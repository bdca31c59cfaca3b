"""A curve on a machine twice as fast or twice as slow (issue 67, items 4 and 5), on the
fake platform: one instance processes ``speed`` x 10,000 records/s per quarter core (UC1's
figure on a 2-core machine), in proportion to its CPU limit. Whatever the speed, and with
a CPU limit the user gave (``--set sut.cpuPerInstance=0.5`` / ``0.125``), the sized run
measures distinct demands: three where bench may choose the limit, at least two where the
user fixed it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.api import ExperimentSpec, Sample, UseCase, standard_benchmark
from bench.config.model import parse_benchmark, parse_execution
from bench.execution import autosize
from bench.execution.config import RunConfig
from bench.execution.run import Engine
from bench.search.sizing_record import AutoSize

from tests.unit import verdict_runs
from tests.unit.fakes import FakePlatform
from tests.unit.test_engine import SimClock

PER_QUARTER_CORE = 10_000.0


def benchmark() -> dict[str, Any]:
    return standard_benchmark("fake", {"input": 4}, generator={"sensors": 10}, cpu_per_instance=0.25)


USE_CASE = UseCase(name="fake", description="fake for tests", default_benchmark=benchmark, sut_process="fake")


class Machine(FakePlatform):
    """Instances as fast as their CPU limit and the machine's speed; the SUT's committed
    records/s sampled as ``processed-rate``."""

    def __init__(self, speed: float, overhead: float = 0.0) -> None:
        super().__init__()
        self.speed = speed
        #: cores of the SUT process's fixed cost, shared by its instances (a JVM's JIT
        #: compiler and collector): what it leaves the instances is not in proportion
        self.overhead = overhead
        self.cpus: list[float] = []
        self.probed: list[float] = []

    async def sample(self, spec: ExperimentSpec) -> Sample:
        self.samples_in_rep += 1
        self.clock += self.interval
        sut = next(o for o in spec.objects if o["kind"] == "BenchSut")
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        cpu = float(sut["spec"]["cpuPerInstance"])
        replicas = sut["spec"]["replicas"]
        if self.samples_in_rep == 1:
            self.cpus.append(cpu)
            self.probed.append(replicas)
        rate = gen["spec"]["sensors"] * 1000 / gen["spec"]["periodMs"]
        processed = min(rate + self.lag / self.interval, PER_QUARTER_CORE * self.speed
                        * max(replicas * cpu - self.overhead, 0.0) / 0.25)
        self.lag = max(0.0, self.lag + (rate - processed) * self.interval)
        return Sample(self.clock, {"lag": self.lag, "processed-rate": processed})


async def sized_table(tmp_path: Path, speed: float, cpu: float | None, overhead: float = 0.0,
                      duration: float = 90, said: list[str] | None = None, resume: bool = False,
                      resources: list[float] | None = None) -> tuple[dict[float, float | None], Machine]:
    doc = parse_benchmark(benchmark())
    if cpu is not None:
        doc = autosize.with_cpu(doc, cpu)
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [1000]},
        "resources": {"resourceType": "Instances", "resourceValues": resources or [1]},
        "execution": {"duration": duration, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}})
    auto = AutoSize(True, resources is None, None if cpu is None else "--set sut.cpuPerInstance")
    cfg = RunConfig(use_case=USE_CASE, benchmark=doc, execution=execution, results_dir=tmp_path, retries=0,
                    auto=auto, resume=resume)
    clock = SimClock()
    machine = Machine(speed, overhead)
    outcome = await Engine(verdict_runs.registry(), cfg, machine,
                           lambda m, t: said.append(m) if said is not None else None, clock=clock,
                           sleep=clock.sleep).run()
    return outcome.table, machine


@pytest.mark.parametrize("speed", [0.5, 1.0, 2.0, 4.0])
async def test_three_demands_on_a_slower_or_faster_machine(tmp_path: Path, speed: float,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe asks 40,000 records/s of two instances: up to twice as fast they fall
    behind it; as fast as that or faster they keep up, and a second probe asks twice as
    much (what the path is taken to push). The CPU limit stays: the loads fit the path."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)  # the probe's load: the 2-core machine's
    table, machine = await sized_table(tmp_path, speed, None)
    assert len({v for v in table.values() if v is not None}) >= 3, table
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert [p["source"] for p in stored["probes"]][0] == "committed" and machine.cpus[0] == 0.25
    first = stored["probes"][0]
    assert first["saturated"] == (speed < 2)
    assert [p["load"] for p in stored["probes"]] == ([40_000] if speed < 2 else [40_000, 80_000])
    assert stored["cpuLoweredFrom"] is None and set(machine.cpus) == {0.25}


@pytest.mark.parametrize("overhead", [0.0, 0.05])
@pytest.mark.parametrize("cpu", [0.5, 0.125])
async def test_a_cpu_limit_given_is_kept_and_still_shows_two_demands(tmp_path: Path, cpu: float, overhead: float,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Also where the SUT process's fixed cost (``overhead`` cores) takes 40 % of an
    eighth-core instance."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    table, machine = await sized_table(tmp_path, 1.0, cpu, overhead)
    assert set(machine.cpus) == {cpu}
    assert len({v for v in table.values() if v is not None}) >= 2, table


async def test_a_fixed_cost_shared_by_the_instances_still_shows_three_demands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SUT process whose JIT and collector take 0.1 core whatever its instances: one
    quarter-core instance does 6,000 records/s, two 16,000, three 26,000. Sized from one
    instance's figure the loads (3,000, 9,000, 15,000) show demands 1, 2, 2; the probe of
    two instances sizes them from 8,000 per instance, inside each demand's share."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    table, machine = await sized_table(tmp_path, 1.0, None, overhead=0.1)
    assert machine.probed[0] == autosize.PROBE_INSTANCES == 2
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert stored["probes"][0]["instances"] == 2 and stored["probes"][0]["per_instance_rate"] == pytest.approx(8000)
    assert sorted(v for v in table.values() if v is not None) == [1, 2, 3], table


class FloodedMachine(Machine):
    """A flood of input (10,000 records/s or more) takes a third of the instances' CPU:
    the generator and broker pushing it share the machine's cores with them."""

    async def sample(self, spec: ExperimentSpec) -> Sample:
        gen = next(o for o in spec.objects if o["kind"] == "BenchGenerator")
        flooded = gen["spec"]["sensors"] * 1000 / gen["spec"]["periodMs"] >= 10_000
        speed = self.speed
        self.speed = speed * (2 / 3 if flooded else 1.0)
        try:
            return await super().sample(spec)
        finally:
            self.speed = speed


async def test_a_flooded_probe_is_repeated_near_what_its_instances_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An eighth-core instance of 300 records/s reads 200 under the probe's 40,000: loads
    at 0.2 and 1.3 of that (40 and 260) would need one instance each. Probed again at
    twice what the two read, it reads its own 300 and the loads show three demands."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(f"{__name__}.Machine", FloodedMachine)
    table, machine = await sized_table(tmp_path, 0.06, 0.125)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    first, second = stored["probes"]
    assert first["load"] == 40_000 and first["per_instance_rate"] == pytest.approx(200, rel=0.05)
    assert second["load"] == pytest.approx(800, rel=0.05)
    assert second["per_instance_rate"] == pytest.approx(300, rel=0.05)
    assert sorted({v for v in table.values() if v is not None}) == [1, 2, 3], table


def test_given_resources_probe_the_amount_nearest_two() -> None:
    sized = AutoSize(True, False)
    assert autosize.probe_instances(AutoSize(True, True), [1]) == 2
    assert autosize.probe_instances(sized, [1, 2, 3]) == 2
    assert autosize.probe_instances(sized, [1]) == 1
    assert autosize.probe_instances(sized, [1, 3]) == 1
    assert autosize.probe_instances(sized, [4, 8]) == 4


class BatchMachine(Machine):
    """A micro-batch SUT: a batch ends every 10 s, its driver reporting the rows read so far
    (``spark-input-rows``) and the time of the last batch end (``spark-batch-end``)."""

    def __init__(self, speed: float) -> None:
        super().__init__(speed)
        self.read = 0.0
        self.last_end = 0.0

    async def start_sut(self, spec: ExperimentSpec) -> None:
        await super().start_sut(spec)
        self.read, self.last_end = 0.0, self.clock

    async def sample(self, spec: ExperimentSpec) -> Sample:
        sample = await super().sample(spec)
        self.read += sample.values["processed-rate"] * self.interval
        if self.clock - self.last_end >= 10.0:
            self.last_end = self.clock
        values = {k: v for k, v in sample.values.items() if k != "processed-rate"}
        return Sample(sample.timestamp, {**values, "spark-input-rows": self.read, "spark-batch-end": self.last_end})


async def test_a_micro_batch_sut_that_keeps_up_with_the_probe_is_probed_again_at_half_its_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two instances read all of the probe's 40,000 records/s in their batches. A Spark
    SUT does so at any load by growing its batches, so a heavier probe would tell nothing:
    the run probes the same load again at half the CPU limit, where the instances fall
    behind it (two quarter-core UC1 instances kept up with 40,000, the table then showing
    two demands twice; at an eighth of a core they read 17,863 each, and three demands)."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = BatchMachine(3.0)  # 30,000 records/s per quarter-core instance
    said: list[str] = []
    outcome = await batch_run(tmp_path, machine, said)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    first, second = stored["probes"]
    assert first["source"] == second["source"] == "batches", stored
    assert not first["saturated"] and first["load"] == second["load"] == 40_000 and first["cpu"] == 0.25
    assert second["saturated"] and second["cpu"] == 0.125
    assert second["per_instance_rate"] == pytest.approx(15_000, rel=0.05)
    assert stored["cpuPerInstance"] == 0.125 and stored["cpuLoweredFrom"] == 0.25
    # the run says why it lowered the limit, then why it chose the loads
    assert "is a lower bound" in stored["reason"] and "(0.125 core)" in stored["reason"], stored["reason"]
    assert "; then loads at 0.2, 1.3, 2.3 x the probe's 15,000" in stored["reason"], stored["reason"]
    # each probe's figure as it ends, and why the limit is lowered before the probe there
    sizing_lines = [m.split(":")[0] + (" 0.125" if "(0.125 core)" in m else "") for m in said
                    if m.startswith(("sizing", "sized"))]
    assert sizing_lines == ["sizing", "sizing probe (2 instances, 0.25 core per instance)", "sizing 0.125",
                            "sizing 0.125", "sizing probe (2 instances, 0.125 core per instance)",
                            "sized for this machine"], said
    assert set(machine.cpus[2:]) == {0.125}  # every experiment at the probed limit
    assert len({v for v in outcome.table.values() if v is not None}) >= 3, outcome.table


async def batch_run(tmp_path: Path, machine: BatchMachine, said: list[str], cpu: float | None = None,
                    use_case: UseCase = USE_CASE, loads: list[float] | None = None) -> Any:
    doc = parse_benchmark(benchmark()) if cpu is None else autosize.with_cpu(parse_benchmark(benchmark()), cpu)
    execution = parse_execution({
        "benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": loads or [1000]},
        "resources": {"resourceType": "Instances", "resourceValues": [1]},
        "execution": {"duration": 90, "warmup": 10, "repetitions": 1, "afterTeardownDelay": 0,
                      "sampleInterval": 5, "earlyStop": False}})
    cfg = RunConfig(use_case=use_case, benchmark=doc, execution=execution, results_dir=tmp_path, retries=0,
                    auto=AutoSize(loads is None, True, None if cpu is None else "--set sut.cpuPerInstance"))
    clock = SimClock()
    return await Engine(verdict_runs.registry(), cfg, machine, lambda m, t: said.append(m), clock=clock,
                        sleep=clock.sleep).run()


async def test_instances_that_keep_up_at_half_the_limit_too_keep_that_limit_and_say_no_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two eighth-core UC1 instances, their query warmed on valid records, kept up with
    40,000 records/s too (20,057 each): the run measures at the limit probed last, and its
    reason names no lower one it did not take (it read "a lower CPU limit per instance
    (0.062 core) makes room for a curve" at 0.125)."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = BatchMachine(5.0)  # 50,000 records/s per quarter-core instance, 25,000 at an eighth
    said: list[str] = []
    await batch_run(tmp_path, machine, said)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert [p["saturated"] for p in stored["probes"]] == [False, False], stored
    assert stored["cpuPerInstance"] == 0.125 and set(machine.cpus[2:]) == {0.125}
    assert "(0.125 core)" in stored["reason"] and "0.062" not in stored["reason"], stored["reason"]


#: a use case with a Spark topology (never run: the fake platform measures)
SPARK_USE_CASE = UseCase(name="fake", description="fake Spark use case for tests", default_benchmark=benchmark,
                         topology=lambda ctx: None)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("speed", [3.0, 5.0])
async def test_a_spark_use_case_probes_first_at_half_its_limit_and_once(
        tmp_path: Path, speed: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two quarter-core instances of each continuous-load Spark use case kept up with the
    probe's whole load on 2-core machines, so the first probe runs at an eighth of a core:
    where its instances fall behind (speed 3: 15,000 records/s each) or keep up as they
    did at the full limit (speed 5), it sizes the run alone, with no halving below it."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = BatchMachine(speed)
    said: list[str] = []
    outcome = await batch_run(tmp_path, machine, said, use_case=SPARK_USE_CASE)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert [(p["cpu"], p["saturated"]) for p in stored["probes"]] == [(0.125, speed < 4)], stored
    assert stored["cpuPerInstance"] == 0.125 and stored["cpuLoweredFrom"] == 0.25
    assert set(machine.cpus) == {0.125}
    assert stored["reason"].startswith("a Spark use case's first probe runs at half its CPU limit (0.125 core)")
    assert "0.062" not in stored["reason"], stored["reason"]
    assert len({v for v in outcome.table.values() if v is not None}) >= 2, outcome.table


@pytest.mark.parametrize("given", ["cpu", "loads"])
async def test_a_spark_use_case_keeps_its_limit_for_a_given_limit_or_given_loads(
        tmp_path: Path, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit the user gave is never changed; nor is the use case's where the user gave
    the loads and only the resources are sized."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = BatchMachine(3.0)
    await batch_run(tmp_path, machine, [], cpu=0.25 if given == "cpu" else None, use_case=SPARK_USE_CASE,
                    loads=[20_000] if given == "loads" else None)
    stored = json.loads((tmp_path / "exp0-sizing.json").read_text())
    assert stored["probes"][0]["cpu"] == 0.25 and set(machine.cpus) == {0.25}, stored


def test_a_stepped_load_probes_first_at_the_use_cases_limit() -> None:
    """UC4's levels are sized by their steps at the use case's limit (``sizing.step_cpu``)."""
    doc = parse_benchmark(benchmark())
    execution = parse_execution({"benchmark": "fake", "load": {"loadType": "NumSensors", "loadValues": [1]},
                                 "resources": {"resourceType": "Instances", "resourceValues": [1]}})
    cfg = RunConfig(use_case=SPARK_USE_CASE, benchmark=doc, execution=execution, results_dir=Path("."))
    steps = {float(k): 4.0 ** k for k in range(1, 10)}

    def stepped(x: float) -> float:
        return steps[x]

    assert autosize.first_probe_cpu(cfg, stepped, 16_384, 0.25, None) is None
    assert autosize.first_probe_cpu(cfg, lambda x: x, 40_000, 0.25, None) == 0.125
    assert autosize.first_probe_cpu(cfg, lambda x: x, 40_000, 0.25, "--set sut.cpuPerInstance") is None
    assert autosize.first_probe_cpu(cfg, lambda x: x, 40_000, 0.0, None) is None
    assert autosize.first_probe_cpu(cfg, lambda x: x, 40_000, 0.08, None) is None  # half is below MIN_CPU
