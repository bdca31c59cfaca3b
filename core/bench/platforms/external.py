"""The ``external`` platform: an existing Kafka cluster (``bootstrap_servers``, required)
and, with ``spark_master``, an existing Spark cluster; the SUT driver and the load
generators still run on this machine (:mod:`bench.platforms.local`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.errors import UserError
from bench.platforms.local import LocalPlatform

if TYPE_CHECKING:
    from bench.plugins import Registry


class ExternalPlatform(LocalPlatform):
    name = "external"

    def __init__(self, options: Mapping[str, Any], registry: Registry | None = None) -> None:
        if not options.get("bootstrap_servers"):
            # the run's preparation says so first; this guards direct construction
            raise UserError("--platform external needs --bootstrap-servers HOST:PORT")
        super().__init__(options, registry)
