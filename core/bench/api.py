"""Public contracts between the core and plugins.

Everything a plugin registers is one of the small dataclasses below. They are plain
data plus callables so that a third-party plugin needs nothing from the core but this
module, :mod:`bench.slo_math` (the numbers behind SLO verdicts) and
:mod:`bench.services` (the runtime services a plugin may call), and so that the core
never special-cases a built-in plugin. A test keeps every plugin under plugins/ to
these three modules (tests/unit/test_plugin_boundary.py). This module imports no other
core module but :mod:`bench.numbers` and :mod:`bench.generator_contract` (the generator
contract it re-exports), so that every core module may import it.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from bench.generator_contract import GENERATOR_SILENCE_S as GENERATOR_SILENCE_S
from bench.generator_contract import PROGRESS_EVERY_S as PROGRESS_EVERY_S
from bench.generator_contract import GeneratorControl as GeneratorControl
from bench.generator_contract import generator_control as generator_control
from bench.generator_contract import set_generator_control as set_generator_control
from bench.numbers import whole_number as whole_number  # use-case parameters read it

if TYPE_CHECKING:  # PySpark is heavy; only the SUT process imports it for real.
    from pyspark.sql import Column, DataFrame, SparkSession


# --------------------------------------------------------------------------- hooks

PROJECT = "bench"
#: marks a plugin's hook implementations: ``@hookimpl def bench_register_slos(register): ...``
hookimpl = pluggy.HookimplMarker(PROJECT)

# --------------------------------------------------------------------------- records

#: The field names of an ActivePowerRecord, as in the reference benchmarks.
RECORD_FIELDS = ("identifier", "timestamp", "valueInW")

# --------------------------------------------------------------------------- deployment

#: A deployment is a list of Kubernetes-shaped objects (dicts with kind/metadata/spec).
#: The embedded platform understands the kinds ``BenchSut`` and ``BenchGenerator``;
#: the Kubernetes platform applies any manifest. Patchers work on both the same way.
Manifest = dict[str, Any]


def manifest_name(obj: Manifest) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


# --------------------------------------------------------------------------- parameters

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter a use case (or generator) reads from its params.

    Declared so that ``--set windowSizeMs=abc`` or a typo in YAML ``params`` is refused
    before any process starts, instead of surfacing inside the Spark driver after the
    broker and the JVM are up. ``type`` is ``int``, ``float``, ``bool``, ``str`` or
    ``object`` (anything; only ``choices`` are checked). Numbers may arrive as strings
    (ParamPatchers write ``"60000"``), so a string that reads as the type passes; a bool
    never passes as a number (YAML ``true`` is not 1). ``min``/``max`` are inclusive.
    """

    name: str
    type: type = str
    min: float | None = None
    max: float | None = None
    choices: Sequence[Any] = ()
    doc: str = ""

    def check(self, value: Any) -> None:
        """Raise ``ValueError`` saying what is wrong with ``value`` (the caller names the key)."""
        if self.choices:
            if value in self.choices or (not isinstance(value, bool) and str(value) in map(str, self.choices)):
                return
            raise ValueError(f"must be one of {', '.join(str(c) for c in self.choices)}")
        if self.type is object:
            return
        if self.type is bool:
            if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE):
                return
            raise ValueError("must be true or false")
        if self.type is str:
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return
            raise ValueError("must be a string")
        number = self._number(value)
        if self.min is not None and number < self.min:
            raise ValueError(f"must be at least {self.min:g}")
        if self.max is not None and number > self.max:
            raise ValueError(f"must be at most {self.max:g}")

    def _number(self, value: Any) -> float:
        kind = "a whole number" if self.type is int else "a number"
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"must be {kind}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"must be {kind}") from None
        if not math.isfinite(number) or (self.type is int and not number.is_integer()):
            raise ValueError(f"must be {kind}")
        return number


# --------------------------------------------------------------------------- use cases


@dataclass
class TopologyContext:
    """What a Spark topology gets from the runtime that runs it.

    ``read_measurements`` returns a streaming DataFrame of parsed ActivePowerRecords
    (identifier string, timestamp TimestampType, valueInW double) with malformed
    records already counted and dropped. ``read_topic`` returns the raw stream of a
    topic (columns key string, value string, topic, partition, offset, timestamp).
    """

    spark: SparkSession
    params: Mapping[str, Any]
    topics: Mapping[str, str]  # logical topic name (input, output, ...) -> real name
    instances: int
    read_topic: Callable[[str], DataFrame]
    read_measurements: Callable[[str], DataFrame]


@dataclass
class StreamingPlan:
    """What a topology returns: the result stream and how to emit it.

    ``df`` must have string columns ``key`` and ``value``; an optional string column
    ``topic`` (logical name) routes rows to several topics (UC4's feedback).
    ``sink`` is ``kafka`` (to ``topics['output']``) or a callable used as
    ``foreachBatch`` (UC1's database sink).
    """

    df: DataFrame
    output_mode: str = "append"
    sink: str | Callable[[DataFrame, int], None] = "kafka"
    trigger_seconds: float | None = None


@dataclass
class UseCase:
    """A benchmarkable use case.

    Exactly one of ``topology`` (a PySpark query, run by the platform's Spark) or
    ``sut_process`` (module path run as ``python -m`` per instance, e.g. the
    calibrated consumer group) says what the SUT is; a use case with neither or both
    marks its plugin broken when it registers. ``description`` and the ``doc`` of each
    :class:`ParamSpec` in ``params`` are what ``bench run --plugin NAME --help`` shows.
    """

    name: str
    description: str
    default_benchmark: Callable[[], dict[str, Any]]
    generator: str = "active-power"
    topology: Callable[[TopologyContext], StreamingPlan] | None = None
    sut_process: str | None = None
    #: the workload dimensions its benchmarks vary (load type names), shown by ``bench
    #: run --plugin NAME --help``; documentation only, nothing is checked against them
    dimensions: Sequence[str] = ()
    #: default SUT parameters (window sizes, ...); `--set key=value` overrides them.
    default_params: Mapping[str, Any] = field(default_factory=dict)
    #: the parameters the SUT reads, checked before a run (:class:`ParamSpec`); with
    #: the generator's, they are every key ``--set`` and YAML ``params`` accept. None:
    #: not declared (older plugins), so no key is refused as unknown.
    params: Sequence[ParamSpec] | None = None
    #: check_slis(params, {SLO name: SLI}) raises ValueError (one line) for an SLI this use
    #: case cannot produce with these parameters, before anything starts. None: any.
    check_slis: Callable[[Mapping[str, Any], Mapping[str, str]], None] | None = None
    #: window_seconds(params): the wall-clock period (s) of the SUT's output cycle with
    #: these parameters (a windowed use case's lag rises and falls once per period), so
    #: early decisions can judge whole periods (``bench.slo.early_rules``). None: no cycle.
    window_seconds: Callable[[Mapping[str, Any]], float | None] | None = None
    #: Spark settings this use case's query runs with on every platform (``--conf`` and
    #: the resource shape override them), recorded in the environment file on the local
    #: platforms (embedded, external). For what the query needs to be measured fairly,
    #: e.g. UC4's JIT setting; not for tuning a run.
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    #: warmup_params(params, scratch): the parameters under which the topology's own
    #: sink (a ``foreachBatch``, not Kafka) stores into ``scratch``, thrown away after the
    #: platform's warm-up, which then runs valid records through the whole plan. None: a
    #: plan with its own sink is warmed on records every parser rejects, and a run at a
    #: low CPU limit compiles the valid path while measured (UC1 at an eighth of a core:
    #: first batches at 2,000 records/s, later ones at 3,900).
    warmup_params: Callable[[Mapping[str, Any], str], Mapping[str, Any]] | None = None

    def output_period(self, params: Mapping[str, Any]) -> float | None:
        """The period of :attr:`window_seconds`, or None when undeclared, unreadable or not positive."""
        if self.window_seconds is None:
            return None
        try:
            period = self.window_seconds(params)
        except (ValueError, TypeError):
            return None
        return float(period) if period is not None and period > 0 else None


# --------------------------------------------------------------------------- generators


@dataclass
class GeneratorSpec:
    """What one generator instance is asked to do."""

    bootstrap_servers: str
    topic: str
    keys: Sequence[str]  # the contiguous key range of this instance
    period_ms: float = 1000.0
    duration_s: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    topics: Mapping[str, str] = field(default_factory=dict)


@dataclass
class GeneratorReport:
    target_rate: float
    achieved_rate: float
    records: int
    seconds: float

    @property
    def behind(self) -> float:
        """Fraction by which the achieved rate falls short of the target (0 = on target)."""
        if self.target_rate <= 0:
            return 0.0
        return max(0.0, 1.0 - self.achieved_rate / self.target_rate)


@dataclass
class GeneratorType:
    """A workload generator; ``run`` is a coroutine run inside a generator process.

    ``run`` must honour :class:`GeneratorControl` (stop and progress); build it with
    ``bench.services.record_generator`` (a record function is all a plugin writes) or
    await ``bench.services.open_workload`` inside it, which do so.
    """

    name: str
    description: str
    run: Callable[[GeneratorSpec], Awaitable[GeneratorReport]]
    #: optional step before load starts (UC4 publishes its sensor registry here);
    #: gets the spec of the whole key space.
    prepare: Callable[[GeneratorSpec], Awaitable[None]] | None = None
    #: the key names for a load value (e.g. s_0 ... s_{n-1}, or UC4's leaves).
    keys: Callable[[int, Mapping[str, Any]], list[str]] | None = None
    #: the parameters the generator reads (every ``--set`` key reaches generator and
    #: SUT alike); None: not declared, see :attr:`UseCase.params`.
    params: Sequence[ParamSpec] | None = None


def sensor_keys(count: int, params: Mapping[str, Any] | None = None) -> list[str]:
    return [f"s_{i}" for i in range(count)]


def split_keys(keys: Sequence[str], instances: int) -> list[list[str]]:
    """Split keys into ``instances`` contiguous ranges, as the reference does."""
    instances = max(1, min(instances, len(keys)) if keys else 1)
    size = math.ceil(len(keys) / instances) if keys else 0
    return [list(keys[i * size : (i + 1) * size]) for i in range(instances)]


# --------------------------------------------------------------------------- SLOs


@dataclass
class Series:
    """One SLI series of one repetition: timestamps in epoch seconds."""

    timestamps: list[float]
    values: list[float]
    labels: str = ""


@dataclass
class SloContext:
    load: float
    resources: float
    warmup: float
    properties: Mapping[str, Any]
    #: records/s the generator was asked to produce (load in records/s)
    load_rate: float | None = None
    #: a repetition's planned length in seconds (early decisions bound what is still to come)
    duration: float | None = None
    #: the use case's output period in seconds (``UseCase.output_period``), None: no cycle
    period: float | None = None


@dataclass
class SloVerdict:
    passed: bool
    #: the numbers behind the verdict (slopes, aggregate, threshold, ...)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EarlyDecision:
    """What the samples of one repetition so far say about one SLO.

    ``passed`` is None while more samples could still change the verdict. The numbers
    are those of a trend decision (slope, its confidence bounds, the threshold), for
    the progress line and the tests; other decisions may leave them None.
    """

    passed: bool | None
    reason: str
    slope: float | None = None
    low: float | None = None
    high: float | None = None
    threshold: float | None = None
    #: the SLO's name in the benchmark; the engine fills it in
    slo: str = ""


@dataclass
class SloType:
    """An SLO checker type.

    ``sli`` names the SLI series it needs (``lag``, ``dropped-records``, ...); ``None``
    means it is read from the SLO's ``sli`` property (the generic SLO).
    ``validate`` raises ``ValueError`` naming the bad property, before any run.

    ``decide_early`` lets a repetition end before its duration (``bench.slo.early_stop``):
    given the samples so far (one repetition) and the same context ``check`` gets, it
    says pass, fail or undecided. It must use the thresholds ``check`` uses, so that an
    early verdict is the final one; ``bench.services.trend_decision`` does the
    statistics for SLOs on a trend. None: this SLO is only decided at the end.

    ``cli_threshold`` says whether the threshold options of ``bench run`` (``--threshold``,
    ``--threshold-rel-to-rate``, ``--threshold-rel-to-load``) replace this SLO's threshold,
    given its properties.

    ``sli_for`` names the SLI from the SLO's properties when a type needs one of several
    series (the latency SLO: ``percentile: 99`` -> ``latency-p99``); it wins over ``sli``.
    Ask :meth:`sli_name` rather than reading the fields.
    """

    name: str
    description: str
    check: Callable[[list[Series], SloContext], SloVerdict]
    sli: str | None = "lag"
    validate: Callable[[Mapping[str, Any]], None] | None = None
    decide_early: Callable[[Series, SloContext], EarlyDecision] | None = None
    cli_threshold: Callable[[Mapping[str, Any]], bool] | None = None
    sli_for: Callable[[Mapping[str, Any]], str] | None = None
    #: whether ``bench analyze`` and ``bench report`` may re-evaluate this SLO from its
    #: stored series, given its properties: its verdict is the median over repetitions
    #: of the series' OLS slope against a threshold in records/s (any threshold form),
    #: so the offline analysis, its slope intervals and the
    #: plots' trend lines apply to it. None: never re-evaluated offline.
    analysed_as_trend: Callable[[Mapping[str, Any]], bool] | None = None
    #: the property keys it reads (``bench.config.slo_properties``: others are refused); None: unchecked
    properties: tuple[str, ...] | None = None
    #: the axis title of this SLO's series in plots and reports; empty: the SLI's name
    series_label: str = ""
    #: whether ``decide_early`` may also read the SLI sampled between the recorded samples
    #: (``execution.earlySampleInterval``), as the SLOs on a trend do: a rule that decides
    #: with confidence on more samples, sooner. The decision stands only where ``check``
    #: over the recorded samples so far says the same (``bench.slo.early_stop.decide``).
    dense_early: bool = False

    def sli_name(self, properties: Mapping[str, Any]) -> str:
        """The SLI series this SLO reads, given its properties."""
        if self.sli_for is not None:
            return self.sli_for(properties)
        return self.sli or str(properties.get("sli", ""))

    def can_decide_early(self) -> bool:
        """Whether a repetition may end before its duration on this SLO's account."""
        return self.decide_early is not None

    def takes_cli_threshold(self, properties: Mapping[str, Any]) -> bool:
        """Whether the command line's threshold options replace this SLO's threshold."""
        return self.cli_threshold is not None and self.cli_threshold(properties)

    def is_trend(self, properties: Mapping[str, Any]) -> bool:
        """Whether the offline analysis re-evaluates this SLO (:attr:`analysed_as_trend`)."""
        return self.analysed_as_trend is not None and self.analysed_as_trend(properties)

    def uses_dense(self, properties: Mapping[str, Any]) -> bool:
        """Whether samples denser than the recorded ones may decide this SLO early: the
        SLOs on a trend, and those that say so (:attr:`dense_early`)."""
        return self.decide_early is not None and (self.dense_early or self.is_trend(properties))

    def axis_label(self, properties: Mapping[str, Any]) -> str:
        """How plots and reports title this SLO's series."""
        return self.series_label or self.sli_name(properties)


def trend_slos(slos: Sequence[Mapping[str, Any]], types: Mapping[str, SloType]) -> list[str]:
    """The names of a benchmark's SLOs (its ``slos`` entries) that the offline analysis
    re-evaluates, in order, each by its own type's :meth:`SloType.is_trend`; an SLO of
    an unknown type is skipped, since nothing says how its verdict was made."""
    names = []
    for slo in slos:
        slo_type = types.get(str(slo.get("sloType", "")))
        if slo_type is not None and slo_type.is_trend(slo.get("properties") or {}):
            names.append(str(slo.get("name", "")))
    return names


# --------------------------------------------------------------------------- patchers


class PatcherFn(Protocol):
    def __call__(
        self, objects: list[Manifest], value: Any, properties: Mapping[str, Any]
    ) -> list[Manifest]: ...


@dataclass
class PatcherType:
    """Turns a load or resource value into changes of the deployment objects.

    ``patch`` gets only the objects selected by the patcher's ``resource`` field and
    returns patched copies; it must not mutate its input.
    """

    name: str
    description: str
    patch: PatcherFn
    #: the properties ``patch`` reads: another (a misspelt ``factr``) is refused before the
    #: run; None: undeclared, passed through unchecked
    properties: tuple[str, ...] | None = None


# --------------------------------------------------------------------------- search


#: Runs one SLO experiment (all repetitions) for (load, resources) and says whether
#: every SLO held. Results are cached by the engine, so asking twice is free.
#: run(load, resources): True passed, False failed, None no verdict (the experiment
#: ended in error after its retries; a strategy must not read it as a failure)
ExperimentRunner = Callable[[float, float], Awaitable[bool | None]]


@dataclass
class SearchProblem:
    loads: Sequence[float]  # ascending
    resources: Sequence[float]  # ascending
    run: ExperimentRunner
    metric: str = "demand"  # demand | capacity
    lower_bound: bool = True


#: a search's table: demand {load: least passing resource, or None}; capacity
#: {resource: greatest passing load, or None}
SearchTable = dict[float, float | None]


@dataclass
class SearchStrategy:
    """A search strategy, and what it assumes: the core asks these, never the name, so a
    plugin's strategy is chosen with ``--search`` like a built-in one.

    ``from_prediction(problem, guesses)`` is its walk when ``bench run --predict`` starts
    each key (load, or resource amount for capacity) at a predicted index (``guesses``);
    None: it cannot start from a prediction and ``--predict`` is refused with it.
    """

    name: str
    description: str
    search: Callable[[SearchProblem], Awaitable[SearchTable]]
    #: it rests on demand never falling as the load rises (refused with --no-lower-bound)
    needs_lower_bound: bool = False
    from_prediction: Callable[[SearchProblem, Mapping[float, int]], Awaitable[SearchTable]] | None = None
    #: how it walks from a prediction, for the run's progress line
    prediction_walk: str = "each walk starting at the prediction"
    #: it runs every (load, resources) pair and assumes nothing, so no prediction shortens it
    measures_every_pair: bool = False
    #: the reference's ``guessStrategy`` names it walks by (an Execution file's key); empty: it reads none
    guesses: tuple[str, ...] = ()


# --------------------------------------------------------------------------- platforms


@dataclass
class TopicSpec:
    logical: str  # input, output, configuration, aggregation-feedback
    name: str  # the real (fresh per experiment) name
    partitions: int = 4


@dataclass
class ExperimentSpec:
    """Everything a platform needs for one repetition of one experiment."""

    experiment_id: str  # unique per repetition, used for topic and group names
    use_case: UseCase
    objects: list[Manifest]  # patched deployment (BenchSut / BenchGenerator or k8s)
    topics: list[TopicSpec]
    params: Mapping[str, Any]  # SUT + generator parameters after --set
    load: float
    resources: float
    group_id: str = "bench-sut"

    def topic_map(self) -> dict[str, str]:
        return {t.logical: t.name for t in self.topics}

    def spark_conf(self, options: Mapping[str, Any]) -> dict[str, str]:
        """The use case's own Spark settings under ``--conf`` (``options['spark_conf']``),
        one rule for every platform; each adds its resource shape on top."""
        given = {**dict(self.use_case.spark_conf), **dict(options.get("spark_conf") or {})}
        return {str(k): str(v) for k, v in given.items()}


@dataclass
class Sample:
    """SLI values read at one instant (epoch seconds)."""

    timestamp: float
    values: dict[str, float] = field(default_factory=dict)


class Platform(Protocol):
    """The interface every platform implements (embedded, external, kubernetes).

    The engine drives one experiment through these calls in this order:
    ``reset_topics`` -> ``start_sut`` -> (delay) -> ``start_generators`` -> ``sample``
    every sampling interval for ``duration`` -> ``stop_generators`` -> ``stop_sut`` ->
    ``delete_topics``. ``open``/``close`` bracket a whole run. Everything is async;
    blocking work runs in threads or subprocesses.
    """

    name: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def reset_topics(self, spec: ExperimentSpec) -> None: ...

    async def start_sut(self, spec: ExperimentSpec) -> None: ...

    async def start_generators(self, spec: ExperimentSpec) -> None: ...

    async def sample(self, spec: ExperimentSpec) -> Sample:
        """Read every SLI this platform knows now: at least ``lag`` (records, clamped
        at 0); where available ``dropped-records`` (cumulative), ``input-rate``,
        ``generated-records``, ``malformed-records``, ``batch-duration``."""
        ...

    async def stop_generators(self, spec: ExperimentSpec) -> Sequence[GeneratorReport]: ...

    async def stop_sut(self, spec: ExperimentSpec) -> None: ...

    async def delete_topics(self, spec: ExperimentSpec) -> None: ...


@dataclass(frozen=True)
class PlatformOption:
    """One setting a platform reads from its options mapping.

    Declared so that a setting the chosen platform would not read is refused before
    anything starts (``--broker`` on Kubernetes) instead of being ignored, so that a
    value is checked where the user typed it, and so that ``bench run --help`` can say
    which options each platform reads. ``name`` is the key in the options mapping;
    ``flag`` the ``bench run`` option that sets it ("" for none: the command line cannot
    set it, so it keeps its default unless a program that prepares the run passes it);
    ``type`` is ``str``, ``int``, ``float``, ``bool`` or ``dict`` (``FLAG KEY=VALUE``,
    repeatable); ``validate(value)`` checks a given value further (ValueError, one line).
    ``bench run``'s options are generated from these declarations, a plugin's too.
    """

    name: str
    help: str
    flag: str = ""
    type: type = str
    default: Any = None
    choices: Sequence[Any] = ()
    min: float | None = None
    max: float | None = None
    validate: Callable[[Any], None] | None = None

    def check(self, value: Any, platform: str) -> Any:
        """``value`` as ``type`` (None stays None); ValueError naming the option and the
        platform when it does not fit."""
        if value is None:
            return None
        where = f"{self.flag or self.name} {value}: the {platform} platform"
        if self.type is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{where} takes true or false")
            return self._valid(value)
        if self.type is dict:
            items = [value] if isinstance(value, str) else [] if isinstance(value, Mapping) else list(value)
            bad = next((v for v in items if not str(v).partition("=")[0].strip() or "=" not in str(v)), None)
            if bad is not None:
                raise ValueError(f"{self.flag or self.name} {bad!r}: the {platform} platform takes KEY=VALUE pairs")
            pairs = value.items() if isinstance(value, Mapping) else [str(v).partition("=")[::2] for v in items]
            return self._valid({str(k).strip(): str(v).strip() for k, v in pairs})
        try:
            converted = self.type(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where} takes a {self.type.__name__}") from None
        if self.choices and converted not in self.choices:
            raise ValueError(f"{where} takes one of {', '.join(map(str, self.choices))}")
        if self.min is not None and converted < self.min:
            raise ValueError(f"{where} takes at least {self.min:g}")
        if self.max is not None and converted > self.max:
            raise ValueError(f"{where} takes at most {self.max:g}")
        return self._valid(converted)

    def _valid(self, value: Any) -> Any:
        if self.validate is not None:
            self.validate(value)
        return value


@dataclass(frozen=True)
class PlatformCapabilities:
    """What a platform honours, so that a setting it would not apply is refused in one
    line naming the platform rather than silently measuring something else."""

    #: SLIs its ``sample()`` can return (some only with an option, e.g. Prometheus)
    slis: frozenset[str] = frozenset({"lag"})
    #: patcher types whose changes it would not apply (fields or kinds it never reads);
    #: a list of what it ignores rather than what it applies, because plugins register
    #: patcher types (UC4's) that patch the platform's own objects and no platform can
    #: know them in advance
    ignored_patchers: frozenset[str] = frozenset()
    #: resource types (``typeName``) it can vary; None: every one its patchers express
    resource_types: frozenset[str] | None = None
    #: whether ``--kafka-config`` reaches every Kafka client it starts (SUT, generators)
    kafka_security: bool = False
    #: whether it can run a local script as the SUT (``bench run --job PATH.py``)
    local_job: bool = False


@dataclass
class PlatformType:
    """A platform: how to create it, the options it reads, what it honours, what this
    machine must offer for it and how ``--dry-run`` shows its deployment.

    ``validate(options, use_case)`` checks options against each other without looking
    at this machine (``bench validate`` and ``--dry-run`` run it); ``check_host(options,
    use_case)`` checks this machine (Java, a kubeconfig) before a real run. Both raise
    ValueError with one line that names the platform. ``render(spec, options)`` returns
    the objects as the platform would apply them for ``--dry-run``; None shows the
    patched deployment as it is.
    """

    name: str
    description: str
    #: factory(options, registry) -> Platform (see :class:`Platform`); the
    #: registry is the one the run was resolved with, so the platform never loads the
    #: plugins a second time.
    create: Callable[[Mapping[str, Any], Any], Any]
    options: Sequence[PlatformOption] = ()
    capabilities: PlatformCapabilities = field(default_factory=PlatformCapabilities)
    validate: Callable[[Mapping[str, Any], UseCase], None] | None = None
    check_host: Callable[[Mapping[str, Any], UseCase], None] | None = None
    render: Callable[[ExperimentSpec, Mapping[str, Any]], list[Manifest]] | None = None
    #: ``read_config_maps(sets, options)`` reads the reference's configMap resource sets
    #: (each ``{"name", "files"}``) from where the platform deploys: per set its
    #: (key, YAML text) pairs, ValueError with one line naming the ConfigMap, the key and
    #: the place when one is missing. None: a benchmark with such sets is refused.
    read_config_maps: Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]],
                               list[list[tuple[str, str]]]] | None = None
    #: where ``read_config_maps`` reads (``namespace 'bench'``), for ``--dry-run``, which
    #: reaches no cluster and says what it would read instead
    config_map_place: Callable[[Mapping[str, Any]], str] | None = None

    def option(self, name: str) -> PlatformOption | None:
        return next((o for o in self.options if o.name == name), None)


class Registrar:
    """The argument of every registration hook (tox 4's registrar, not a bare callable).

    ``register.use_case(x)``, ``register.slo(x)``, ... say what is registered and let a
    type checker check it; ``register(x)`` does the same without the type in its name.
    Each hook's registrar takes only that hook's kind: registering anything else is an
    error that marks the plugin broken. A test can build one around a list:
    ``Registrar(found.append)``.
    """

    def __init__(self, add: Callable[[Any], None]) -> None:
        self._add = add

    def __call__(self, item: Any) -> None:
        self._add(item)

    def use_case(self, item: UseCase) -> None:
        self._add(item)

    def generator(self, item: GeneratorType) -> None:
        self._add(item)

    def slo(self, item: SloType) -> None:
        self._add(item)

    def patcher(self, item: PatcherType) -> None:
        self._add(item)

    def search_strategy(self, item: SearchStrategy) -> None:
        self._add(item)

    def platform(self, item: PlatformType) -> None:
        self._add(item)


# --------------------------------------------------------------------------- benchmark helper


def resource_types(sut: str = "sut") -> list[dict[str, Any]]:
    """The resource types every use case offers, all patching the SUT object ``sut``.

    ``Instances`` scales out (more executors or workers); ``CoresPerInstance`` and
    ``MemoryPerInstance`` (MiB) scale one instance up, for the vertical scaling the
    2023 study measured too. ``ThreadsAndPodResources`` is the reference's vertical type
    under its name: R processing threads (Spark task slots), R cores and R x 4 GiB per
    instance; the CPU limit follows the slots where ``cpuPerInstance`` sets one per slot.
    What each means per platform: :mod:`bench.patchers.executor`.
    """
    return [
        {"typeName": "Instances", "patchers": [{"type": "ReplicaPatcher", "resource": sut}]},
        {"typeName": "CoresPerInstance", "patchers": [{"type": "ExecutorCoresPatcher", "resource": sut}]},
        {"typeName": "MemoryPerInstance", "patchers": [{"type": "ExecutorMemoryPatcher", "resource": sut}]},
        {"typeName": "ThreadsAndPodResources", "patchers": [
            {"type": "ExecutorCoresPatcher", "resource": sut},
            {"type": "ExecutorMemoryPatcher", "resource": sut, "properties": {"factor": 4096}},
        ]},
    ]


#: The SLO a use case's default Benchmark holds unless it names others: the method's
#: lag trend at 1 % of the generated records/s (``thresholdRelToRate``: a load type that
#: is not a rate, such as a window size, still gets a threshold in records/s). Data only:
#: it needs the SLO type of that name installed (the bench-slo-lag-trend plugin), and the
#: core never asks for it by name.
DEFAULT_SLO: Mapping[str, Any] = {"name": "lag-trend", "sloType": "lag-trend",
                                  "properties": {"thresholdRelToRate": 0.01}}
#: late records dropped by a window operator: at most 1 % of the generated ones
MAX_DROPPED_RATIO = 0.01


def default_slo() -> dict[str, Any]:
    """A fresh copy of :data:`DEFAULT_SLO` (a caller may edit it without touching another's)."""
    return {**DEFAULT_SLO, "properties": dict(DEFAULT_SLO["properties"])}


def windowed_slos(rows_per_record: float = 1.0) -> list[dict[str, Any]]:
    """The default SLO and the ratio of late records dropped to generated ones, fresh for
    each windowed use case (UC2, UC3, a third party's) so their defaults cannot drift apart.
    The drops take the repetitions' median, as the reference's UC2 does.

    The dropped-records SLO divides the rows Spark drops by watermark by the *records the
    generator sent*. A query whose windowed operator sees several rows per record (it
    splits a line into words, explodes an array) drops that many rows per late record:
    pass ``rows_per_record`` (rows reaching the windowed operator per generated record,
    e.g. the words per line) so that the limit stays 1 % of the records
    (``maxRatio = 0.01 x rows_per_record``)."""
    if not rows_per_record > 0:
        raise ValueError(f"windowed_slos: rows_per_record {rows_per_record!r} must be positive")
    return [default_slo(), {"name": "dropped-records", "sloType": "dropped-records",
                            "properties": {"maxRatio": MAX_DROPPED_RATIO * rows_per_record,
                                           "repetitionAggregation": "median"}}]


def param_load_type(type_name: str, key: str, direction: str = "increasing") -> dict[str, Any]:
    """A load type whose value becomes the SUT parameter ``key`` (a window size, ...);
    ``direction`` ``decreasing`` when a smaller value is more load (``bench.config.model.TypeDef``)."""
    return {
        "typeName": type_name,
        "direction": direction,
        "patchers": [{"type": "ParamPatcher", "resource": "sut", "properties": {"key": key}}],
    }


def message_period_load_type() -> dict[str, Any]:
    """The ``MessagePeriod`` load type: the generator's period per key, in ms."""
    return {
        "typeName": "MessagePeriod",
        "direction": "decreasing",  # a shorter period is more records/s
        "patchers": [
            {"type": "GenericResourcePatcher", "resource": "generator", "properties": {"path": "spec/periodMs"}}
        ],
    }


def statistics_columns(value: str = "valueInW") -> list[Column]:
    """Spark aggregate expressions of the window statistics every aggregating use case
    reports under the same names as the reference (count, sum, min, max, mean,
    populationVariance). Runs in the Spark driver, which has PySpark."""
    from pyspark.sql import functions as F

    v = F.col(value)
    return [
        F.count(v).alias("count"),
        F.sum(v).alias("sum"),
        F.min(v).alias("min"),
        F.max(v).alias("max"),
        F.avg(v).alias("mean"),
        F.var_pop(v).alias("populationVariance"),
    ]


def standard_benchmark(
    name: str,
    topics: Mapping[str, int],
    *,
    sut_params: Mapping[str, Any] | None = None,
    generator: Mapping[str, Any] | None = None,
    load_types: Sequence[Mapping[str, Any]] = (),
    slos: Sequence[Mapping[str, Any]] | None = None,
    default_execution: Mapping[str, Any] | None = None,
    cpu_per_instance: float = 0,
) -> dict[str, Any]:
    """The default Benchmark document most use cases share.

    ``cpu_per_instance``: the SUT object's ``cpuPerInstance``, a CPU limit in cores per
    instance (per task slot), as a Kubernetes CPU limit would set; 0 is no limit. On one
    machine it is what makes instances scale (:mod:`bench.runtime.spark.cpu_limit`).

    One SUT object ``sut`` (instances = the ``Instances`` resource type), one generator
    object ``generator`` (sensors = the ``NumSensors`` load type), :data:`DEFAULT_SLO`,
    plus whatever load types, SLOs and parameters a use case adds. Use-case plugins
    call this instead of repeating the same dozen lines. The default SLO needs its
    plugin (bench-slo-lag-trend); a use case that must not depend on it passes ``slos``.
    """
    gen_spec: dict[str, Any] = {
        "replicas": 1,
        "sensors": 100,
        "periodMs": 1000,
        "maxPerInstance": 150000,
        "params": {},
    }
    gen_spec.update(generator or {})
    sut_spec: dict[str, Any] = {"replicas": 1, "cpuPerInstance": cpu_per_instance, "params": dict(sut_params or {})}
    doc: dict[str, Any] = {
        "name": name,
        "useCase": name,
        "sut": {"resources": [{"kind": "BenchSut", "metadata": {"name": "sut"}, "spec": sut_spec}]},
        "loadGenerator": {
            "resources": [{"kind": "BenchGenerator", "metadata": {"name": "generator"}, "spec": gen_spec}]
        },
        "loadTypes": [
            {"typeName": "NumSensors", "patchers": [{"type": "GeneratorLoadPatcher", "resource": "generator"}]},
            *[dict(t) for t in load_types],
        ],
        "resourceTypes": resource_types(),
        "slos": [dict(s) for s in slos] if slos is not None else [default_slo()],
        "kafkaConfig": {"topics": [{"name": t, "numPartitions": n} for t, n in topics.items()]},
    }
    if default_execution is not None:
        doc["defaultExecution"] = dict(default_execution)
    return doc
