"""The reference's configMap resource sets, read from the run's namespace.

A reference Benchmark may keep its manifests in a ConfigMap of the cluster
(``resources: [{configMap: {name, files}}]``). The kubernetes platform reads each named
key when the run is prepared, before anything is created, so that a missing ConfigMap or
key is one line and the manifests are validated and patched like those of a
``fileSystem`` set. ``files`` absent: every ``*.yaml`` / ``*.yml`` key, in name order, as
the reference reads them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from bench.platforms.kubernetes.client import KubeClient, api_client, kubeconfig_problem
from bench.platforms.kubernetes.options import option

#: what a ConfigMap key must stay under, as a manifest file read from disk (bench.config.files)
MAX_KEY_BYTES = 1024 * 1024


def place(options: Mapping[str, Any]) -> str:
    """Where the sets are read: the run's namespace."""
    return f"namespace {str(option(options, 'namespace'))!r}"


def _keys(cm: Mapping[str, Any], data: Mapping[str, Any], where: str) -> list[str]:
    files = cm.get("files")
    if files is None:
        keys = sorted(k for k in data if k.endswith((".yaml", ".yml")))
        if not keys:
            raise ValueError(f"ConfigMap {cm.get('name')!r} in {where} has no *.yaml key (its keys: "
                             f"{', '.join(sorted(data)) or 'none'}); name them in files")
        return keys
    return [str(f) for f in files]


async def read_sets(client: KubeClient, sets: Sequence[Mapping[str, Any]], where: str) -> list[list[tuple[str, str]]]:
    """Per set its (key, text) pairs, in the order ``files`` names them."""
    out: list[list[tuple[str, str]]] = []
    for cm in sets:
        name = str(cm.get("name") or "")
        if not name:
            raise ValueError(f"a configMap resource set names no ConfigMap (name) to read from {where}")
        found = await client.get({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
        if found is None:
            keys = ", ".join(str(f) for f in cm.get("files") or []) or "its *.yaml keys"
            raise ValueError(f"ConfigMap {name!r} (keys {keys}) does not exist in {where}; create it there "
                             "(kubectl create configmap) or give --namespace")
        data: Mapping[str, Any] = found.get("data") or {}
        pairs = []
        for key in _keys(cm, data, where):
            if key not in data:
                raise ValueError(f"ConfigMap {name!r} in {where} has no key {key!r} (its keys: "
                                 f"{', '.join(sorted(data)) or 'none'})")
            text = str(data[key])
            if len(text.encode("utf-8")) > MAX_KEY_BYTES:
                raise ValueError(f"ConfigMap {name!r} in {where}: key {key!r} holds more than "
                                 f"{MAX_KEY_BYTES:,} bytes; a manifest needs far fewer")
            pairs.append((key, text))
        out.append(pairs)
    return out


async def _read(sets: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[list[tuple[str, str]]]:
    api = await api_client(options)
    try:
        return await read_sets(KubeClient(api, str(option(options, "namespace"))), sets, place(options))
    finally:
        await api.close()


def read_config_maps(sets: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[list[tuple[str, str]]]:
    """The platform's ``read_config_maps``: synchronous, because the run is prepared before
    its event loop starts (call it from a thread where a loop already runs)."""
    if not sets:
        return []
    problem = kubeconfig_problem(options)
    if problem:
        raise ValueError(f"--platform kubernetes: the configMap resource sets cannot be read: {problem}")
    import aiohttp
    from kubernetes_asyncio.config import ConfigException

    try:
        return asyncio.run(_read(sets, options))
    except (OSError, aiohttp.ClientError, ConfigException) as exc:
        raise ValueError(f"--platform kubernetes: cannot read the configMap resource sets from {place(options)}: "
                         f"{' '.join(str(exc).split()) or type(exc).__name__}") from None
