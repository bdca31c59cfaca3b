"""Launching a run: command-line options into a validated run, the run started, its
outcome presented.

Kept apart from ``cli`` so tests (and other front ends) can prepare and run a
benchmark without click, and apart from ``engine`` so the engine stays free of
user-interface concerns. Platforms are asked through their declared contract
(:mod:`bench.platforms.contract`), never named here.
"""

from __future__ import annotations

import copy
import itertools
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.api import ExperimentSpec, TopicSpec, UseCase
from bench.builtin.platforms import DEFAULT_PLATFORM
from bench.cli.auto_values import AUTO, auto_size, auto_values, placeholders
from bench.cli.checks import (
    check_bootstrap_servers,
    check_job_script,
    check_object_names,
    check_options,
    check_port_free,
    check_record_template,
    check_results_dir,
    check_resume,
    check_trigger,
    from_file,
    probe_kafka,
    unknown_use_case,
    use_case_named_by_files,
)
from bench.cli.consistency import check_resolved, check_strategy
from bench.cli.output import Progress
from bench.config import bounds
from bench.config.base import Benchmark, ConfigError, Execution
from bench.config.config_maps import pending_notes
from bench.config.files import load_yaml
from bench.config.model import (
    effective_slos,
    kind_of,
    parse_benchmark,
    parse_execution,
    threshold_overrides,
    validate_benchmark,
    validate_execution,
)
from bench.config.options import parse_sets, split_floats
from bench.config.params import (
    check_sets_kept,
    declared_params,
    validate_deployment_paths,
    validate_object_params,
    validate_params,
)
from bench.errors import UserError
from bench.execution.config import RunConfig
from bench.execution.deployment import build_objects
from bench.execution.run import Engine
from bench.platforms.contract import (
    platform_options,
    platform_type,
    read_config_map_sets,
    refuse_unhonoured,
    run_check,
)
from bench.plugins import Registry
from bench.results.outcome import RunOutcome
from bench.results.store import fmt_value
from bench.runtime.kafka.security import KafkaSecurity
from bench.runtime.kafka.security import install as install_kafka_security
from bench.runtime.spark.cpu_limit import refuse_unlimited_cpu
from bench.search.choice import check_no_lower_bound, check_predict, strategy_named
from bench.search.sizing_record import AutoSize

#: Defaults where no file or use case says otherwise; values: placeholders until sized (auto_values)
LAPTOP_EXECUTION: dict[str, Any] = {
    "load": {"loadValues": [2000, 8000]},
    "resources": {"resourceValues": [1, 2]},
    "execution": {"duration": 120, "warmup": 30, "repetitions": 1, "afterTeardownDelay": 2},
}

@dataclass
class PreparedRun:
    use_case: UseCase
    benchmark: Benchmark
    execution: Execution
    params: dict[str, Any]
    platform_options: dict[str, Any]
    #: Kafka client security for every client of the run (never written anywhere unredacted)
    kafka_security: KafkaSecurity = field(default_factory=KafkaSecurity)
    auto: AutoSize | None = None  # loads or resources sized by a probe first (bench.cli.auto_values)


def find_use_case(registry: Registry, name: str) -> UseCase:
    if name in registry.use_cases:
        return registry.use_cases[name]
    for info in registry.plugins:
        if info.name == name and info.error is None and len(info.provides.get("use_cases", [])) == 1:
            return registry.use_cases[info.provides["use_cases"][0]]
        if info.name == name and info.error:
            raise ConfigError(f"--plugin {name}: the plugin is installed but broken: {info.error}")
    if name in registry.excluded:
        raise ConfigError(f"--plugin {name}: installed, but BENCH_PLUGINS leaves it out; add it there")
    raise ConfigError(unknown_use_case(name, registry.use_cases, registry.excluded_note()))


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _takes_cli_threshold(registry: Registry, sloType: str, properties: dict[str, Any]) -> bool:
    slo_type = registry.slos.get(sloType)
    return slo_type is not None and slo_type.takes_cli_threshold(properties)


def _execution_doc(registry: Registry, bench: Benchmark, opts: dict[str, Any], auto: list[bool] | None = None
                   ) -> dict[str, Any]:
    """Defaults < defaultExecution < --execution < options; ``auto`` gets which values bench sizes."""
    doc: dict[str, Any] = _deep_merge(copy.deepcopy(LAPTOP_EXECUTION), copy.deepcopy(bench.defaultExecution or {}))
    defaults = placeholders(doc, LAPTOP_EXECUTION)
    raw: dict[str, Any] | None = None
    doc["benchmark"] = bench.name
    doc["load"] = {**doc.get("load", {}), "loadType": bench.loadTypes[0].typeName}
    doc["resources"] = {**doc.get("resources", {}), "resourceType": bench.resourceTypes[0].typeName}
    if opts.get("execution_file"):
        raw = load_yaml(opts["execution_file"], "--execution")
        if isinstance(raw, dict) and isinstance(raw.get("spec"), dict):
            name = (raw.get("metadata") or {}).get("name")
            raw = {**raw["spec"], **({"name": name} if name else {})}
        if not isinstance(raw, dict):
            raise ConfigError(f"{opts['execution_file']}: expected a mapping")
        for key in ("load", "resources", "execution"):
            if key in raw and not isinstance(raw[key], dict):
                raise ConfigError(f"execution.{key}: expected a mapping, got {raw[key]!r:.40}")
        doc = _deep_merge(doc, raw)
    (auto if auto is not None else [])[:] = auto_values(doc, defaults, raw, opts)
    ex = doc.setdefault("execution", {})
    if opts.get("loads") != AUTO and (loads := split_floats("loads", opts.get("loads"))) is not None:
        doc["load"]["loadValues"] = loads
    if opts.get("resources") != AUTO and (res := split_floats("resources", opts.get("resources"))) is not None:
        doc["resources"]["resourceValues"] = res
    if opts.get("load_type"):
        doc["load"]["loadType"] = opts["load_type"]
    if opts.get("resource_type"):
        doc["resources"]["resourceType"] = opts["resource_type"]
    from bench.cli.grid import second_dimension  # --load2-type, --loads2 (bench.search.grid)

    second_dimension(doc, opts)
    for opt in "duration warmup repetitions metric early_stop sample_interval early_sample_interval".split():
        if opts.get(opt) is not None:  # execution.<the option in camelCase>
            ex[opt.split("_")[0] + "".join(w.title() for w in opt.split("_")[1:])] = opts[opt]
    check_strategy(ex.get("strategy"))
    strategy = dict(ex.get("strategy") or {})
    if opts.get("search"):
        strategy_named(registry, opts["search"])  # a plugin's strategy too; one line naming the known ones
        strategy = {"name": opts["search"], "restrictions": strategy.get("restrictions", ["LowerBound"])}
    if opts.get("lower_bound") is not None:
        strategy["restrictions"] = ["LowerBound"] if opts["lower_bound"] else []
        if not opts["lower_bound"]:
            check_no_lower_bound(registry, strategy)
    if strategy:
        ex["strategy"] = strategy
    given = {key: opts[option] for option, key in bounds.CLI_THRESHOLD_OPTIONS.items() if opts.get(option) is not None}
    if len(given) > 1:
        raise ConfigError("--threshold, --threshold-rel-to-rate and --threshold-rel-to-load exclude each other")
    if given:
        doc["slos"] = threshold_overrides(registry, bench, doc.get("slos") or [], given)
    return doc


def chosen_use_case(registry: Registry, opts: dict[str, Any]) -> UseCase:
    """``--plugin NAME``, or the built-in ``job`` use case for ``--job PATH.py``."""
    if opts.get("job"):
        if opts.get("plugin"):
            raise ConfigError("--job and --plugin exclude each other (--job runs your script as the use case 'job')")
        return find_use_case(registry, "job")
    if opts.get("record_template"):
        raise ConfigError("--record-template needs --job PATH.py (the use cases' parsers read ActivePowerRecords)")
    plugin = opts.get("plugin") or use_case_named_by_files(opts)  # an Execution's benchmark names it too
    if not plugin:
        raise ConfigError("bench run needs --plugin NAME (a use case: see `bench plugins`) or --job PATH.py "
                          "(your own PySpark script)")
    return find_use_case(registry, plugin)


def resolve_run(registry: Registry, opts: dict[str, Any]) -> PreparedRun:
    """The run that ``opts`` ask for, with every default applied and every value checked
    against the use case, its plugins and the deployment; nothing is started and the
    machine is not inspected (on a platform that reads the benchmark's configMap resource
    sets, they are read first, unless ``--dry-run``). ``bench run`` and ``bench validate`` both come here, so
    they apply the same defaults (LAPTOP_EXECUTION, the use case's defaultExecution)."""
    check_options(opts)
    security = KafkaSecurity.parse(opts.get("kafka_config") or (), opts.get("kafka_config_file"))
    use_case = chosen_use_case(registry, opts)
    if use_case.generator not in registry.generators:
        raise ConfigError(f"use case {use_case.name}: its generator {use_case.generator!r} is not registered"
                          f"{registry.excluded_note()}")
    bench_file = opts.get("benchmark_file")
    ptype = platform_type(registry, opts.get("platform_name") or DEFAULT_PLATFORM)
    with from_file("--benchmark", bench_file):
        bench = parse_benchmark(load_yaml(bench_file, "--benchmark") if bench_file else use_case.default_benchmark())
        read_config_map_sets(ptype, bench, opts)  # the cluster is read, nothing is created
        validate_benchmark(bench, registry)
        check_object_names(bench.sut.resources + bench.loadGenerator.resources, "benchmark.resources")
        if bench.kafkaConfig.bootstrapServer:
            check_bootstrap_servers(bench.kafkaConfig.bootstrapServer, "benchmark.kafkaConfig.bootstrapServer")
    auto = [False, False]
    with from_file("--execution", opts.get("execution_file"), opts):
        doc = _execution_doc(registry, bench, opts, auto)
        execution = parse_execution(doc)
        validate_execution(execution, bench, registry)
    refuse_unhonoured(registry, ptype, bench, execution, opts)
    check_predict(registry, bool(opts.get("predict")),
                  registry.search_strategies[execution.execution.strategy.resolved()[0]])
    params = parse_sets(opts.get("sets") or ())
    if opts.get("record_template"):
        check_record_template(str(opts["record_template"]))
    if opts.get("job"):
        check_job_script(str(opts["job"]), imports=bool(opts.get("dry_run")))  # a run checks in prepare_run
        from bench.builtin.job import job_params

        params.update(job_params(str(opts["job"]), opts.get("record_template"), opts.get("job_args") or ()))
    elif opts.get("job_args"):
        raise ConfigError(f"{shlex.join(opts['job_args'])}: arguments after -- are the command line of --job PATH.py")
    given = dict(opts)  # the platforms' options under their declared names (bench.cli.platform_options)
    if not given.get("bootstrap_servers") and ptype.option("bootstrap_servers") is not None:
        given["bootstrap_servers"] = bench.kafkaConfig.bootstrapServer
    declared, complete = declared_params(use_case, registry)
    validate_params(bench.params, declared, complete, "benchmark.params")
    validate_object_params(bench, declared, complete)
    validate_params(execution.params, declared, complete, "execution.params")
    plain = {k: v for k, v in params.items() if "." not in k}
    validate_params(plain, declared, complete, "--set")
    for where, given_params in (("--set", plain), ("benchmark.params", bench.params),
                                ("execution.params", execution.params)):
        if "keyOffset" in (given_params or {}):  # each platform overwrites it per generator instance
            raise ConfigError(f"{where} keyOffset: bench sets each generator instance's first key itself; "
                              "leave keyOffset out")
    bounds.check_params(declared, {"benchmark.params": bench.params, "execution.params": execution.params,
                                   "--set": plain})
    options = {
        "platform": ptype.name,
        "sample_interval": execution.execution.sampleInterval,
        **platform_options(registry, ptype, given),
    }
    check_resolved(given, use_case, effective_slos(bench, execution), execution, ptype)  # after the platform's refusals
    # the SLOs' SLIs (SLO name -> SLI), for a platform that samples some only under a setting
    slis = {s.name: registry.slos[s.sloType].sli_name(s.properties) for s in effective_slos(bench, execution)}
    run_check(ptype.validate, {**options, "slo_slis": slis}, use_case)
    check_trigger(options.get("trigger_seconds"), execution.execution.duration, execution.execution.warmup)
    # The deployment paths are checked against the objects without them (setting a
    # path creates it); then every experiment's deployment must build.
    loads, resources = execution.load.loadValues, execution.resources.resourceValues
    load, res = loads[0], resources[0]
    try:
        validate_deployment_paths(build_objects(registry, bench, execution, plain, load, res),
                                  params, declared, complete)
        bounds.check_sets(params)
        for load, res in itertools.product(loads, resources):
            objects = build_objects(registry, bench, execution, params, load, res)
            bounds.check_objects(objects, f"load={fmt_value(load)} resources={fmt_value(res)}:")
            check_sets_kept(objects, params, f"at load={fmt_value(load)} resources={fmt_value(res)}")
            refuse_unlimited_cpu(options, use_case, objects, any(k.endswith("cpuPerInstance") for k in params))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, UserError):
            raise
        # a patcher refusing a value: name the value and its type, as the user gave them
        raise ConfigError(f"load {fmt_value(load)} ({execution.load.loadType}), resources {fmt_value(res)} "
                          f"({execution.resources.resourceType}): the deployment cannot be patched: {exc}; "
                          "check the load and resource values (--loads, --resources)") from None
    from bench.cli.grid import check_grid  # a second load dimension's own checks

    check_grid(registry, bench, execution, params, opts)
    return PreparedRun(use_case, bench, execution, params, options, security, auto_size(auto, params, bench_file))


def prepare_run(registry: Registry, opts: dict[str, Any]) -> PreparedRun:
    """Everything is checked here, before any process starts: the run itself
    (:func:`resolve_run`), then what this machine must offer for it (Java, a writable
    results folder, a free metrics port, what the platform checks: Java, a kubeconfig).
    ``--dry-run`` needs none of those."""
    prepared = resolve_run(registry, opts)
    install_kafka_security(prepared.kafka_security)  # every client and child; --dry-run renders references to it
    if opts.get("dry_run"):
        return prepared
    options = prepared.platform_options
    run_check(registry.platforms[options["platform"]].check_host, options, prepared.use_case)
    results_dir = Path(opts.get("results_dir") or "results")
    if opts.get("resume"):
        check_resume(results_dir)
    # the SUT's task slots run on this machine: a platform that runs Spark here, no cluster given
    if registry.platforms[options["platform"]].option("spark_master") is not None and not options.get("spark_master"):
        ex = prepared.execution
        bounds.check_host_slots(build_objects(registry, prepared.benchmark, ex, prepared.params, ex.load.loadValues[0],
                                              ex.resources.resourceValues[-1]), "--resources")
    if opts.get("job"):
        check_job_script(str(opts["job"]))
    if options.get("bootstrap_servers"):
        probe_kafka(str(options["bootstrap_servers"]))
    check_results_dir(results_dir)
    if options.get("metrics_port"):
        check_port_free(int(options["metrics_port"]))
    return prepared


async def run_benchmark(registry: Registry, prepared: PreparedRun, opts: dict[str, Any]) -> RunOutcome:
    factory = registry.platforms[prepared.platform_options["platform"]]
    platform = factory.create(prepared.platform_options, registry)
    results_dir = Path(opts.get("results_dir") or "results")
    config = RunConfig(
        use_case=prepared.use_case,
        benchmark=prepared.benchmark,
        execution=prepared.execution,
        results_dir=results_dir,
        params=prepared.params,
        resume=bool(opts.get("resume")), predict=bool(opts.get("predict")), auto=prepared.auto,
        retries=1 if opts.get("retries") is None else int(opts["retries"]),
    )
    progress = Progress()
    engine = Engine(registry, config, platform, progress)
    progress(f"exp{engine.store.id}: {prepared.use_case.name}, results in {results_dir}/")
    outcome = await engine.run()
    try:
        from bench.results.plots import make_plots

        for path in make_plots(outcome, prepared.benchmark):
            progress(f"plot: {path}")
    except Exception as exc:  # noqa: BLE001 - a plot problem must not lose the run's result
        progress(f"plots skipped: {type(exc).__name__}: {exc}")
    return outcome


def dry_run(registry: Registry, prepared: PreparedRun, opts: dict[str, Any]) -> str:
    """The deployment of the first experiment, patched, as the platform would apply it."""
    load = prepared.execution.load.loadValues[0]
    res = prepared.execution.resources.resourceValues[0]
    objects = build_objects(registry, prepared.benchmark, prepared.execution, prepared.params, load, res)
    render = registry.platforms[prepared.platform_options["platform"]].render
    if render is not None:
        from bench.execution.deployment import merged_params

        params = merged_params(prepared.use_case, prepared.benchmark, prepared.execution, objects, prepared.params)
        spec = ExperimentSpec(
            experiment_id="dry-run",
            use_case=prepared.use_case,
            objects=objects,
            topics=[TopicSpec(t.name, t.name, t.numPartitions) for t in prepared.benchmark.kafkaConfig.topics],
            params=params,
            load=load,
            resources=res,
        )
        objects = render(spec, prepared.platform_options)
    header = f"# load={fmt_value(load)} resources={fmt_value(res)}\n"
    if prepared.auto is not None and (prepared.auto.loads or prepared.auto.resources):
        sized = " and ".join(n for n, on in (("loads", prepared.auto.loads), ("resources", prepared.auto.resources))
                             if on)
        header += (f"# {sized}: sized for this machine by a probe of two instances before the first experiment "
                   "(the values here are the use case's placeholders; --loads/--resources give your own)\n")
    header += "".join(f"# {note}\n" for note in pending_notes(prepared.benchmark))
    return header + yaml.safe_dump_all(objects, sort_keys=False)


def validate_file(registry: Registry, path: Path, benchmark_path: Path | None) -> str:
    """``bench validate``: the file as ``bench run`` would use it (:func:`resolve_run`,
    same defaults, same checks), without looking at this machine."""
    doc = load_yaml(path)
    if kind_of(doc) == "benchmark":
        bench = parse_benchmark(doc)
        validate_benchmark(bench, registry)
        resolve_run(registry, {"plugin": bench.useCase, "benchmark_file": path})
        return f"{path}: valid benchmark {bench.name!r} (use case {bench.useCase})"
    body = doc.get("spec", doc) if isinstance(doc, dict) and isinstance(doc.get("spec"), dict) else doc
    if benchmark_path is not None:
        bench = parse_benchmark(load_yaml(benchmark_path, "--benchmark"))
    elif isinstance(body, dict) and isinstance(body.get("benchmark"), str):
        bench = parse_benchmark(find_use_case(registry, body["benchmark"]).default_benchmark())
    else:
        raise ConfigError("execution.benchmark: missing; it names the benchmark (use case) to run")
    prepared = resolve_run(registry, {"plugin": bench.useCase, "execution_file": path,
                                      "benchmark_file": benchmark_path})
    return f"{path}: valid execution {prepared.execution.name!r} of benchmark {prepared.benchmark.name!r}"
