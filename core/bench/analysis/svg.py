"""Inline SVG line charts for the HTML report: no library, nothing fetched at view time.

A report is read offline, archived next to results, attached to CI runs; a page that
loads a charting library from a CDN shows nothing there. The charts are few and
simple (lines, markers, axes), so a small writer is enough.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def nice_ticks(low: float, high: float, count: int = 6, integer: bool = False) -> list[float]:
    """Round tick values covering [low, high]; integers only when the axis counts things."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1.0, math.ceil(step))
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def fmt_tick(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}".replace(",", "\u2009")
    return f"{value:.4g}"


@dataclass
class Line:
    xs: Sequence[float]
    ys: Sequence[float]
    label: str
    color: str
    dash: str | None = None
    markers: bool = False
    width: float = 1.5


@dataclass
class Chart:
    """One chart: lines, vertical rules and an optional note, axes from the data (y from 0)."""

    title: str
    x_label: str
    y_label: str
    width: int = 720
    height: int = 340
    integer_y: bool = False
    integer_x: bool = False
    x_from_zero: bool = False
    lines: list[Line] = field(default_factory=list)
    rules: list[tuple[float, str]] = field(default_factory=list)
    crosses: list[tuple[float, str, str]] = field(default_factory=list)

    def render(self) -> str:
        left, right, top, bottom = 70, 20, 30, 70
        xs = [x for line in self.lines for x in line.xs] + [r for r, _ in self.rules] + [c for c, _, _ in self.crosses]
        ys = [y for line in self.lines for y in line.ys]
        finite_x = [x for x in xs if math.isfinite(x)] or [0.0, 1.0]
        finite_y = [y for y in ys if math.isfinite(y)] or [0.0, 1.0]
        x_lo = 0.0 if self.x_from_zero else min(finite_x)
        x_ticks = nice_ticks(min(x_lo, min(finite_x)), max(finite_x), integer=self.integer_x)
        y_ticks = nice_ticks(min(0.0, min(finite_y)), max(finite_y), integer=self.integer_y)
        x0, x1, y0, y1 = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]
        pw, ph = self.width - left - right, self.height - top - bottom

        def px(x: float) -> float:
            return left + (x - x0) / (x1 - x0) * pw

        def py(y: float) -> float:
            return top + ph - (y - y0) / (y1 - y0) * ph

        out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{self.width}" height="{self.height}" '
               f'viewBox="0 0 {self.width} {self.height}" class="chart">',
               f"<title>{escape(self.title)}</title>",
               f'<text x="{left}" y="18" class="ctitle">{escape(self.title)}</text>']
        for t in y_ticks:
            out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" class="grid"/>')
            out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end" class="tick">{fmt_tick(t)}</text>')
        for t in x_ticks:
            out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{top}" y2="{top + ph}" class="grid"/>')
            out.append(f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle" class="tick">'
                       f"{fmt_tick(t)}</text>")
        out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>')
        out.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" text-anchor="middle" class="axis">'
                   f"{escape(self.x_label)}</text>")
        out.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle" class="axis">'
                   f"{escape(self.y_label)}</text>")
        for x, label in self.rules:
            out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{top + ph}" class="rule"/>')
            out.append(f'<text x="{px(x) + 3:.1f}" y="{top + 12}" class="tick">{escape(label)}</text>')
        for line in self.lines:
            points = [(px(x), py(y)) for x, y in zip(line.xs, line.ys, strict=True)
                      if math.isfinite(x) and math.isfinite(y)]
            if not points:
                continue
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in points)
            dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{line.color}" '
                       f'stroke-width="{line.width}"{dash}><title>{escape(line.label)}</title></polyline>')
            if line.markers:
                out.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{line.color}"/>' for a, b in points)
        for x, color, label in self.crosses:
            cx, cy = px(x), top + 8
            out.append(f'<path d="M{cx - 5:.1f},{cy - 5:.1f}L{cx + 5:.1f},{cy + 5:.1f}M{cx - 5:.1f},{cy + 5:.1f}'
                       f'L{cx + 5:.1f},{cy - 5:.1f}" stroke="{color}" stroke-width="2">'
                       f"<title>{escape(label)}</title></path>")
        legend_y = self.height - 14
        x = float(left)
        for line in self.lines:
            if not line.label:
                continue
            dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
            out.append(f'<line x1="{x:.0f}" x2="{x + 18:.0f}" y1="{legend_y - 4}" y2="{legend_y - 4}" '
                       f'stroke="{line.color}" stroke-width="2"{dash}/>')
            out.append(f'<text x="{x + 22:.0f}" y="{legend_y}" class="tick">{escape(line.label)}</text>')
            x += 30 + 6.2 * len(line.label)
        out.append("</svg>")
        return "\n".join(out)
