"""The built-in ``job`` use case: the user's own PySpark script as the SUT (``bench run --job PATH.py``).

Why a use case: everything else of the method stays as for UC1 (topics ``input`` and
``output``, the NumSensors load type, the Instances resource type, the main SLO on the lag's trend,
the active-power generator and its ActivePowerRecord JSON, or the records of a user's
template), so the engine, the search, the results and ``--resume`` need nothing new.
Only the SUT differs: the Spark driver runs the script (:mod:`bench.runtime.spark.user_job`)
instead of building a topology. The script's path travels as the parameter ``job``,
so it is recorded with the run's parameters and a resumed run must name the same one.

The script reads ``BENCH_BOOTSTRAP_SERVERS``, ``BENCH_INPUT_TOPIC`` and
``BENCH_OUTPUT_TOPIC`` from its environment, or takes them on its own command line
(``--job job.py -- --brokers {bootstrap} --in {input}``: the parameter ``jobArgs``,
placeholders filled in per experiment by :func:`bench.runtime.spark.user_job.job_argv`);
docs/own-job.md.
"""

from __future__ import annotations

import os
import shlex
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.api import ParamSpec, Registrar, StreamingPlan, TopologyContext, UseCase, standard_benchmark
from bench.builtin.calibrated import TREND_SLO
from bench.config.base import ConfigError
from bench.hookspecs import hookimpl

NAME = "job"
#: the parameter holding the script's path; the Spark driver runs a script when it is set
JOB_PARAM = "job"
#: the parameter holding the script's command line (shell words, with placeholders)
ARGS_PARAM = "jobArgs"
#: what a placeholder of the job's command line stands for in each experiment
PLACEHOLDERS = {
    "bootstrap": "the Kafka bootstrap servers",
    "input": "the input topic",
    "output": "the output topic",
    "checkpoint": "the experiment's checkpoint folder",
    "group": "the SUT's consumer group (the one whose lag is measured)",
}
#: partitions of the input and output topics, as UC1's
PARTITIONS = 4
#: seconds from the script's start until a streaming query must be active
DEFAULT_START_TIMEOUT_S = 90.0
#: seconds the input topic may hold records while the job has read none of them
DEFAULT_READ_TIMEOUT_S = 120.0


def check_script(path: str) -> None:
    """Raise ValueError unless ``path`` is a readable Python file that compiles.

    Found before the broker and a JVM start, instead of as a driver that fails to start.
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError("no such file" if not file.exists() else "is not a file")
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot be read: {exc}") from None
    try:
        compile(source, str(file), "exec")
    except SyntaxError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from None


def check_job_args(line: str) -> list[str]:
    """The words of a job command line; ValueError for an unknown placeholder or bad quoting.

    Placeholders are ``{name}`` as in :meth:`str.format`, each word filled separately;
    ``{{`` and ``}}`` stand for literal braces (a JSON argument).
    """
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ValueError(f"cannot be split into words: {exc}") from None
    for word in words:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(word) if f is not None]
        except ValueError as exc:
            raise ValueError(f"{word!r}: {exc} (write {{{{ and }}}} for literal braces)") from None
        for field in fields:
            if field not in PLACEHOLDERS:
                known = ", ".join("{" + k + "}" for k in PLACEHOLDERS)
                raise ValueError(f"{word!r}: unknown placeholder {{{field}}} (known: {known})")
    return words


class ArgsParam(ParamSpec):
    """``jobArgs``: the script's command line, checked like ``--job ... -- ARGS``."""

    def check(self, value: Any) -> None:
        super().check(value)
        check_job_args(str(value))


class ScriptParam(ParamSpec):
    """``job``: the script, checked like ``--job`` (``--plugin job --set job=PATH`` works too)."""

    def check(self, value: Any) -> None:
        super().check(value)
        check_script(str(value))


PARAMS: tuple[ParamSpec, ...] = (
    ScriptParam(JOB_PARAM, str, doc="path of the PySpark Structured Streaming script (bench run --job PATH.py)"),
    ArgsParam(ARGS_PARAM, str, doc="the script's command line after `--job PATH.py --`, with placeholders "
              + ", ".join("{" + k + "}" for k in PLACEHOLDERS)),
    ParamSpec("startTimeoutS", float, min=1, doc="seconds until the script must have started a streaming query"),
    ParamSpec("readTimeoutS", float, min=1,
              doc="seconds the input topic may hold records before the job must have read some"),
)


def job_params(path: str, record_template: str | None = None, args: Sequence[str] = ()) -> dict[str, Any]:
    """The parameters ``--job PATH`` (``--record-template FILE``, ``-- ARGS``) stand for.

    The path is made absolute: the driver runs in its own process and the result files
    should name the script unambiguously. The arguments are kept as one shell line, so
    that the run's parameters (and ``--resume``'s comparison) hold a plain string.
    """
    try:
        check_script(path)
    except ValueError as exc:
        raise ConfigError(f"--job {path}: {exc}") from None
    params: dict[str, Any] = {JOB_PARAM: os.path.abspath(path)}
    if args:
        line = shlex.join(args)
        try:
            check_job_args(line)
        except ValueError as exc:
            raise ConfigError(f"--job {path} -- ARGS: {exc}") from None
        params[ARGS_PARAM] = line
    if record_template is not None:
        try:
            text = Path(record_template).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--record-template {record_template}: cannot be read: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
        from bench.runtime.load.generator import check_record_template

        try:
            check_record_template(text)
        except ValueError as exc:
            raise ConfigError(f"--record-template {record_template}: not JSON once {{key}} and {{timestamp}} "
                              f"are filled in: {exc}") from None
        params["recordTemplate"] = text
    return params


#: An instance is a quarter of a core, as in every use case (a Kubernetes CPU limit of
#: 250m). Unlimited, one instance may take every core of the machine, and a sized run
#: (``bench.search.sizing``) has no limit to lower where one instance keeps up with all
#: the load path pushes; ``--set sut.cpuPerInstance=0`` lifts the limit.
CPU_PER_INSTANCE = 0.25


def default_benchmark() -> dict[str, Any]:
    return standard_benchmark(NAME, {"input": PARTITIONS, "output": PARTITIONS}, slos=[TREND_SLO],
                              cpu_per_instance=CPU_PER_INSTANCE)


def _script_is_the_topology(ctx: TopologyContext) -> StreamingPlan:
    """Marks the SUT as a Spark job (the platform starts the Spark driver, which runs the
    script); there is no plan to build, so a caller that asks for one is told why."""
    raise ConfigError("the job use case has no topology: the Spark driver runs its script (parameter 'job')")


JOB = UseCase(
    name=NAME,
    description="your own PySpark Structured Streaming script, unchanged (bench run --job PATH.py)",
    default_benchmark=default_benchmark,
    generator="active-power",
    topology=_script_is_the_topology,
    dimensions=("NumSensors",),
    default_params={"startTimeoutS": DEFAULT_START_TIMEOUT_S, "readTimeoutS": DEFAULT_READ_TIMEOUT_S},
    params=PARAMS,
)


@hookimpl
def bench_register_use_cases(register: Registrar) -> None:
    register.use_case(JOB)
