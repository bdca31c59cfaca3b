"""A grid's demand for people: the printed matrix, the cost function's one-dimensional
curve, the report's heat map and slice lines, and the comparison of two grids.

The cost function is the method's suggestion for benchmarking several dimensions at
once: an expression over the dimensions (``L1`` the first load value, ``L2`` the
second, e.g. ``L1*L2``) that maps every grid point to one load axis. If the demand
were a function of the cost alone, sorting the points by cost would give a
non-decreasing demand. How far the grid is from that is said two ways: the share of
points that lie on the best non-decreasing curve over the cost (points of equal cost
must share one demand), and Spearman's rank correlation of cost and demand. The
expression is evaluated by :func:`bench.slo_math.evaluate_expression`, the parser of
``thresholdFromExpression`` (L1 is its L, L2 its R), never by ``eval``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html import escape

from bench.analysis.compare import EXIT_REGRESSION, TableFile, compare_tables, format_comparison
from bench.analysis.svg import PALETTE, Chart, Line
from bench.errors import UserError
from bench.results.grid import GridTable, Point, grid_file, grid_id, read_grid
from bench.results.store import fmt_value
from bench.slo_math import evaluate_expression

# ------------------------------------------------------------------ the printed grid


def _cell(value: float | None, note: str) -> str:
    shown = "-" if value is None else fmt_value(value)
    return shown + ("*" if note == "inferred" else "?" if note == "undecided" else "")


def format_grid(grid: GridTable, exp_id: int | None = None) -> str:
    """The demand as a matrix: a row per value of the first dimension, a column per second."""
    head = f"demand (exp{exp_id}, grid)" if exp_id is not None else "demand (grid)"
    width = max(10, *(len(fmt_value(b)) + 2 for b in grid.loads2))
    corner = f"{grid.load_type} \\ {grid.load2_type}"
    lines = [f"\n{head}: {grid.resource_type or 'resources'} per point",
             f"  {corner:>24}" + "".join(f"{fmt_value(b):>{width}}" for b in grid.loads2)]
    for a in grid.loads:
        lines.append(f"  {fmt_value(a):>24}" + "".join(
            f"{_cell(grid.demand.get((a, b)), grid.notes.get((a, b), '')):>{width}}" for b in grid.loads2))
    points = len(grid.loads) * len(grid.loads2)
    lines.append(f"  {grid.experiments} experiment(s) for {points} point(s) x {len(grid.resources)} resource "
                 f"amount(s) = {grid.size}")
    if any(n == "inferred" for n in grid.notes.values()):
        lines.append("  *: inferred (bounded by a lighter and a heavier point of the same demand); no experiment "
                     "measured it")
    if any(n == "undecided" for n in grid.notes.values()):
        lines.append("  ?: undecided: an experiment that could change it ended in error")
    if any(v is None for v in grid.demand.values()):
        lines.append("  -: no resource amount passed")
    return "\n".join(lines)


# ------------------------------------------------------------------ the cost function


_VARIABLE = re.compile(r"\bL([12])\b")


def cost_of(expression: str, load: float, load2: float) -> float:
    """The expression's value at one point; one line naming ``--cost`` when it is not one."""
    stripped = _VARIABLE.sub("", expression)
    if re.search(r"[A-Za-z]", stripped):
        raise UserError(f"--cost: {expression!r}: the variables are L1 (first load value) and L2 (second) only")
    try:
        return evaluate_expression(_VARIABLE.sub(lambda m: "L" if m.group(1) == "1" else "R", expression),
                                   load=load, resources=load2)
    except (ValueError, ArithmeticError) as exc:
        raise UserError(f"--cost: {expression!r}: {str(exc).split(': ', 2)[-1]}") from None


def check_cost(expression: str) -> None:
    """Refuse a wrong expression before a run starts (evaluated at L1 = L2 = 1)."""
    cost_of(expression, 1.0, 1.0)


@dataclass
class Collapse:
    expression: str
    #: cost -> the demand of the best non-decreasing curve (None: beyond every amount)
    curve: dict[float, float | None] = field(default_factory=dict)
    #: cost -> the points at that cost whose demand is off the curve
    off: dict[float, list[Point]] = field(default_factory=dict)
    on_curve: int = 0
    points: int = 0
    spearman: float | None = None

    @property
    def share(self) -> float:
        return self.on_curve / self.points if self.points else 0.0


def collapse(grid: GridTable, expression: str) -> Collapse:
    """The one-dimensional demand curve over the cost, and how well the grid lies on it."""
    n = len(grid.resources)
    level = {r: i for i, r in enumerate(grid.resources)}
    groups: dict[float, list[tuple[Point, int]]] = {}
    for (a, b), value in grid.demand.items():
        c = cost_of(expression, a, b)
        if not math.isfinite(c):
            raise UserError(f"--cost: {expression!r} is not finite at L1={fmt_value(a)}, L2={fmt_value(b)}")
        groups.setdefault(c, []).append(((a, b), n if value is None else level.get(value, n)))
    costs = sorted(groups)
    # best[k]: most points on a non-decreasing curve over the costs so far ending at level k
    best = [0] * (n + 1)
    choice: list[list[int]] = []
    for c in costs:
        counts = [sum(1 for _, lv in groups[c] if lv == k) for k in range(n + 1)]
        running, step, picks = -1, [0] * (n + 1), [0] * (n + 1)
        prefix_at = 0
        for k in range(n + 1):
            if best[k] > running:
                running, prefix_at = best[k], k
            step[k], picks[k] = running + counts[k], prefix_at
        best = step
        choice.append(picks)
    end = max(range(n + 1), key=lambda k: best[k])
    result = Collapse(expression, on_curve=best[end], points=len(grid.demand))
    k = end
    for index in range(len(costs) - 1, -1, -1):
        c = costs[index]
        result.curve[c] = grid.resources[k] if k < n else None
        off = [p for p, lv in groups[c] if lv != k]
        if off:
            result.off[c] = off
        k = choice[index][k]
    result.curve = dict(sorted(result.curve.items()))
    pairs = [(c, lv) for c in costs for _, lv in groups[c]]
    result.spearman = _spearman([c for c, _ in pairs], [float(lv) for _, lv in pairs])
    return result


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    """Rank correlation with ties averaged; None when either side is constant."""
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sx = math.sqrt(sum((x - mx) ** 2 for x in rx))
    sy = math.sqrt(sum((y - my) ** 2 for y in ry))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(rx, ry, strict=True)) / (sx * sy)


def format_collapse(result: Collapse) -> str:
    lines = [f"\ndemand over the cost {result.expression} (L1, L2: the two load values):",
             f"  {'cost':>14}  {'resources':>10}"]
    for c, value in result.curve.items():
        off = result.off.get(c, [])
        note = ("  off the curve: " + ", ".join(f"({fmt_value(a)}, {fmt_value(b)})" for a, b in off)) if off else ""
        lines.append(f"  {fmt_value(c):>14}  {'-' if value is None else fmt_value(value):>10}{note}")
    rho = "n/a (one side constant)" if result.spearman is None else f"{result.spearman:.3f}"
    lines.append(f"  {result.on_curve} of {result.points} points ({result.share:.0%}) lie on one non-decreasing "
                 f"demand curve over the cost; Spearman's rank correlation of cost and demand: {rho}")
    return "\n".join(lines)


# ------------------------------------------------------------------ the report


def _color(value: float | None, lo: float, hi: float) -> str:
    """Light to dark blue by demand; grey for no passing amount."""
    if value is None:
        return "#bbbbbb"
    t = 0.0 if hi <= lo else (value - lo) / (hi - lo)
    r, g, b = (int(235 - t * (235 - 31)), int(243 - t * (243 - 78)), int(255 - t * (255 - 160)))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map(grid: GridTable, title: str) -> str:
    """One cell per point, its demand written in it; rows: the first dimension, columns: the second."""
    cell_w, cell_h, left, top = 70, 28, 110, 50
    width = left + cell_w * len(grid.loads2) + 20
    height = top + cell_h * len(grid.loads) + 50
    values = [v for v in grid.demand.values() if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" class="chart">', f"<title>{escape(title)}</title>",
           f'<text x="10" y="18" class="ctitle">{escape(title)}</text>',
           f'<text x="{left}" y="{top - 22}" class="axis">{escape(grid.load2_type)} \u2192</text>',
           f'<text x="10" y="{top - 6}" class="axis">{escape(grid.load_type)} \u2193</text>']
    for j, b in enumerate(grid.loads2):
        out.append(f'<text x="{left + j * cell_w + cell_w / 2}" y="{top - 6}" text-anchor="middle" '
                   f'class="tick">{escape(fmt_value(b))}</text>')
    for i, a in enumerate(grid.loads):
        y = top + i * cell_h
        out.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4}" text-anchor="end" class="tick">'
                   f"{escape(fmt_value(a))}</text>")
        for j, b in enumerate(grid.loads2):
            value, note = grid.demand.get((a, b)), grid.notes.get((a, b), "")
            x = left + j * cell_w
            dark = value is not None and hi > lo and (value - lo) / (hi - lo) > 0.5
            label = _cell(value, note)
            out.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" '
                       f'fill="{_color(value, lo, hi)}"><title>{escape(grid.load_type)}={escape(fmt_value(a))}, '
                       f"{escape(grid.load2_type)}={escape(fmt_value(b))}: {escape(label)}"
                       f"{' ' + note if note else ''}</title></rect>")
            out.append(f'<text x="{x + cell_w / 2 - 1}" y="{y + cell_h / 2 + 4}" text-anchor="middle" '
                       f'class="tick" fill="{"#ffffff" if dark else "#000000"}">{escape(label)}</text>')
    out.append(f'<text x="10" y="{height - 12}" class="tick">demand per point (*: inferred, ?: undecided, '
               "-: no amount passed)</text>")
    out.append("</svg>")
    return "\n".join(out)


def slice_lines(grid: GridTable, title: str) -> str:
    """The demand over the first dimension, one line per value of the second."""
    chart = Chart(title, grid.load_type, f"demand ({grid.resource_type or 'resources'})", integer_y=True)
    for j, b in enumerate(grid.loads2):
        xs = [a for a in grid.loads if grid.demand.get((a, b)) is not None]
        ys = [float(grid.demand[(a, b)] or 0.0) for a in xs]
        chart.lines.append(Line(xs, ys, f"{grid.load2_type}={fmt_value(b)}", PALETTE[j % len(PALETTE)],
                                markers=True))
    return chart.render()


def report_section(grid: GridTable, exp_id: int) -> str:
    """The report's part for one grid: heat map, slice lines, and where the slices' runs are."""
    slices = ", ".join(f"{escape(grid.load2_type)}={escape(fmt_value(v))}: exp{i}"
                       for v, i in sorted(grid.slices.items()))
    return "\n".join([
        f"<h2>grid exp{exp_id}: {escape(grid.load_type)} x {escape(grid.load2_type)}</h2>",
        f'<p class="note">{grid.experiments} experiment(s) for {len(grid.demand)} point(s) x '
        f"{len(grid.resources)} resource amount(s) = {grid.size}; each slice is a run of its own "
        f"({slices}).</p>",
        heat_map(grid, f"demand per point, exp{exp_id}"),
        slice_lines(grid, f"demand per slice, exp{exp_id}"),
    ])


# ------------------------------------------------------------------ comparison


def compare_grids(old: GridTable, new: GridTable, old_name: str, new_name: str) -> tuple[int, str]:
    """Point by point, as :func:`bench.analysis.compare.compare_tables` does per slice:
    the exit code (3: the demand rose at some point) and the text."""
    if (old.load_type, old.load2_type) != (new.load_type, new.load2_type):
        raise UserError(f"cannot compare a grid of {old.load_type} x {old.load2_type} with one of "
                        f"{new.load_type} x {new.load2_type}")
    regressed = False
    parts = []
    for b in sorted(set(old.loads2) | set(new.loads2)):
        label = f"{old.load2_type}={fmt_value(b)}"
        if b not in new.loads2 or b not in old.loads2:
            parts.append(f"{label}: only in {'old' if b in old.loads2 else 'new'}")
            continue
        comparison = compare_tables(TableFile("demand", *old.slice(b)), TableFile("demand", *new.slice(b)))
        regressed = regressed or comparison.regressed
        text = format_comparison(comparison, old_name, new_name).splitlines()
        parts.append(f"{label}: " + text[0] + "\n" + "\n".join(text[1:-1]))
    parts.append("result: REGRESSION" if regressed else "result: no regression")
    return (EXIT_REGRESSION if regressed else 0), "\n".join(parts)


def expect_grid(expected: GridTable, grid: GridTable, name: str) -> tuple[int, str]:
    """``bench run --expect OLD`` for a grid run: OLD must be a grid too."""
    return compare_grids(expected, grid, name, "this run")


def compare_sources(old: str, new: str) -> tuple[int, str] | None:
    """``bench compare`` of two grids (folders whose newest run is a grid, FOLDER:ID, or
    ``exp<id>_grid.json``); None when neither is a grid (the tables' comparison applies)."""
    a, b = grid_file(old), grid_file(new)
    if a is None and b is None:
        return None
    if a is None or b is None:
        raise UserError(f"{old if a is None else new}: not a grid; a grid is compared with a grid")
    return compare_grids(read_grid(a), read_grid(b), old, new)


def analyze_grid(source: str) -> tuple[str, list[int]] | None:
    """``bench analyze`` of a grid: the stored grid as text and its slices' ids (each is
    analysed as the run it is); None when ``source`` holds no grid."""
    found = grid_file(source)
    if found is None:
        return None
    grid = read_grid(found)
    return format_grid(grid, grid_id(found)), [i for _, i in sorted(grid.slices.items())]


def grids_in(sources: list[str]) -> tuple[list[str], list[tuple[int, GridTable]]]:
    """``bench report``'s sources with every grid replaced by its slices' runs, and the grids."""
    runs: list[str] = []
    grids: list[tuple[int, GridTable]] = []
    for source in sources:
        found = grid_file(source)
        if found is None:
            runs.append(source)
            continue
        grid = read_grid(found)
        grids.append((grid_id(found), grid))
        runs.extend(f"{found.parent}:{i}" for _, i in sorted(grid.slices.items()))
    return runs, grids
