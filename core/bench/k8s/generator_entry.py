"""Entry point of one generator pod: ``python -m bench.k8s.generator_entry``.

The pod learns the whole workload from environment variables (set by
``bench.k8s.manifests``) and its instance number from its StatefulSet ordinal (the
``-N`` suffix of its hostname) or ``BENCH_INSTANCE_INDEX``. It takes its contiguous
share of the key space, as the reference's instances do, and hands over to
``bench.runtime.load.generator_main``. Instance 0 also runs the generator's ``prepare``
step (UC4 publishes its sensor registry there).
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
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(raw, fh)
    return generator_main.main([fh.name])


if __name__ == "__main__":
    sys.exit(main())
