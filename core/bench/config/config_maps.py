"""The reference's configMap resource sets, once a platform has read them.

:mod:`bench.config.reference` keeps them apart from the manifests (they live in a
cluster); a platform that can read them (:attr:`bench.api.PlatformType.read_config_maps`)
gives their keys' text here, and their manifests take the set's place among its group's,
marked like a ``fileSystem`` set's. ``--dry-run`` reaches no cluster: the sets are marked
with what would be read, and the dry run prints that.
"""

from __future__ import annotations

from typing import Any

from bench.config.files import parse_yaml_all
from bench.config.reference import GROUPS, PENDING, SOURCE_ANNOTATION, ReferenceFileError
from bench.patchers.apply import select_indices


def config_map_sets(bench: Any) -> list[tuple[str, dict[str, Any]]]:
    """(group, set) of every configMap resource set of a benchmark, in file order."""
    return [(group, cm) for group in GROUPS for cm in getattr(bench, group).configMaps]


def add_config_map_manifests(bench: Any, texts: list[list[tuple[str, str]]]) -> None:
    """Put the manifests a platform read for each configMap set (``texts``: per set its
    (key, YAML text) pairs, in :func:`config_map_sets` order) in the set's place among its
    group's manifests, each marked with its key as a fileSystem manifest is with its file
    name, so that patchers select and patch them alike. Parsed with the checks of a user's
    file (size, depth, aliases, duplicate keys)."""
    sets = config_map_sets(bench)
    if len(texts) != len(sets):
        raise ValueError(f"{len(texts)} configMap sets read for {len(sets)}")
    added: dict[str, list[tuple[int, list[dict[str, Any]]]]] = {}
    for (group, cm), pairs in zip(sets, texts, strict=True):
        where = f"benchmark.{group}.resources[{cm.get('index', 0)}].configMap {cm.get('name')!r}"
        manifests: list[dict[str, Any]] = []
        for key, text in pairs:
            for doc in parse_yaml_all(text, f"{where} key {key!r}"):
                if not isinstance(doc, dict) or "kind" not in doc:
                    raise ReferenceFileError(f"{where}: key {key!r} does not hold a Kubernetes manifest "
                                             "(a mapping with kind)")
                raw_meta = doc.get("metadata")
                meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
                doc["metadata"] = {**meta, "annotations": {**(meta.get("annotations") or {}), SOURCE_ANNOTATION: key}}
                manifests.append(doc)
        added.setdefault(group, []).append((int(cm.get("at", len(getattr(bench, group).resources))), manifests))
    for group, places in added.items():
        part = getattr(bench, group)
        for at, manifests in sorted(places, key=lambda p: p[0], reverse=True):
            part.resources[at:at] = manifests
        part.configMaps = []


def mark_config_maps_pending(bench: Any, place: str) -> None:
    """Mark each configMap set as one a platform would read from ``place`` (``--dry-run``).
    A load or resource type's patcher that selects none of the manifests at hand patches
    one of the unread sets, which the dry run does not show: it is left out with them."""
    for group, cm in config_map_sets(bench):
        files = ", ".join(str(f) for f in cm.get("files") or []) or "every *.yaml key"
        cm[PENDING] = (f"benchmark.{group}.resources[{cm.get('index', 0)}]: would read ConfigMap "
                       f"{cm.get('name')!r} ({files}) from {place}; its manifests and their patchers are "
                       "not shown")
    known = [obj for group in GROUPS for obj in getattr(bench, group).resources]
    for typedef in [*bench.loadTypes, *bench.resourceTypes]:
        typedef.patchers = [p for p in typedef.patchers if not p.resource or select_indices(known, p.resource)]


def pending_notes(bench: Any) -> list[str]:
    """What a ``--dry-run`` would have read from the cluster, one line per set."""
    return [str(cm[PENDING]) for _, cm in config_map_sets(bench) if cm.get(PENDING)]
