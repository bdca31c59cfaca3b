"""The checks of a run's inputs that :mod:`bench.cli.launch` makes before anything starts.

Apart from ``launch`` so that it stays about the flow (defaults, validation, start),
and so that other commands (``bench stages``) can make the same checks. Every check
here raises :class:`bench.config.model.ConfigError` (one line, exit 2) naming the value and
where it came from. Syntax checks (addresses, names, numbers against
:mod:`bench.config.bounds`) look at nothing outside bench; the probes (Kafka reachable, a
script's imports, ``--resume`` has a run) run only when a run is about to start.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bench.config import bounds, files
from bench.config.base import ConfigError
from bench.config.files import FileError
from bench.errors import UserError

#: a host name as Kafka's clients accept it: DNS labels of letters, digits and '-'
_HOST = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")
_IPV6 = re.compile(r"^\[[0-9A-Fa-f:.%a-zA-Z]+\]$")
#: the Spark master URLs Spark itself accepts
_SPARK_MASTER = re.compile(
    r"^(local(\[(\*|[1-9][0-9]*)(,\s*[0-9]+)?\])?"
    r"|spark://[^\s/,:]+:[0-9]{1,5}(,[^\s/,:]+:[0-9]{1,5})*"
    r"|yarn|k8s://https?://[^\s]+|mesos://[^\s]+)$")
#: a Kubernetes namespace: a DNS-1123 label
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
#: placeholders a record template may hold (bench.runtime.load.generator fills them)
TEMPLATE_PLACEHOLDERS = ("key", "timestamp")
#: seconds one probe of a Kafka cluster waits for a connection
PROBE_TIMEOUT_S = 5.0
#: seconds the import check of a --job script may take
IMPORT_CHECK_TIMEOUT_S = 25.0


def _positive(name: str, value: float | None, *, zero: bool = False, unit: str = "") -> None:
    if value is None:
        return
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        kind = "a non-negative" if zero else "a positive"
        raise ConfigError(f"--{name} {value:g}: must be {kind} number{unit}")


def check_options(opts: Mapping[str, Any]) -> None:
    """Signs and ranges of the numeric options and the syntax of addresses, named as the
    user typed them; the bounds are :mod:`bench.config.bounds`, the same as for files."""
    _positive("threshold", opts.get("threshold"), unit=" of records/s")
    _positive("threshold-rel-to-rate", opts.get("threshold_rel_to_rate"), unit=" (a fraction of the records/s)")
    _positive("threshold-rel-to-load", opts.get("threshold_rel_to_load"), unit=" (a factor of the load value)")
    for option, key in bounds.CLI_THRESHOLD_OPTIONS.items():
        if opts.get(option) is not None:
            bounds.check_value(bounds.THRESHOLDS[key][1], opts[option], bounds.THRESHOLDS[key][0])
    _positive("trigger", opts.get("trigger_seconds"), zero=True, unit=" of seconds")
    _positive("sample-interval", opts.get("sample_interval"), unit=" of seconds")
    _positive("duration", opts.get("duration"), unit=" of seconds")
    _positive("warmup", opts.get("warmup"), zero=True, unit=" of seconds")
    if opts.get("repetitions") is not None and opts["repetitions"] < 1:
        raise ConfigError(f"--repetitions {opts['repetitions']}: must be at least 1")
    for option, bound in (("trigger_seconds", bounds.TRIGGER), ("sample_interval", bounds.SAMPLE_INTERVAL),
                          ("duration", bounds.DURATION), ("warmup", bounds.WARMUP),
                          ("repetitions", bounds.REPETITIONS)):
        if opts.get(option) is not None:
            flag = "--trigger" if option == "trigger_seconds" else "--" + option.replace("_", "-")
            bounds.check_value(bound, opts[option], flag)
    if opts.get("early_sample_interval"):  # 0 turns the denser samples off
        bounds.check_value(bounds.SAMPLE_INTERVAL, opts["early_sample_interval"], "--early-sample-interval")
    port = opts.get("metrics_port")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"--metrics-port {port}: must be a port number from 1 to 65535")
    if opts.get("bootstrap_servers"):
        check_bootstrap_servers(str(opts["bootstrap_servers"]))
    if opts.get("spark_master"):
        check_spark_master(str(opts["spark_master"]))
    if opts.get("namespace") is not None:
        check_namespace(str(opts["namespace"]), "--namespace")


def check_trigger(trigger: float | None, duration: float, warmup: float) -> None:
    """Two micro-batches within the measured part of a repetition: with fewer the SUT
    commits no offsets there and every experiment fails for the trigger, not the load."""
    if trigger is not None and trigger > (duration - warmup) / 2:
        raise ConfigError(f"--trigger {trigger:g}: must leave two micro-batches between warmup ({warmup:g} s) and "
                          f"duration ({duration:g} s): at most {(duration - warmup) / 2:g} s")


def check_bootstrap_servers(servers: str, where: str = "--bootstrap-servers") -> list[tuple[str, int]]:
    """``HOST:PORT[,HOST:PORT]``: no scheme, no spaces, host names as Kafka's clients read them."""
    out = []
    for server in servers.split(","):
        entry = server.strip()
        if "://" in entry:
            raise ConfigError(f"{where} {servers}: {entry!r} has a URL scheme; Kafka takes HOST:PORT "
                              f"(e.g. {entry.split('://', 1)[1].split('/')[0] or 'kafka:9092'})")
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ConfigError(f"{where} {servers}: {entry!r} is not HOST:PORT")
        if not (_HOST.match(host) or _IPV6.match(host)):
            raise ConfigError(f"{where} {servers}: {host!r} is not a host name (letters, digits, '-' and '.'; "
                              "an IPv6 address in [brackets])")
        out.append((host.strip("[]"), int(port)))
    return out


def check_spark_master(url: str, where: str = "--spark-master") -> None:
    if not _SPARK_MASTER.match(url):
        raise ConfigError(f"{where} {url}: not a Spark master URL; e.g. spark://HOST:7077, local[4], "
                          "k8s://https://HOST:443 or yarn")


def check_namespace(name: str, where: str) -> None:
    if not _NAMESPACE.match(name):
        raise ConfigError(f"{where} {name!r}: not a Kubernetes namespace (at most 63 lower-case letters, digits "
                          "and '-', starting and ending with a letter or digit)")


def check_object_names(objects: Iterable[Mapping[str, Any]], where: str) -> None:
    """``metadata.namespace`` of a benchmark's manifests, as ``--namespace`` is checked."""
    for i, obj in enumerate(objects):
        namespace = (obj.get("metadata") or {}).get("namespace") if isinstance(obj, Mapping) else None
        if namespace is not None:
            check_namespace(str(namespace), f"{where}[{i}].metadata.namespace")


def parse_spark_conf(items: Iterable[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` pairs, kept as strings as Spark reads them."""
    conf: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf {item!r}: expected KEY=VALUE, e.g. spark.sql.shuffle.partitions=8")
        if not key.strip().startswith("spark."):
            raise ConfigError(f"--conf {item}: Spark reads only keys that start with 'spark.'")
        conf[key.strip()] = value.strip()
    return conf


def check_record_template(path: str) -> None:
    """A template's file is text and holds ``{key}`` or ``{timestamp}`` and no other
    placeholder (a misspelt one would be sent as it is, in every record)."""
    text = files.read_text(path, "--record-template")
    found = re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", text)
    unknown = sorted({name for name in found if name not in TEMPLATE_PLACEHOLDERS})
    if unknown:
        raise ConfigError(f"--record-template {path}: unknown placeholder {{{unknown[0]}}}; known: "
                          + ", ".join("{" + p + "}" for p in TEMPLATE_PLACEHOLDERS))
    if not found:
        raise ConfigError(f"--record-template {path}: holds no placeholder; put {{key}} (each sensor's key) "
                          "and {timestamp} (epoch ms) where the records carry them")


_IMPORT_CHECK = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
missing = [n for n in json.loads(sys.argv[2]) if importlib.util.find_spec(n) is None]
print(json.dumps(missing))
"""


def script_imports(source: str, filename: str) -> list[str]:
    """Top-level module names a script imports outside ``try`` blocks (those may be optional)."""
    tree = ast.parse(source, filename)
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            guarded.update(id(inner) for inner in ast.walk(node))
    names: list[str] = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return sorted(set(names))


def check_job_script(path: str, imports: bool = True) -> None:
    """``--job``: a UTF-8 text file that compiles and, with ``imports``, whose imports
    are installed in the Python that will run it, found before the broker and Spark start
    (the import check starts a Python, so ``--dry-run`` and ``bench validate`` skip it)."""
    source = files.read_text(path, "--job")
    if not any(line.strip() and not line.strip().startswith("#") for line in source.splitlines()):
        raise ConfigError(f"--job {path}: is empty (no statement); it must hold a PySpark script that reads "
                          "BENCH_BOOTSTRAP_SERVERS and BENCH_INPUT_TOPIC (docs/own-job.md)")
    try:
        names = script_imports(source, path)
    except SyntaxError as exc:
        raise ConfigError(f"--job {path}: line {exc.lineno}: {exc.msg}") from None
    if not any(word in source for word in ("BENCH_BOOTSTRAP_SERVERS", "BENCH_INPUT_TOPIC", "kafka")):
        raise ConfigError(f"--job {path}: never reads Kafka (no BENCH_BOOTSTRAP_SERVERS, BENCH_INPUT_TOPIC or "
                          "'kafka' in it), so the load would reach nothing it measures; see docs/own-job.md")
    if not names or not imports:
        return
    import json

    try:
        done = subprocess.run(  # noqa: S603 - this Python, a fixed program
            [sys.executable, "-c", _IMPORT_CHECK, str(Path(path).resolve().parent), json.dumps(names)],
            capture_output=True, text=True, timeout=IMPORT_CHECK_TIMEOUT_S, check=False)
        missing = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else []
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        return  # the check itself failed: the driver reports a real import error
    if missing:
        raise ConfigError(f"--job {path}: imports {', '.join(missing)}, which {sys.executable} cannot find; "
                          f"install it into that environment ({sys.executable} -m pip install ...)")


def probe_kafka(servers: str, where: str = "--bootstrap-servers") -> None:
    """One TCP connection to any of the servers, so that an unreachable cluster is found
    before an experiment id is reserved or a file written."""
    problems = []
    for host, port in check_bootstrap_servers(servers, where):
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                return
        except OSError as exc:
            problems.append(f"{host}:{port}: {exc.strerror or exc}")
    raise ConfigError(f"{where} {servers}: no server can be reached ({'; '.join(problems)}); is Kafka running "
                      "there, and is the address the one its listeners advertise?")


def check_resume(results_dir: Path) -> None:
    """``--resume`` needs a run in the folder; without one it would start a new run."""
    from bench.results.store import ResultStore

    ids = ResultStore.existing_ids(results_dir)
    if not ids:
        raise ConfigError(f"--resume: {results_dir} holds no run to resume (no exp<N>-execution-configuration.json); "
                          "run without --resume to start one, or give the folder of the run with --results")
    # the run --resume would continue is the last one; a complete run has nothing left, and
    # "resuming" it would only print its table again as if something had been measured
    result = results_dir / f"exp{max(ids)}-result.json"
    try:
        complete = json.loads(result.read_text(encoding="utf-8")).get("complete") is True
    except (OSError, ValueError, AttributeError):
        complete = False
    if complete:
        raise ConfigError(f"--resume: exp{max(ids)} in {results_dir} is complete, nothing to resume; run without "
                          f"--resume to start a new run, or `bench analyze {results_dir}` to read it again")


def check_results_dir(path: Path) -> None:
    """The results folder exists or can be made, and takes a file: found now rather than
    when the first experiment's results are written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".bench-write-check-"):
            pass
    except FileExistsError:
        raise ConfigError(f"--results {path}: exists and is not a folder") from None
    except OSError as exc:
        raise ConfigError(f"--results {path}: cannot write there: {exc.strerror or exc}") from None


def check_port_free(port: int) -> None:
    """The metrics exporter binds 127.0.0.1:port only after the broker started; a port
    in use would end the run there, so it is tried now (with SO_REUSEADDR, as the
    exporter's HTTP server binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ConfigError(f"--metrics-port {port}: cannot listen there: {exc.strerror or exc}") from None


#: execution keys an option sets, shown as the option when an error names them
_OPTION_KEYS = {"execution.load.loadValues": ("loads", "--loads"),
                "execution.resources.resourceValues": ("resources", "--resources"),
                "execution.load.loadType": ("load_type", "--load-type"),
                "execution.resources.resourceType": ("resource_type", "--resource-type")}


@contextlib.contextmanager
def from_file(flag: str, path: str | None, opts: Mapping[str, Any] | None = None) -> Iterator[None]:
    """An error about a value read from a file names the file first (the model only knows
    the key); one about an option's value names the option instead."""
    try:
        yield
    except UserError as exc:
        if isinstance(exc, FileError):  # names its file already
            raise
        message = str(exc)
        given = [f"--{o.replace('_', '-')}" for o in ("warmup", "duration", "sample_interval")
                 if opts is not None and opts.get(o) is not None]
        if given and message.startswith("execution.execution: "):  # an order of options (warmup < duration)
            raise ConfigError(f"{'/'.join(given)}: {message.removeprefix('execution.execution: ')}") from None
        for key, (option, shown) in _OPTION_KEYS.items():
            if opts is not None and opts.get(option) and message.startswith((key + " ", key + ":")):
                raise ConfigError(shown + message[len(key):]) from None
        if path is None or message.startswith("--") or str(path) in message:
            raise
        raise ConfigError(f"{flag} {path}: {message}") from None


def use_case_named_by_files(opts: Mapping[str, Any]) -> str | None:
    """The use case an Execution file's ``benchmark`` (or a Benchmark file's ``useCase``)
    names, so ``bench run --execution e.yaml`` runs what the file says, as the reference's
    operator does, without repeating it as ``--plugin``."""
    for flag, key, field in (("--execution", "execution_file", "benchmark"), ("--benchmark", "benchmark_file",
                                                                              "useCase")):
        if opts.get(key):
            with from_file(flag, opts[key]):
                doc = files.load_yaml(opts[key], flag)
            body = doc.get("spec", doc) if isinstance(doc, dict) and isinstance(doc.get("spec"), dict) else doc
            if isinstance(body, dict) and isinstance(body.get(field), str) and body[field]:
                return str(body[field])
    return None


def unknown_use_case(name: str, known: Iterable[str], note: str = "") -> str:
    """The message for a use case nobody registered; for a reference benchmark name such as
    ``uc1-kstreams`` or ``uc3-flink`` it names the bench use case it corresponds to, since
    bench runs the Spark Structured Streaming implementation of each."""
    names = sorted(known)
    message = f"--plugin: {name!r} is not a known use case; known: {', '.join(names) or '(none installed)'}"
    base = name.split("-", 1)[0]
    if "-" in name and base in names:
        message += f"; {name!r} names another implementation of {base}, and bench runs its Spark one: name {base}"
    return message + note
