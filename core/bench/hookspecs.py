"""Hook specifications: the whole surface a plugin can implement.

Registration hooks receive a ``register`` callable instead of returning values, so an
implementation stays side-effect free and a test can call it with a list's ``append``.
Built-in behaviour is registered through these same hooks (``bench.builtin``).
Every hook here is documented in docs/hooks.md; a test keeps the two in step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # only the CLI needs click; libraries that load plugins do not
    import click

PROJECT = "bench"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def bench_register_use_cases(register: Any) -> None:
    """Register use cases: ``register(bench.api.UseCase(...))``."""


@hookspec
def bench_register_generators(register: Any) -> None:
    """Register workload generators: ``register(bench.api.GeneratorType(...))``."""


@hookspec
def bench_register_slos(register: Any) -> None:
    """Register SLO checker types: ``register(bench.api.SloType(...))``."""


@hookspec
def bench_register_patchers(register: Any) -> None:
    """Register patchers: ``register(bench.api.PatcherType(...))``."""


@hookspec
def bench_register_search_strategies(register: Any) -> None:
    """Register search strategies: ``register(bench.api.SearchStrategy(...))``."""


@hookspec
def bench_register_platforms(register: Any) -> None:
    """Register platforms: ``register(bench.api.PlatformType(...))``."""


@hookspec
def bench_experiment_started(experiment_id: str, load: float, resources: float, repetition: int) -> None:
    """Called when one repetition of an experiment starts."""


@hookspec
def bench_experiment_finished(
    experiment_id: str, load: float, resources: float, passed: bool, details: dict[str, Any]
) -> None:
    """Called when an SLO experiment (all repetitions) has its verdict."""


@hookspec
def bench_run_finished(results_dir: str, metric: str, table: dict[float, float | None]) -> None:
    """Called once at the end of ``bench run`` with the demand or capacity table."""


@hookspec
def bench_add_commands(cli: click.Group) -> None:
    """Add click commands to the ``bench`` CLI: ``cli.add_command(...)``."""
