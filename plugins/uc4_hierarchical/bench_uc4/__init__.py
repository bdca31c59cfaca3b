"""The UC4 plugin: hierarchical aggregation with a sensor registry and a feedback loop.

Registered through the ``bench.plugins`` entry point ``uc4``. The PySpark topology is
imported only when the SUT builds it, so loading the plugin stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.api import GeneratorType, PatcherType, Registrar, UseCase, hookimpl

from bench_uc4.benchmark import default_benchmark
from bench_uc4.generator import GENERATOR
from bench_uc4.params import DEFAULT_PARAMS, PARAMS
from bench_uc4.patchers import PATCHER

if TYPE_CHECKING:
    from bench.api import StreamingPlan, TopologyContext


def build_topology(ctx: TopologyContext) -> StreamingPlan:
    from bench_uc4.topology import build

    return build(ctx)


#: C1 only (no C2): the query's JVM kept C2 compiling at 0.18 of its half-core quota two
#: to three minutes into an experiment (0.43 cores in all; per-thread /proc figures),
#: new code for every micro-batch, while the executor's tasks got 0.08.
#: With C1 only, compiling took 0.007 and the tasks 0.18; batches of 1,024 records/s on
#: half a core 4.7 s instead of 6.3 s (docs/measurements-log.md, "UC4: the JIT's share").
JIT = "-XX:TieredStopAtLevel=1"
SPARK_CONF = {"spark.driver.extraJavaOptions": JIT, "spark.executor.extraJavaOptions": JIT}

USE_CASE = UseCase(
    name="uc4",
    description="Hierarchical aggregation: measurements joined with a runtime-changeable sensor "
    "registry, summed per group per tumbling window, groups of groups via a feedback topic",
    default_benchmark=default_benchmark,
    generator=GENERATOR.name,
    topology=build_topology,
    dimensions=("NumNestedGroups", "ChildrenPerGroup"),
    default_params=DEFAULT_PARAMS,
    params=PARAMS,
    spark_conf=SPARK_CONF,
)


@hookimpl
def bench_register_use_cases(register: Registrar) -> None:
    register(USE_CASE)


@hookimpl
def bench_register_generators(register: Registrar) -> None:
    generator: GeneratorType = GENERATOR
    register(generator)


@hookimpl
def bench_register_patchers(register: Registrar) -> None:
    patcher: PatcherType = PATCHER
    register(patcher)
