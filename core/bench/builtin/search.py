"""Built-in search strategies, registered through the same hook as any plugin."""

from __future__ import annotations

from bench.api import Registrar, SearchStrategy
from bench.hookspecs import hookimpl
from bench.search import bracket as search_bracket
from bench.search.strategies import STRATEGIES


@hookimpl
def bench_register_search_strategies(register: Registrar) -> None:
    for strategy in STRATEGIES:
        register(strategy)
    register(SearchStrategy(search_bracket.NAME, search_bracket.DESCRIPTION, search_bracket.bracket,
                            needs_lower_bound=True, from_prediction=search_bracket.bracket))
