"""Hook specifications: the whole surface a plugin can implement.

Registration hooks receive a registrar (``bench.api.Registrar``) instead of returning
values, so an implementation stays side-effect free and a test can call it with
``Registrar(found.append)``. The manager checks every ``bench_*`` implementation against
these specs at start-up (``check_pending``): a misspelt hook name is an error, not a
hook that silently never runs.
Built-in behaviour is registered through these same hooks (``bench.builtin``).
Every hook here is documented in docs/hooks.md; a test keeps the two in step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from bench.api import PROJECT, Registrar
from bench.api import hookimpl as hookimpl  # plugins import it from bench.api, its one public place

if TYPE_CHECKING:  # only the CLI needs click; libraries that load plugins do not
    import click

hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def bench_register_use_cases(register: Registrar) -> None:
    """Register use cases: ``register.use_case(bench.api.UseCase(...))``.

    :param register: takes ``UseCase`` objects only.
    """


@hookspec
def bench_register_generators(register: Registrar) -> None:
    """Register workload generators: ``register.generator(bench.api.GeneratorType(...))``.

    A generator's ``run`` keeps the contract of ``bench.api.GeneratorControl`` (progress
    at least every second, a report soon after the stop signal);
    ``bench.services.record_generator`` builds one that does from a record function.

    :param register: takes ``GeneratorType`` objects only.
    """


@hookspec
def bench_register_slos(register: Registrar) -> None:
    """Register SLO checker types: ``register.slo(bench.api.SloType(...))``.

    :param register: takes ``SloType`` objects only.
    """


@hookspec
def bench_register_patchers(register: Registrar) -> None:
    """Register patchers: ``register.patcher(bench.api.PatcherType(...))``.

    :param register: takes ``PatcherType`` objects only.
    """


@hookspec
def bench_register_search_strategies(register: Registrar) -> None:
    """Register search strategies: ``register.search_strategy(bench.api.SearchStrategy(...))``.

    :param register: takes ``SearchStrategy`` objects only.
    """


@hookspec
def bench_register_platforms(register: Registrar) -> None:
    """Register platforms: ``register.platform(bench.api.PlatformType(...))``.

    :param register: takes ``PlatformType`` objects only.
    """


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
