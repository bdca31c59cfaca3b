"""The reference's (Theodolite's) Benchmark and Execution documents, read as written.

Both generations of the reference's schema are turned into bench's shape before
pydantic sees them, so every field the reference defines is either honoured or
refused by :func:`refusal` in one line that names the part and says why:

- the wrapper ``apiVersion`` / ``kind`` / ``metadata`` / ``spec`` (``metadata.name``
  names the document; labels are kept out of the way);
- resource sets: ``fileSystem`` (read from disk, relative to the benchmark file, each
  manifest marked with its file name so that a patcher's ``resource`` selects it),
  ``configMap`` (kept apart: it lives in a cluster, and the kubernetes platform reads it
  when the run is prepared, see :mod:`bench.config.config_maps`), the oldest schema's
  ``appResource`` / ``loadGenResource`` file lists, ``infrastructure``,
  ``beforeActions`` / ``afterActions``, ``waitForResourcesEnabled``;
- SLOs of the older schema (``sloType``, ``prometheusUrl``, ``offset``, ``properties``;
  in the oldest executions ``threshold``, ``warmup``, ``externalSloUrl`` beside them)
  and of the current one (top-level ``slis``; SLOs naming an ``sli`` with
  ``warmupSeconds``, ``externalSloChecker``, the threshold forms and aggregations as
  fields of their own);
- ``kafkaConfig`` topics with ``removeOnly`` (bench deletes every topic of a repetition
  anyway, so these are only recorded);
- ``execution.strategy`` as a string (``LinearSearch``) with the older
  ``execution.restrictions``, or as an object; restrictions exactly as written, none
  when none are written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from bench.errors import UserError


class ReferenceFileError(UserError, ValueError):
    """A reference document bench cannot read (a missing manifest file, an entry that is
    no mapping); one line, like every configuration error."""


#: the annotation that records the file a manifest came from (bench.patchers.apply selects by it)
SOURCE_ANNOTATION = "bench/source"
#: fields of the reference's SLO of the current schema that go into bench's properties
SLO_FIELDS = ("sli", "warmupSeconds", "externalSloChecker", "threshold", "thresholdRelToLoad",
              "thresholdRelToResources", "thresholdFromExpression", "queryAggregation", "repetitionAggregation",
              "operator")
#: the fields of the oldest schema's execution SLOs that are properties in the later ones
OLD_SLO_PROPERTIES = ("threshold", "warmup", "externalSloUrl", "ratio")
#: the resource set groups of a benchmark, in the order their manifests are applied
GROUPS = ("sut", "loadGenerator", "infrastructure")
#: how the reference's PromQL queries name the SLIs bench samples itself
_KNOWN_QUERIES = (
    (re.compile(r"group_lag|consumergroup.*lag|records_lag", re.I), "lag"),
    (re.compile(r"dropped_records", re.I), "dropped-records"),
)
#: the reference's search strategy names
REFERENCE_STRATEGIES = ("FullSearch", "LinearSearch", "BinarySearch", "RestrictionSearch", "InitialGuessSearch")
#: the reference's rule per SLI, for an SLO of the current schema that gives no aggregation
_RULES = {
    "lag": {"queryAggregation": "trend", "repetitionAggregation": "median", "operator": "lt"},
    "dropped-records": {"queryAggregation": "max", "repetitionAggregation": "max", "operator": "lt"},
}
#: what a SUT image or manifest name says about the stream processing framework
_FRAMEWORKS = (("beam-samza", "Apache Beam on Samza"), ("beam-flink", "Apache Beam on Flink"),
               ("samza", "Apache Samza"), ("flink", "Apache Flink"), ("hazelcastjet", "Hazelcast Jet"),
               ("kstreams", "Kafka Streams"), ("kafka-streams", "Kafka Streams"))


def body_of(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = doc.get("spec")
    return spec if isinstance(spec, Mapping) and ("kind" in doc or "apiVersion" in doc) else doc


def is_reference(doc: Any) -> bool:
    """Whether a document is written in one of the reference's schemas (rather than
    bench's): its apiVersion, or a field only the reference writes."""
    if not isinstance(doc, Mapping):
        return False
    if str(doc.get("apiVersion", "")).startswith("theodolite."):
        return True
    body = body_of(doc)
    if any(k in body for k in ("appResource", "loadGenResource", "slis", "waitForResourcesEnabled")):
        return True
    for group in GROUPS:
        part = body.get(group)
        if isinstance(part, list):
            return True
        if isinstance(part, Mapping):
            items = part.get("resources") or []
            sets = ("configMap", "fileSystem")
            if isinstance(items, list) and any(isinstance(r, Mapping) and any(k in r for k in sets) for r in items):
                return True
    execution = body.get("execution")
    if isinstance(execution, Mapping):
        strategy = execution.get("strategy")
        if isinstance(strategy, str) or "restrictions" in execution:
            return True
        # the reference's strategy names (bench's own are full, linear, binary, initial-guess)
        if isinstance(strategy, Mapping) and str(strategy.get("name", "")) in REFERENCE_STRATEGIES:
            return True
    slos = body.get("slos")
    return isinstance(slos, list) and any(
        isinstance(s, Mapping) and ("prometheusUrl" in s or "offset" in s or ("sli" in s and "sloType" not in s)
                                    or ("sloType" in s and "name" not in s)) for s in slos)


def sli_of_query(query: Any) -> str | None:
    """The bench SLI a reference PromQL query measures, when bench samples it itself."""
    for pattern, sli in _KNOWN_QUERIES:
        if isinstance(query, str) and pattern.search(query):
            return sli
    return None


def as_bench(doc: Any, path: Path, read: Reader | None = None) -> Any:
    """A document read from ``path``: one in the reference's schema in bench's shape
    (its fileSystem resource sets read relative to ``path``), any other unchanged."""
    if not is_reference(doc):
        return doc
    body = body_of(doc)
    kind = str(doc.get("kind", "")).lower()
    if kind == "benchmark" or (kind != "execution" and ("loadTypes" in body or "resourceTypes" in body)):
        return benchmark_doc(doc, path.resolve().parent, read or plain_reader)
    return execution_doc(doc)


# --------------------------------------------------------------------------- benchmark


#: reads one manifest file: (path, how the benchmark names it) -> the YAML document
Reader = Callable[[Path, str], Any]


def plain_reader(path: Path, where: str) -> Any:
    """A manifest file as YAML (``bench.config.files`` passes its size- and bomb-checked reader instead)."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReferenceFileError(f"{where}: cannot read {path}: {exc.strerror} (paths are relative to the "
                         "benchmark file)") from None
    except yaml.YAMLError as exc:
        raise ReferenceFileError(f"{where}: {path} is not valid YAML: {' '.join(str(exc).split())}") from None


def _read_files(where: str, path: Any, files: Any, base: Path, read: Reader) -> list[dict[str, Any]]:
    folder = Path(str(path or "."))
    folder = folder if folder.is_absolute() else base / folder
    names = [str(f) for f in files] if isinstance(files, list) else (
        sorted(p.name for p in folder.glob("*.y*ml")) if folder.is_dir() else [])
    if not names:
        raise ReferenceFileError(f"{where}: no manifest files in {folder} (paths are relative to the benchmark file)")
    manifests = []
    for name in names:
        manifest = read(folder / name, where)
        if not isinstance(manifest, dict):
            raise ReferenceFileError(f"{where}: {folder / name} does not hold a Kubernetes manifest")
        raw_meta = manifest.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        manifest["metadata"] = {**meta, "annotations": {**(meta.get("annotations") or {}), SOURCE_ANNOTATION: name}}
        manifests.append(manifest)
    return manifests


def _resource_set(where: str, part: Any, base: Path, read: Reader) -> dict[str, Any]:
    if part is None:
        return {}
    if isinstance(part, list):  # the oldest schema: a list of file names, found by the reference's operator
        names = [str(f) for f in part]
        if all((base / n).is_file() for n in names):
            return {"resources": _read_files(where, ".", names, base, read)} if names else {}
        return {"resources": [], "files": names}
    if not isinstance(part, Mapping):
        raise ReferenceFileError(f"{where}: expected a mapping with 'resources', got {part!r}")
    out = {k: v for k, v in dict(part).items() if k != "resources"}
    resources: list[dict[str, Any]] = []
    config_maps: list[dict[str, Any]] = []
    items = part.get("resources") or []
    if not isinstance(items, list):
        raise ReferenceFileError(f"{where}.resources: expected a list of resource sets, got {items!r}")
    for i, item in enumerate(items):
        for key in ("configMap", "fileSystem"):
            if isinstance(item, Mapping) and key in item and not isinstance(item[key] or {}, Mapping):
                raise ReferenceFileError(f"{where}.resources[{i}].{key}: expected a mapping (name/path and files), "
                                         f"got {item[key]!r}")
        if isinstance(item, Mapping) and "configMap" in item:
            # "at": where its manifests go among the group's once a platform has read them
            config_maps.append({**dict(item["configMap"] or {}), "index": i, "at": len(resources)})
        elif isinstance(item, Mapping) and "fileSystem" in item:
            fs = item["fileSystem"] or {}
            resources += _read_files(f"{where}.resources[{i}].fileSystem", fs.get("path"), fs.get("files"), base,
                                     read)
        else:
            resources.append(item)
    out["resources"] = resources
    if config_maps:
        out["configMaps"] = config_maps
    return out


def _slo(slo: Mapping[str, Any], slis: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    out = {k: v for k, v in slo.items() if k not in SLO_FIELDS}
    props = dict(slo.get("properties") or {})
    for key in SLO_FIELDS:
        if slo.get(key) is not None:
            props[key] = slo[key]
    for key in OLD_SLO_PROPERTIES:  # the oldest executions write these beside sloType
        if key in out and key not in ("name", "sloType"):
            props.setdefault(key, out.pop(key))
    if props.get("warmupSeconds") is not None:
        props.setdefault("warmup", props["warmupSeconds"])
    if "sli" in props and isinstance(props["sli"], str):
        sli = slis.get(props["sli"], {})
        query = next((sli.get(k) for k in ("promQLQuery", "query") if sli.get(k)), None)
        props["sli"] = sli_of_query(query) or props["sli"]
    elif sli_of_query(props.get("promQLQuery") or slo.get("query")):
        props["sli"] = sli_of_query(props.get("promQLQuery") or slo.get("query"))
    if "sloType" not in out:
        # The current schema names no SLO type: the checker decides. Without aggregations
        # an SLO on the lag or dropped records means the reference's rule for that SLI,
        # which the generic type expresses (median of slopes < threshold; max < threshold).
        out["sloType"] = "generic"
        if not any(k in props for k in ("queryAggregation", "repetitionAggregation", "operator")):
            props.update(_RULES.get(str(props.get("sli")), {}))
    out.setdefault("name", str(out.get("sli") or out["sloType"]))
    out["properties"] = props
    return out


def patcher(ref: Any) -> Any:
    """A patcher definition; early reference files write its properties beside ``type``."""
    if not isinstance(ref, Mapping):
        return ref
    beside = {k: v for k, v in ref.items() if k not in ("type", "resource", "properties")}
    return {**{k: v for k, v in ref.items() if k in ("type", "resource")},
            "properties": {**beside, **dict(ref.get("properties") or {})}}


def _type(typedef: Any) -> Any:
    if not isinstance(typedef, Mapping) or not isinstance(typedef.get("patchers"), list):
        return typedef
    return {**typedef, "patchers": [patcher(p) for p in typedef["patchers"]]}


def sli_slo(slo: Mapping[str, Any], slis: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One SLO of the current schema (naming an SLI of ``slis``) in bench's shape."""
    return _slo(slo, slis)


def benchmark_doc(doc: Mapping[str, Any], base: Path, read: Reader = plain_reader) -> dict[str, Any]:
    """A reference Benchmark in bench's shape (validated by :class:`bench.config.model.Benchmark`)."""
    body = dict(body_of(doc))
    name = (doc.get("metadata") or {}).get("name") if body is not doc else None
    if name:
        body["name"] = name
    if "appResource" in body:
        body["sut"] = body.pop("appResource")
    if "loadGenResource" in body:
        body["loadGenerator"] = body.pop("loadGenResource")
    for group in GROUPS:
        if group in body:
            body[group] = _resource_set(f"benchmark.{group}", body[group], base, read)
    for group in ("loadTypes", "resourceTypes"):
        if isinstance(body.get(group), list):
            body[group] = [_type(t) for t in body[group]]
    slis = {str(s.get("name")): s for s in body.get("slis") or [] if isinstance(s, Mapping)}
    body["slos"] = [_slo(s, slis) if isinstance(s, Mapping) else s for s in body.get("slos") or []]
    kafka = body.get("kafkaConfig")
    if isinstance(kafka, Mapping) and isinstance(kafka.get("topics"), list):
        topics = kafka["topics"]
        keep = [t for t in topics if not (isinstance(t, Mapping) and t.get("removeOnly"))]
        removed = [str(t.get("name")) for t in topics if isinstance(t, Mapping) and t.get("removeOnly")]
        body["kafkaConfig"] = {**kafka, "topics": keep, **({"removeOnly": removed} if removed else {})}
    return body


# --------------------------------------------------------------------------- execution


def execution_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A reference Execution in bench's shape (validated by :class:`bench.config.model.Execution`)."""
    body = dict(body_of(doc))
    name = (doc.get("metadata") or {}).get("name") if body is not doc else None
    if name:
        body["name"] = name
    slos = []
    for i, slo in enumerate(body.get("slos") or []):
        if not isinstance(slo, Mapping):
            raise ReferenceFileError(f"execution.slos[{i}]: {slo!r} is not an SLO (a mapping with a name)")
        if isinstance(slo, Mapping) and ("sloType" in slo or "sli" in slo):
            slos.append(_slo(slo, {}))
        elif isinstance(slo, Mapping):  # an override; the current schema writes its fields beside the name
            props = {**{k: slo[k] for k in SLO_FIELDS if slo.get(k) is not None}, **dict(slo.get("properties") or {})}
            if props.get("warmupSeconds") is not None:
                props.setdefault("warmup", props["warmupSeconds"])
            slos.append({**{k: v for k, v in slo.items() if k not in SLO_FIELDS}, "properties": props})
        else:
            slos.append(slo)
    if "slos" in body:
        body["slos"] = slos
    ex = dict(body.get("execution") or {})
    strategy = ex.get("strategy")
    restrictions = ex.pop("restrictions", None)
    if isinstance(strategy, str):
        strategy = {"name": strategy}
    if isinstance(strategy, Mapping):
        strategy = dict(strategy)
        # exactly as written: the reference adds no restriction that is not there
        strategy.setdefault("restrictions", restrictions if restrictions is not None else [])
        ex["strategy"] = strategy
    elif restrictions is not None:
        ex["strategy"] = {"name": "LinearSearch", "restrictions": restrictions}
    if "execution" in body or ex:
        body["execution"] = ex
    if isinstance(body.get("configOverrides"), list):
        for i, override in enumerate(body["configOverrides"]):
            if not isinstance(override, Mapping) or not isinstance(override.get("patcher"), Mapping):
                raise ReferenceFileError(f"execution.configOverrides[{i}]: {override!r} is not a config override "
                                         "(a mapping with patcher and value)")
        body["configOverrides"] = [{**o, "patcher": patcher(o["patcher"])} for o in body["configOverrides"]]
    return body


# --------------------------------------------------------------------------- what cannot run


def _framework(texts: list[str]) -> str | None:
    joined = " ".join(texts).lower()
    return next((label for key, label in _FRAMEWORKS if key in joined), None)


def _describe_sut(sut: Mapping[str, Any]) -> tuple[str, list[str]]:
    texts: list[str] = []
    shown = []
    for cm in sut.get("configMaps") or []:
        files = [str(f) for f in cm.get("files") or []]
        texts += [str(cm.get("name", "")), *files]
        shown.append(f"ConfigMap {cm.get('name')!r}" + (f" ({', '.join(files[:3])})" if files else ""))
    if sut.get("files"):
        texts += [str(f) for f in sut["files"]]
        shown.append(f"files {', '.join(str(f) for f in sut['files'][:3])}")
    for obj in sut.get("resources") or []:
        images = [str(c.get("image", "")) for c in _containers(obj)]
        texts += [str((obj.get("metadata") or {}).get("name", "")), *images]
        if images and len(shown) < 2:
            shown.append(f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')} (image {images[0]})")
    return "; ".join(shown) or "no manifests", texts


def _containers(obj: Any) -> list[Mapping[str, Any]]:
    if not isinstance(obj, Mapping):
        return []
    spec = obj.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") if isinstance(spec, Mapping) else None
    pod = pod if isinstance(pod, Mapping) else spec if isinstance(spec, Mapping) else {}
    return [c for c in pod.get("containers") or [] if isinstance(c, Mapping)]


def refusal(bench: Any) -> str | None:
    """The one line that says which part of a (reference) benchmark cannot run in bench,
    and why, or None when bench can run all of it."""
    if not bench.useCase:
        what, texts = _describe_sut(bench.sut.model_dump())
        framework = _framework([bench.name, *texts])
        article = "an" if framework and framework[0] in "AEIOU" else "a"
        kind = f"{article} {framework} application" if framework else "not a bench use case"
        match = re.search(r"uc([1-4])", bench.name)
        instead = f"useCase: uc{match.group(1)}" if match else "useCase: NAME"
        return (f"benchmark.sut: {what}: {kind}, and bench runs only Spark Structured Streaming use cases "
                "(on every platform, --platform kubernetes included); benchmark a bench use case instead: "
                f"{instead} (see bench plugins)")
    for group in GROUPS:
        part = getattr(bench, group)
        for cm in part.configMaps:
            if group == "infrastructure":
                break  # refused below with the rest of the infrastructure
            if not cm.get(PENDING):
                return config_map_refusal(group, cm, "without --platform kubernetes, bench")
        if part.files:
            return (f"benchmark.{group}: the files {', '.join(part.files)} are not next to the benchmark file; "
                    "bench reads manifests from there (or from a fileSystem resource set)")
        for when in ("beforeActions", "afterActions"):
            if getattr(part, when):
                return (f"benchmark.{group}.{when}: bench runs no exec or delete actions (no pods to exec into "
                        "on one machine); remove them or run the commands around bench")
    used = {str((slo.properties or {}).get("sli")) for slo in bench.slos}
    for i, sli in enumerate(bench.slis):
        query = next((sli.get(k) for k in ("promQLQuery", "query") if sli.get(k)), None)
        if sli.get("name") in used and sli_of_query(query) is None:
            return (f"benchmark.slis[{i}] {sli.get('name')!r}: bench samples its SLIs itself (lag, "
                    f"dropped-records, latency, ...) and runs no {sli.get('provider') or 'Prometheus'} query; "
                    "name one of those SLIs in the SLO instead")
    if bench.infrastructure.resources or bench.infrastructure.configMaps:
        return ("benchmark.infrastructure.resources: bench deploys no long-lived infrastructure; its platforms "
                "start the broker themselves (--platform external for a Kafka you run)")
    return None


# --------------------------------------------------------------------------- configMap sets

#: the key a platform sets on a configMap set it will read but has not (``--dry-run``):
#: the comment line that says what would be read
PENDING = "pending"


def config_map_refusal(group: str, cm: Mapping[str, Any], platform: str) -> str:
    """The one line for a configMap set where ``platform`` cannot read it."""
    return (f"benchmark.{group}.resources[{cm.get('index', 0)}].configMap {cm.get('name')!r}: {platform} reads "
            "no ConfigMap from a cluster; run it with --platform kubernetes, or copy its files next to the "
            "benchmark and name them in a fileSystem resource set")
