"""Built-in platforms. Factories import lazily: the CLI must start fast and a missing
optional dependency of one platform must not break the others."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.api import PlatformType, Registrar
from bench.errors import UserError
from bench.hookspecs import hookimpl

if TYPE_CHECKING:
    from bench.plugins import Registry


def _embedded(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.embedded import EmbeddedPlatform

    return EmbeddedPlatform(options, registry)


def _external(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.embedded import EmbeddedPlatform

    if not options.get("bootstrap_servers"):
        # runner.prepare_run says so first; this guards other callers of the factory
        raise UserError("--platform external needs --bootstrap-servers HOST:PORT")
    return EmbeddedPlatform(options, registry)


def _kubernetes(options: Mapping[str, Any], registry: Registry) -> Any:
    from bench.platforms.kubernetes import KubernetesPlatform

    return KubernetesPlatform(options)


@hookimpl
def bench_register_platforms(register: Registrar) -> None:
    register(
        PlatformType(
            "embedded",
            "local broker subprocess + local Spark on this machine (the default)",
            _embedded,
        )
    )
    register(
        PlatformType(
            "external",
            "existing Kafka (--bootstrap-servers) and Spark (--spark-master) clusters",
            _external,
        )
    )
    register(
        PlatformType(
            "kubernetes",
            "deploy SUT and generators as Kubernetes objects (kubernetes-asyncio)",
            _kubernetes,
        )
    )
