"""What a pod gets besides its spec: the Kafka client settings from a Secret, and an own
job's script (``--job``) from a ConfigMap.

The rendered manifests hold only references (``secretKeyRef``, a Secret volume); the
platform writes the Secret itself through the API (:func:`kafka_secret`), so neither
``--dry-run`` nor a log shows a setting.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.api import Manifest
from bench.platforms.kubernetes.options import option
from bench.runtime.kafka.security import current

MANAGED = {"app.kubernetes.io/managed-by": "bench"}
JOB_DIR = "/etc/bench/job"
KAFKA_DIR = "/etc/bench/kafka"
#: the Secret's key holding the client settings (JSON, Kafka's property names)
KAFKA_CONFIG_KEY = "kafka-config.json"
#: the TLS files a setting names, as keys of the Secret
KAFKA_FILES = {"ssl.ca.location": "ca.pem", "ssl.certificate.location": "certificate.pem",
               "ssl.key.location": "key.pem"}


def kafka_security_on(options: Mapping[str, Any] | None) -> bool:
    """Whether pods get the Kafka client settings: the run has some (``--kafka-config``,
    installed for this process and, for ``--dry-run``, too), or a Secret is named."""
    return bool(current()) or bool((options or {}).get("kafka_secret") or os.environ.get("BENCH_K8S_KAFKA_SECRET"))


def kafka_env(options: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``BENCH_KAFKA_CONFIG`` as a reference to the Secret, never the value."""
    if not kafka_security_on(options):
        return []
    ref = {"name": str(option(options, "kafka_secret")), "key": KAFKA_CONFIG_KEY}
    return [{"name": "BENCH_KAFKA_CONFIG", "valueFrom": {"secretKeyRef": ref}}]


def kafka_volume(options: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(volumes, volume mounts) of the Secret's TLS files; none without security."""
    if not kafka_security_on(options):
        return [], []
    name = str(option(options, "kafka_secret"))
    return ([{"name": "kafka-client", "secret": {"secretName": name}}],
            [{"name": "kafka-client", "mountPath": KAFKA_DIR, "readOnly": True}])


def kafka_secret(options: Mapping[str, Any] | None, namespace: str) -> Manifest | None:
    """The Secret the pods read, from this process's settings (None without any).

    Applied by the platform through the API, never printed: it is the one object that
    holds the settings in clear. TLS files are copied in and the settings point at
    their mounted copies, since a path on this machine means nothing in a pod.
    """
    security = current()
    if not security:
        return None
    settings = dict(security.settings)
    data: dict[str, str] = {}
    for key, file in KAFKA_FILES.items():
        if settings.get(key):
            data[file] = Path(settings[key]).read_text()
            settings[key] = f"{KAFKA_DIR}/{file}"
    data[KAFKA_CONFIG_KEY] = json.dumps(settings, sort_keys=True)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": str(option(options, "kafka_secret")), "namespace": namespace, "labels": dict(MANAGED)},
        "stringData": data,
    }


def job_config_map(name: str, script: str) -> tuple[Manifest, str]:
    """The ConfigMap with an own job's script (``--job``), and the script's path in the pod."""
    file = Path(script).name
    return ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
             "data": {file: Path(script).read_text(encoding="utf-8")}}, f"{JOB_DIR}/{file}")
