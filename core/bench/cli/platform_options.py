"""``bench run``'s platform options, generated from what the platforms declare
(:class:`bench.api.PlatformOption`): a plugin's platform gets its options on the
command line like a built-in one, and no option is written twice. Values arrive as
typed (numbers as numbers) and are checked by the chosen platform's declaration
(:func:`bench.platforms.contract.platform_options`), which names the platform.
"""

from __future__ import annotations

from typing import Any

import click

from bench.api import PlatformOption
from bench.plugins import Registry

#: click's type for a declared option type (dict and bool are shaped by the option itself)
_TYPES: dict[type, Any] = {int: click.INT, float: click.FLOAT, str: click.STRING}


def declared_options(registry: Registry) -> dict[str, tuple[PlatformOption, list[str]]]:
    """flag -> (its first declaration, the platforms that read it), in registration order."""
    found: dict[str, tuple[PlatformOption, list[str]]] = {}
    for ptype in registry.platforms.values():
        for opt in ptype.options:
            if opt.flag:
                found.setdefault(opt.flag, (opt, []))[1].append(ptype.name)
    return found


def _help(opt: PlatformOption, platforms: list[str]) -> str:
    return f"{opt.help} [--platform {', '.join(platforms)}]"


def _metavar(opt: PlatformOption) -> str:
    if opt.choices:
        return "[" + "|".join(map(str, opt.choices)) + "]"
    return {int: "N", float: "X"}.get(opt.type, "TEXT")


def platform_params(registry: Registry) -> list[click.Option]:
    """One click option per declared flag, named by the option's key (``opts[name]``).
    Not given: None (bool: neither --x nor --no-x), so the platform's default applies."""
    params = []
    for flag, (opt, platforms) in declared_options(registry).items():
        if opt.type is bool:
            params.append(click.Option([f"{flag}/--no-{flag.removeprefix('--')}", opt.name], default=None,
                                       help=_help(opt, platforms)))
        elif opt.type is dict:
            params.append(click.Option([flag, opt.name], multiple=True, metavar="KEY=VALUE",
                                       help=_help(opt, platforms) + " (repeatable)"))
        else:
            params.append(click.Option([flag, opt.name], type=_TYPES.get(opt.type, click.STRING),
                                       metavar=_metavar(opt), help=_help(opt, platforms)))
    return params
