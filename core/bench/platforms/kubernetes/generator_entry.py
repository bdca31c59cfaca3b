"""Entry point of one generator pod: ``python -m bench.platforms.kubernetes.generator_entry``.

The pod learns the whole workload from environment variables (set by
``bench.platforms.kubernetes.manifests``) and its instance number from its StatefulSet ordinal (the
``-N`` suffix of its hostname) or ``BENCH_INSTANCE_INDEX``. It takes its contiguous
share of the key space, as the reference's instances do, and hands over to
``bench.runtime.load.generator_main``. Instance 0 also runs the generator's ``prepare``
step (UC4 publishes its sensor registry there).

With ``BENCH_METRICS_PORT`` the pod serves what the generator reports (records sent,
seconds, achieved and target rate; :data:`GENERATOR_METRICS`), labelled with the
repetition's group and the instance: nobody reads a pod's stdout on Kubernetes, so
Prometheus carries the achieved rate back to the platform, and the shortfall check
runs there as on one machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from bench.api import GeneratorSpec, sensor_keys, split_keys

#: what a generator pod serves (gauges labelled ``group`` and ``instance``), from the
#: fields of its progress and report lines
GENERATOR_METRICS = {
    "bench_generator_pod_records": "records",
    "bench_generator_pod_seconds": "seconds",
    "bench_generator_pod_rate": "rate",
    "bench_generator_pod_target_rate": "target",
}


def serve_progress(port: int, group: str, instance: int, serve: Any = None) -> Any:
    """Start serving the gauges on ``port``; returns ``observe(kind, fields)``, which
    takes each progress or report line the generator emits."""
    from prometheus_client import CollectorRegistry, Gauge, start_http_server

    registry = CollectorRegistry()
    gauges = {name: Gauge(name, f"generator pod: {field}", ["group", "instance"], registry=registry)
              for name, field in GENERATOR_METRICS.items()}
    labels = {"group": group, "instance": str(instance)}
    (serve or start_http_server)(port, addr="0.0.0.0", registry=registry)  # noqa: S104 - scraped from the pod's IP

    def observe(kind: str, fields: Mapping[str, Any]) -> None:
        if kind not in ("progress", "report"):
            return
        values = dict(fields)
        if kind == "report":  # the final numbers: target and achieved as the engine reads them
            values = {"records": fields.get("records"), "seconds": fields.get("seconds"),
                      "rate": fields.get("achieved_rate"), "target": fields.get("target_rate")}
        for name, field in GENERATOR_METRICS.items():
            if values.get(field) is not None:
                gauges[name].labels(**labels).set(float(values[field]))

    return observe


def instance_index(env: Mapping[str, str]) -> int:
    if env.get("BENCH_INSTANCE_INDEX"):
        return int(env["BENCH_INSTANCE_INDEX"])
    match = re.search(r"-(\d+)$", env.get("HOSTNAME", ""))
    return int(match.group(1)) if match else 0


def instance_spec(env: Mapping[str, str], key_fn: Any = None) -> dict[str, Any]:
    """The generator_main spec of this instance, from the pod's environment."""
    params = json.loads(env.get("BENCH_PARAMS", "{}") or "{}")
    sensors = int(env.get("BENCH_SENSORS", "0"))
    keys = (key_fn or sensor_keys)(sensors, params)
    instances = max(1, int(env.get("BENCH_INSTANCES", "1")))
    shares = split_keys(keys, instances)
    index = instance_index(env)
    mine = shares[index] if index < len(shares) else []
    # as on the embedded platform: where this instance's keys start in the whole key
    # space (spreading, and "instance 0 does the one-off work", e.g. UC4's registry changes)
    params = {**params, "keyOffset": sum(len(s) for s in shares[:index])}
    return {
        "generator": env.get("BENCH_GENERATOR", "active-power"),
        "bootstrap_servers": env["BENCH_BOOTSTRAP_SERVERS"],
        "topic": env.get("BENCH_TOPIC", "input"),
        "keys": mine,
        "period_ms": float(env.get("BENCH_PERIOD_MS", "1000")),
        "duration_s": None,
        "params": params,
        "topics": json.loads(env.get("BENCH_TOPICS", "{}") or "{}"),
    }


def main() -> int:
    from bench.plugins import load_plugins
    from bench.runtime.load import generator_main
    env = dict(os.environ)
    generators = load_plugins().generators
    gen = generators.get(env.get("BENCH_GENERATOR", "active-power"))
    raw = instance_spec(env, gen.keys if gen is not None else None)
    if gen is not None and gen.prepare is not None and instance_index(env) == 0:
        whole = instance_spec({**env, "BENCH_INSTANCES": "1", "BENCH_INSTANCE_INDEX": "0"}, gen.keys)
        fields = {k: v for k, v in whole.items() if k != "generator"}
        prepare = gen.prepare

        async def run_prepare() -> None:
            await prepare(GeneratorSpec(**fields))

        asyncio.run(run_prepare())
    if env.get("BENCH_METRICS_PORT"):
        observe = serve_progress(int(env["BENCH_METRICS_PORT"]), env.get("BENCH_GROUP", ""), instance_index(env))
        emit = generator_main.emit

        def emit_and_serve(kind: str, **fields: Any) -> None:
            emit(kind, **fields)
            observe(kind, fields)

        generator_main.emit = emit_and_serve  # type: ignore[assignment]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(raw, fh)
    return generator_main.main([fh.name])


if __name__ == "__main__":
    sys.exit(main())
