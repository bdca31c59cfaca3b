"""Choosing the search strategy: by ``--search``, an execution file, ``--no-lower-bound``
and ``--predict``. Every rule asks the strategy what it declares
(:class:`bench.api.SearchStrategy`), never its name, so a plugin's strategy is chosen
and refused the same way as a built-in one; every refusal is one line that names the
option and the strategies that would do.
"""

from __future__ import annotations

from typing import Any

from bench.api import SearchStrategy
from bench.config.base import ConfigError, StrategyDef
from bench.plugins import Registry


def strategy_named(registry: Registry, name: str, where: str = "--search") -> SearchStrategy:
    """The registered strategy ``name``; one line naming the known ones when there is none."""
    if name not in registry.search_strategies:
        raise ConfigError(f"{where}: {name!r} is not one of {', '.join(sorted(registry.search_strategies))}"
                          f"{registry.excluded_note()}")
    return registry.search_strategies[name]


def _those(registry: Registry, fits: Any) -> str:
    return ", ".join(n for n, s in registry.search_strategies.items() if fits(s)) or "none"


def check_no_lower_bound(registry: Registry, strategy: dict[str, Any]) -> None:
    """``--no-lower-bound`` with a strategy that rests on it (the default search) is
    refused rather than run as another search than the one the run would name."""
    try:
        name = StrategyDef.model_validate(strategy).resolved()[0]
    except ValueError:
        return  # malformed: the execution's own validation names the field
    chosen = registry.search_strategies.get(name)
    if chosen is not None and chosen.needs_lower_bound:
        raise ConfigError(f"--no-lower-bound: the search {name!r} rests on the lower bound; add --search with one "
                          f"that does not ({_those(registry, lambda s: not s.needs_lower_bound)}) to search "
                          "without it")


def check_predict(registry: Registry, predict: bool, strategy: SearchStrategy) -> None:
    """``--predict`` starts the strategy's walk from the prediction; a strategy that
    declares no such walk would silently not use it, so it is refused."""
    if predict and strategy.from_prediction is None:
        what = ("measures every (load, resources) pair, which a prediction cannot shorten"
                if strategy.measures_every_pair else "cannot start from a prediction")
        raise ConfigError(f"--predict: the search strategy {strategy.name!r} {what}; drop --predict or use --search "
                          f"{' or '.join(n for n, s in registry.search_strategies.items() if s.from_prediction)}")
