"""The UC4 sensor registry: a tree of groups whose leaves are the measured sensors.

The JSON shape follows the reference's SensorRegistry (``identifier``, ``name``,
``children``; a node without ``children`` is a machine sensor), so registries written
for the reference benchmarks can be published unchanged. Everything here is pure so
that the tree logic is tested without Kafka or Spark.
"""

from __future__ import annotations

import functools
import json
import math
import random
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ROOT = "group_lvl_0"
#: the key of registry events, as the reference's config publisher uses
EVENT_KEY = "SENSOR_REGISTRY_CHANGED"


@dataclass
class Node:
    identifier: str
    children: list[Node] = field(default_factory=list)
    is_group: bool = False
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"identifier": self.identifier, "name": self.name}
        if self.is_group:
            doc["children"] = [child.to_json() for child in self.children]
        return doc


def leaf_key(index: int) -> str:
    return f"s_{index}"


def group_key(level: int, index: int) -> str:
    return ROOT if level == 0 else f"group_lvl_{level}_{index}"


def build_tree(levels: int, children: int = 4) -> Node:
    """A full tree: ``levels`` nested group levels, ``children`` per group, ``children**levels`` leaves.

    Leaves are numbered left to right, so a contiguous key range (one generator
    instance's share) is a contiguous set of subtrees.
    """
    if levels < 1:
        raise ValueError(f"nestedGroups must be >= 1, got {levels}")
    if children < 1:
        raise ValueError(f"childrenPerGroup must be >= 1, got {children}")
    leaf_keys(levels, children)  # the same size check

    def node(level: int, index: int) -> Node:
        if level == levels:
            return Node(leaf_key(index), name=leaf_key(index))
        kids = [node(level + 1, index * children + i) for i in range(children)]
        return Node(group_key(level, index), kids, is_group=True, name=group_key(level, index))

    return node(0, 0)


#: more leaves than this is a mistyped load (e.g. records/s given as nesting levels)
MAX_LEAVES = 10_000_000


def leaf_keys(levels: int, children: int = 4) -> list[str]:
    """The leaves of :func:`build_tree` without building it (the generator's key space)."""
    if levels < 1 or children < 1:
        raise ValueError(f"need nestedGroups >= 1 and childrenPerGroup >= 1, got {levels}, {children}")
    check_leaves(levels, children)
    return [leaf_key(i) for i in range(children**levels)]


def check_leaves(levels: int, children: int) -> None:
    """Refuse a tree of more than :data:`MAX_LEAVES` leaves by its logarithm: the power
    itself, for a load value like 10^9 levels, is a number of gigabytes that takes
    minutes to compute (sizing's search for a load value tries such values)."""
    if levels * math.log10(max(children, 1)) > math.log10(MAX_LEAVES):
        raise ValueError(
            f"childrenPerGroup^nestedGroups = {children}^{levels} leaves is more than {MAX_LEAVES:,}; "
            "the NumNestedGroups load is the number of nesting levels (e.g. 2, 3, 4), not records/s"
        )


def dumps(tree: Node) -> str:
    return json.dumps(tree.to_json(), separators=(",", ":"))


#: What one registry event may weigh on the wire: a Kafka broker takes record batches of
#: up to ``message.max.bytes`` (1,048,588 by default), less room for the batch's header.
#: 7 levels of 4 children are 1,058,994 bytes as JSON and were refused by the producer on
#: every attempt; gzip makes them 125,256.
MAX_EVENT_BYTES = 1_000_000
#: above this many raw bytes the event is sent gzip-compressed; below it as before
COMPRESS_ABOVE = 512_000


def wire_size(payload: bytes) -> int:
    """The bytes the event takes on the wire: raw below :data:`COMPRESS_ABOVE`, else gzip'd."""
    return len(payload) if len(payload) <= COMPRESS_ABOVE else len(zlib.compress(payload, 6))


def check_event_size(payload: bytes, what: str = "the registry event") -> None:
    """Refuse an event no broker with default settings takes, naming its size, before
    a producer retries it in vain."""
    check_sizes(len(payload), wire_size(payload), what)


def check_sizes(raw: int, wire: int, what: str) -> None:
    if wire > MAX_EVENT_BYTES:
        raise ValueError(f"{what} is {wire:,} bytes compressed ({raw:,} as JSON), more than one Kafka "
                         f"message holds ({MAX_EVENT_BYTES:,}, the broker's message.max.bytes); use fewer "
                         "nestedGroups or childrenPerGroup")


#: gzip leaves a full tree's event about 7.6 bytes a leaf (levels 7-9 of 4 children); a
#: tree above the limit at half of that is refused without building it: sizing's search
#: for a load value built 9, 10 and 11 levels (4 million leaves, gigabytes, a minute and a
#: half) only to refuse each
MIN_WIRE_BYTES_PER_LEAF = 3.8


def check_full_tree(levels: int, children: int, what: str) -> None:
    """Refuse a full tree's event no broker takes, by its leaves where they decide it."""
    check_leaves(levels, children)
    leaves = children**levels
    if leaves * MIN_WIRE_BYTES_PER_LEAF > MAX_EVENT_BYTES:
        raise ValueError(f"{what} is at least {leaves * MIN_WIRE_BYTES_PER_LEAF:,.0f} bytes compressed ({leaves:,} "
                         f"sensors), more than one Kafka message holds ({MAX_EVENT_BYTES:,}, the broker's "
                         "message.max.bytes); use fewer nestedGroups or childrenPerGroup")
    check_sizes(*full_tree_sizes(levels, children), what)


@functools.lru_cache(maxsize=32)
def full_tree_sizes(levels: int, children: int) -> tuple[int, int]:
    """(JSON bytes, wire bytes) of :func:`build_tree`'s event, computed once per shape."""
    payload = dumps(build_tree(levels, children)).encode()
    return len(payload), wire_size(payload)


def parse(doc: str | Mapping[str, Any]) -> Node:
    """Parse a registry event; raises ``ValueError`` on anything that is not a tree."""
    raw = json.loads(doc) if isinstance(doc, str) else doc

    def node(obj: Any, depth: int) -> Node:
        if depth > 64:
            raise ValueError("registry nested deeper than 64 levels")
        if not isinstance(obj, Mapping) or not isinstance(obj.get("identifier"), str):
            raise ValueError(f"registry node without a string identifier: {obj!r:.80}")
        kids = obj.get("children")
        if kids is None:
            return Node(obj["identifier"], name=str(obj.get("name", "")))
        if not isinstance(kids, list):
            raise ValueError(f"children of {obj['identifier']!r} is not a list")
        return Node(obj["identifier"], [node(k, depth + 1) for k in kids], is_group=True, name=str(obj.get("name", "")))

    return node(raw, 0)


def walk(tree: Node) -> Iterator[tuple[Node, list[str]]]:
    """Every node with its ancestors (nearest first)."""
    stack: list[tuple[Node, list[str]]] = [(tree, [])]
    while stack:
        current, ancestors = stack.pop()
        yield current, ancestors
        for child in reversed(current.children):
            stack.append((child, [current.identifier, *ancestors]))


def parents_of(tree: Node, feedback: bool = True) -> dict[str, list[str]]:
    """Where each record is duplicated to.

    With the feedback loop a record goes to its direct parent(s) only, and group
    results travel up one level per window through ``aggregation-feedback``; so groups
    are keys here too. Without it (the 2023 study's variant) only leaves are keys and
    each goes straight to all of its ancestors. A sensor listed under several groups
    goes to each of them once.
    """
    result: dict[str, list[str]] = {}
    for current, ancestors in walk(tree):
        if not ancestors:
            continue
        if feedback:
            targets = ancestors[:1]
        elif current.is_group:
            continue
        else:
            targets = ancestors
        known = result.setdefault(current.identifier, [])
        known.extend(t for t in targets if t not in known)
    return result


def leaves_under(tree: Node) -> dict[str, set[str]]:
    """Each group's set of leaf sensors (the test oracle's view of the tree)."""
    result: dict[str, set[str]] = {}
    for current, ancestors in walk(tree):
        if current.is_group:
            result.setdefault(current.identifier, set())
        else:
            for group in ancestors:
                result.setdefault(group, set()).add(current.identifier)
    return result


def height(tree: Node, identifier: str) -> int:
    """Levels between a group and its deepest leaf (1 = a group of leaves).

    With feedback, a group's window W holds leaf values of window W - (height - 1):
    each level adds one window of delay, as in the reference's Kafka Streams UC4.
    """
    for current, _ in walk(tree):
        if current.identifier == identifier:
            return _height(current)
    raise KeyError(identifier)


def _height(node: Node) -> int:
    if not node.is_group or not node.children:
        return 0
    return 1 + max(_height(child) for child in node.children)


def move(tree: Node, sensor: str, new_parent: str) -> Node:
    """A copy of the tree with ``sensor`` moved under ``new_parent`` (for runtime changes)."""
    copy = parse(tree.to_json())
    moved: Node | None = None
    for current, _ in walk(copy):
        for child in list(current.children):
            if child.identifier == sensor:
                current.children.remove(child)
                moved = child
    if moved is None:
        raise KeyError(sensor)
    for current, _ in walk(copy):
        if current.identifier == new_parent and current.is_group:
            current.children.append(moved)
            return copy
    raise KeyError(new_parent)


def add_group(tree: Node, parent: str, identifier: str) -> Node:
    """A copy of the tree with a new, empty group ``identifier`` under ``parent``."""
    if any(n.identifier == identifier for n, _ in walk(tree)):
        raise ValueError(f"{identifier!r} is already in the registry")
    copy = parse(tree.to_json())
    for current, _ in walk(copy):
        if current.identifier == parent and current.is_group:
            current.children.append(Node(identifier, is_group=True, name=identifier))
            return copy
    raise KeyError(parent)


def sensor_groups(tree: Node) -> list[str]:
    """Groups that hold sensors directly, or could (empty groups): where a sensor may move."""
    return [n.identifier for n, _ in walk(tree) if n.is_group and all(not c.is_group for c in n.children)]


def added_group_key(step: int) -> str:
    return f"group_added_{step}"


def changed(tree: Node, step: int, seed: int = 0) -> Node:
    """The registry after runtime change number ``step`` (1, 2, ...), deterministic per seed.

    Odd steps move one sensor to another group that holds sensors; even steps add a
    group next to the sensor groups (under a parent of one, so every group keeps its
    height and the feedback delay per level stays what it was) and move one sensor
    into it, since an empty group has nothing to aggregate. Together they are the two
    changes the method names: a sensor moved, a group added.
    """
    rng = random.Random(seed * 1_000_003 + step)
    sensors = sorted(n.identifier for n, _ in walk(tree) if not n.is_group)
    if not sensors:
        return parse(tree.to_json())
    sensor = rng.choice(sensors)
    parent_of = {n.identifier: anc[0] for n, anc in walk(tree) if anc}
    if step % 2 == 1:
        targets = [g for g in sensor_groups(tree) if g != parent_of[sensor]]
        return move(tree, sensor, rng.choice(targets)) if targets else parse(tree.to_json())
    holders = sorted({parent_of[g] for g in sensor_groups(tree) if g in parent_of}) or [tree.identifier]
    grown = add_group(tree, rng.choice(holders), added_group_key(step))
    return move(grown, sensor, added_group_key(step))
