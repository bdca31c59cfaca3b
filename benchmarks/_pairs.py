"""Paired comparisons of two sides whose runs alternate in order: the ratio with the
order cancelled, its confidence interval, and what that interval says of a goal.

Why a module of its own: the observer-effect script judges a 2 % goal with pairs that
spread by several percent, and these figures are what decides whether its
ratio is a finding or noise; they are tested apart from the script's Spark runs.
"""

from __future__ import annotations

import math
import statistics

#: the confidence of :func:`balanced_interval`, and of what :func:`against_goal` says
CONFIDENCE = 0.95


def by_order(ratios: list[tuple[float, bool]]) -> tuple[list[float], list[float]]:
    """The log ratios of the pairs whose instrumented side ran first, and of the others."""
    logs = [(math.log(r), inst_first) for r, inst_first in ratios if r > 0]
    return [x for x, first in logs if first], [x for x, first in logs if not first]


def order_balanced(ratios: list[tuple[float, bool]]) -> tuple[float, float] | None:
    """The instrumented / bare ratio with the order of each pair's runs cancelled, and the
    order's own effect: (ratio, how much more the first run of a pair read than the
    second, whichever side ran first); None without pairs in both orders.

    Why: the first run of a pair has read 3-28 % more than the second, in
    either order (UC1-UC3), so the median of three pairs, two of them in one
    order, measured the order. The geometric mean over the two orders' mean log ratios
    cancels an effect of the order that multiplies either side alike."""
    first, second = by_order(ratios)
    if not first or not second:
        return None
    a, b = statistics.fmean(first), statistics.fmean(second)
    return math.exp((a + b) / 2), math.exp((a - b) / 2)


def balanced_interval(ratios: list[tuple[float, bool]]) -> tuple[float, float] | None:
    """The confidence interval of :func:`order_balanced`'s ratio; None with fewer than three
    pairs or pairs in one order only.

    Why: two identical sides (an A/A run) differed by up to 6.5 % in one pair,
    so a ratio of four pairs printed alone read as a finding it was not. Each pair's log
    ratio is the effect plus or minus the order's, plus noise; the noise is pooled around
    each order's mean (n - 2 degrees of freedom) and the interval is Student's t."""
    from bench.slo.early_rules import t_quantile

    groups = by_order(ratios)
    n = len(groups[0]) + len(groups[1])
    if not all(groups) or n < 3:
        return None
    means = [statistics.fmean(g) for g in groups]
    pooled = sum((x - m) ** 2 for g, m in zip(groups, means, strict=True) for x in g) / (n - 2)
    error = math.sqrt(pooled * (1 / len(groups[0]) + 1 / len(groups[1]))) / 2
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 2) * error
    centre = (means[0] + means[1]) / 2
    return math.exp(centre - half), math.exp(centre + half)


def against_goal(interval: tuple[float, float] | None, goal: float | None) -> str:
    """What the pairs say of the goal: met, missed, or not told apart at this many pairs;
    with no goal (an A/A run), how far from 1 a ratio must be for these pairs to see it."""
    if interval is None:
        return "no interval (three pairs, in both orders, are the fewest)"
    low, high = interval
    if goal is None and not low <= 1.0 <= high:
        return (f"{CONFIDENCE * 100:g} % interval [{low:.3f}, {high:.3f}]: 1 lies outside it, so the two sides "
                "differ (in an A/A run: a bias of the comparison itself)")
    if goal is None:
        return (f"{CONFIDENCE * 100:g} % interval [{low:.3f}, {high:.3f}]: an effect smaller than "
                f"{max(high - 1, 1 - low):.1%} is not seen by this many pairs")
    verdict = ("met" if low >= goal else "missed" if high < goal
               else f"not told apart from {goal:g} by these pairs (more --pairs narrow it)")
    return f"{CONFIDENCE * 100:g} % interval [{low:.3f}, {high:.3f}] against the goal of {goal:g}: {verdict}"
