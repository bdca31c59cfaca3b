"""A small generic client for any Kubernetes object, on kubernetes-asyncio's ApiClient.

The typed APIs of kubernetes-asyncio need one call per kind; a benchmark's manifests
can hold any kind (SparkApplication, KafkaTopic, ...), so objects are addressed by
their apiVersion/kind/name through raw REST paths instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.watch import Watch

from bench.api import Manifest
from bench.errors import UserError

#: kind -> (plural, namespaced); anything else is guessed as a namespaced lowercase plural
KINDS: dict[str, tuple[str, bool]] = {
    "Pod": ("pods", True),
    "Service": ("services", True),
    "ConfigMap": ("configmaps", True),
    "Secret": ("secrets", True),
    "ServiceAccount": ("serviceaccounts", True),
    "PersistentVolumeClaim": ("persistentvolumeclaims", True),
    "Deployment": ("deployments", True),
    "StatefulSet": ("statefulsets", True),
    "DaemonSet": ("daemonsets", True),
    "ReplicaSet": ("replicasets", True),
    "Job": ("jobs", True),
    "CronJob": ("cronjobs", True),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "Namespace": ("namespaces", False),
    "SparkApplication": ("sparkapplications", True),
    "KafkaTopic": ("kafkatopics", True),
    "ServiceMonitor": ("servicemonitors", True),
    "PodMonitor": ("podmonitors", True),
}


def plural_of(kind: str) -> tuple[str, bool]:
    if kind in KINDS:
        return KINDS[kind]
    lower = kind.lower()
    if lower.endswith("y"):
        return lower[:-1] + "ies", True
    if lower.endswith("s"):
        return lower + "es", True
    return lower + "s", True


def describe(obj: Manifest) -> str:
    """``Deployment/uc1-sut`` (with namespace when known), for error messages."""
    meta = obj.get("metadata", {}) or {}
    where = f" in namespace {meta['namespace']!r}" if meta.get("namespace") else ""
    return f"{obj.get('kind', '?')}/{meta.get('name', '?')}{where}"


def collection_path(api_version: str, kind: str, namespace: str | None) -> str:
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    plural, namespaced = plural_of(kind)
    if namespaced and namespace:
        return f"{base}/namespaces/{namespace}/{plural}"
    return f"{base}/{plural}"


def object_path(obj: Manifest) -> str:
    meta = obj.get("metadata", {}) or {}
    path = collection_path(str(obj.get("apiVersion", "v1")), str(obj["kind"]), meta.get("namespace"))
    return f"{path}/{meta['name']}"


class KubernetesError(UserError, RuntimeError):
    """A request the API server refused, naming the verb and the object."""

    def __init__(self, verb: str, obj: Manifest, status: int, detail: str) -> None:
        self.verb = verb
        self.status = status
        self.object = describe(obj)
        super().__init__(f"cannot {verb} {self.object}: HTTP {status}: {detail}")


class ForbiddenError(KubernetesError):
    """HTTP 403: the service account lacks a permission (see deploy/kustomize/rbac.yaml)."""

    def __init__(self, verb: str, obj: Manifest, status: int, detail: str) -> None:
        super().__init__(verb, obj, status, detail)
        self.args = (
            f"forbidden: the service account may not {verb} {self.object} ({detail}); "
            "grant it in the framework's Role (deploy/kustomize/rbac.yaml)",
        )


class ReadinessTimeout(UserError, TimeoutError):
    """An object never reached the awaited state within the timeout."""


def kubeconfig_problem(options: Any) -> str | None:
    """Why the platform could not reach a cluster, checked before a run starts (None: fine).

    The same order as ``KubernetesPlatform.open``: ``api_url``, in-cluster, then the
    kubeconfig file (option ``kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``).
    kubernetes-asyncio would otherwise raise its ConfigException only once the run opens.
    """
    from bench.platforms.kubernetes.manifests import option

    if option(options, "api_url") or option(options, "in_cluster") or os.environ.get("KUBERNETES_SERVICE_HOST"):
        return None
    given = option(options, "kubeconfig") or os.environ.get("KUBECONFIG") or "~/.kube/config"
    paths = [os.path.expanduser(p) for p in str(given).split(os.pathsep) if p]
    if any(os.path.isfile(p) for p in paths):
        return None
    return (f"no kubeconfig: {given} does not exist (set $KUBECONFIG or BENCH_K8S_KUBECONFIG, "
            "or run bench inside the cluster)")


async def api_client(options: Any) -> ApiClient:
    """An API client as the options say: ``api_url`` (plain HTTP, tests), in-cluster, or
    the kubeconfig (option ``kubeconfig`` and ``context``); the caller closes it."""
    from kubernetes_asyncio import config
    from kubernetes_asyncio.client import Configuration

    from bench.platforms.kubernetes.options import option

    cfg = Configuration()
    api_url = option(options, "api_url")
    if api_url:
        cfg.host = str(api_url).rstrip("/")
    elif option(options, "in_cluster") or os.environ.get("KUBERNETES_SERVICE_HOST"):
        config.load_incluster_config(client_configuration=cfg)
    else:
        await config.load_kube_config(
            config_file=option(options, "kubeconfig"),
            context=option(options, "context"),
            client_configuration=cfg,
        )
    return ApiClient(cfg)


def _detail(exc: ApiException) -> str:
    raw: Any = exc.body
    body = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        parsed = json.loads(body) if body else {}
        return str(parsed.get("message") or parsed.get("reason") or exc.reason)
    except (ValueError, AttributeError):
        return str(exc.reason or body)


def _error(verb: str, obj: Manifest, exc: ApiException) -> KubernetesError:
    cls = ForbiddenError if exc.status == 403 else KubernetesError
    return cls(verb, obj, int(exc.status or 0), _detail(exc))


class CompatWatch(Watch):
    """kubernetes-asyncio sends ``watch=True``; Go's API server parses that, but some
    servers (kmock among them) only accept the canonical lowercase ``watch=true``."""

    def stream(self, func: Any, *args: Any, **kwargs: Any) -> Watch:
        super().stream(func, *args, **kwargs)
        keywords = dict(self.func.keywords)
        name = self.get_watch_argument_name(func)
        if keywords.get(name) is True:
            keywords[name] = "true"
        self.func = partial(func, *args, **keywords)
        return self


Predicate = Callable[[Manifest | None], bool]


class KubeClient:
    """Create, patch, get, delete, list and watch any object in one namespace."""

    def __init__(self, api: ApiClient, namespace: str) -> None:
        self.api = api
        self.namespace = namespace

    def _own(self, obj: Manifest) -> Manifest:
        """The object with this client's namespace filled in (namespaced kinds only)."""
        _, namespaced = plural_of(str(obj.get("kind")))
        meta = dict(obj.get("metadata", {}) or {})
        if namespaced and not meta.get("namespace"):
            meta["namespace"] = self.namespace
        return {**obj, "metadata": meta}

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: list[tuple[str, Any]] | None = None,
        content_type: str = "application/json",
        preload: bool = True,
    ) -> Any:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        return await self.api.call_api(
            path,
            method,
            query_params=query or [],
            header_params=headers,
            body=body,
            response_types_map={200: "object", 201: "object", 202: "object"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=preload,
        )

    async def create(self, obj: Manifest) -> Manifest:
        obj = self._own(obj)
        meta = obj["metadata"]
        path = collection_path(str(obj.get("apiVersion", "v1")), str(obj["kind"]), meta.get("namespace"))
        try:
            result: Manifest = await self._call("POST", path, body=obj)
            return result
        except ApiException as exc:
            raise _error("create", obj, exc) from None

    async def patch(self, obj: Manifest) -> Manifest:
        """JSON merge patch: maps merge, lists are replaced, as ``kubectl apply`` would do
        for the fields a benchmark changes (replicas, env, resources)."""
        obj = self._own(obj)
        try:
            result: Manifest = await self._call(
                "PATCH", object_path(obj), body=obj, content_type="application/merge-patch+json"
            )
            return result
        except ApiException as exc:
            raise _error("patch", obj, exc) from None

    async def apply(self, obj: Manifest) -> Manifest:
        """Create, or patch when it exists already (HTTP 409): a leftover of an aborted
        run must not stop the next experiment."""
        try:
            return await self.create(obj)
        except KubernetesError as exc:
            if exc.status != 409:
                raise
        return await self.patch(obj)

    async def get(self, obj: Manifest) -> Manifest | None:
        obj = self._own(obj)
        try:
            result: Manifest = await self._call("GET", object_path(obj))
            return result
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise _error("get", obj, exc) from None

    async def delete(self, obj: Manifest) -> bool:
        """Delete with foreground propagation (pods go before their owner); False if absent."""
        obj = self._own(obj)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"}
        try:
            await self._call("DELETE", object_path(obj), body=body)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise _error("delete", obj, exc) from None

    async def list(self, api_version: str, kind: str, label_selector: str | None = None) -> list[Manifest]:
        path = collection_path(api_version, kind, self.namespace)
        query = [("labelSelector", label_selector)] if label_selector else []
        probe = {"apiVersion": api_version, "kind": kind, "metadata": {"namespace": self.namespace, "name": "*"}}
        try:
            result = await self._call("GET", path, query=query)
        except ApiException as exc:
            raise _error("list", probe, exc) from None
        return list(result.get("items", []))

    def _lister(self, obj: Manifest) -> Callable[..., Awaitable[Any]]:
        """A list function in the shape kubernetes-asyncio's Watch expects."""
        path = collection_path(str(obj.get("apiVersion", "v1")), str(obj["kind"]), obj["metadata"].get("namespace"))

        async def list_objects(watch: Any = None, _preload_content: bool = True, **_: Any) -> Any:
            query = [("fieldSelector", f"metadata.name={obj['metadata']['name']}")]
            if watch is not None:
                query.append(("watch", watch))
            return await self._call("GET", path, query=query, preload=_preload_content)

        return list_objects

    async def wait_for(self, obj: Manifest, predicate: Predicate, timeout: float, what: str) -> Manifest | None:
        """Watch one object until ``predicate(current or None if absent)`` holds.

        The watch is reopened after a quiet ``recheck`` period with a fresh GET, so an
        event lost between the first GET and the watch cannot make this wait forever.
        """
        obj = self._own(obj)
        name = obj["metadata"]["name"]
        deadline = time.monotonic() + timeout
        current = await self.get(obj)
        recheck = 5.0
        while True:
            if predicate(current):
                return current
            left = deadline - time.monotonic()
            if left <= 0:
                state = json.dumps((current or {}).get("status", "absent"), default=str)[:300]
                raise ReadinessTimeout(
                    f"{describe(obj)} did not become {what} within {timeout:g} s (last status: {state})"
                )
            watch = CompatWatch()
            try:
                async with asyncio.timeout(min(recheck, left)):
                    async for event in watch.stream(self._lister(obj)):
                        raw = event.get("raw_object") or {}
                        if (raw.get("metadata") or {}).get("name") != name:
                            continue
                        current = None if event.get("type") == "DELETED" else raw
                        if predicate(current):
                            return current
            except TimeoutError:
                pass
            except ApiException as exc:
                raise _error("watch", obj, exc) from None
            finally:
                await watch.close()
            current = await self.get(obj)
