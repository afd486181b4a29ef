"""Inline SVG for the web pages: the per-GPU memory bar and the performance chart.

Plain markup (no script, no inline style): colours come from classes in
``site.css`` so both themes apply and the CSP needs no ``unsafe-inline``.
Every text is escaped here, since the templates insert the SVG as markup.
Each figure carries a ``<title>`` and a ``<desc>`` and visible text labels.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

_MEM_SEGMENTS: tuple[tuple[str, str, str], ...] = (
    ("weights", "weights_gib", "seg-weights"),
    ("activations", "activation_peak_gib", "seg-act"),
    ("non-torch", "non_torch_gib", "seg-nontorch"),
    ("CUDA graphs", "cuda_graph_gib", "seg-graphs"),
    ("KV cache", "kv_cache_gib", "seg-kv"),
)


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def memory_bar(breakdown: Mapping[str, Any], *, gpu: str, role: str, uid: str) -> str:
    """One GPU's memory as a stacked horizontal bar with a text legend (GiB)."""
    total = max(_num(breakdown.get("gpu_memory_gib")), 1e-9)
    parts = [(label, max(0.0, _num(breakdown.get(key))), cls) for label, key, cls in _MEM_SEGMENTS]
    used = sum(g for _, g, _ in parts)
    parts.append(("free", max(0.0, total - used), "seg-free"))
    width, bar_h, x0 = 640.0, 28.0, 0.0
    title = f"Memory of one {gpu} GPU ({role}): {total:.1f} GiB"
    desc = "; ".join(f"{label} {g:.2f} GiB" for label, g, _ in parts)
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="membar" viewBox="0 0 {width:g} 96" width="{width:g}" '
            f'height="96" role="img" aria-labelledby="{_e(uid)}-t {_e(uid)}-d">'),
           f'<title id="{_e(uid)}-t">{_e(title)}</title>', f'<desc id="{_e(uid)}-d">{_e(desc)}</desc>']
    x = x0
    for label, gib, cls in parts:
        w = width * min(gib, total) / total
        if w <= 0:
            continue
        w = min(w, width - x)
        out.append(f'<rect class="{cls}" x="{x:.2f}" y="4" width="{w:.2f}" height="{bar_h:g}">'
                   f'<title>{_e(label)}: {gib:.2f} GiB</title></rect>')
        x += w
    out.append(f'<rect class="seg-frame" x="0.5" y="4.5" width="{width - 1:g}" height="{bar_h - 1:g}" fill="none"/>')
    # legend: two rows of three, swatch + text
    for i, (label, gib, cls) in enumerate(parts):
        lx, ly = (i % 3) * 213.0, 52.0 + (i // 3) * 22.0
        out.append(f'<rect class="{cls}" x="{lx:g}" y="{ly - 10:g}" width="12" height="12"/>')
        out.append(f'<text class="lbl" x="{lx + 17:g}" y="{ly:g}">{_e(label)} {gib:.1f} GiB</text>')
    out.append("</svg>")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Series:
    """One configuration's points (x, y); ``links``: each point's source URL (same order, may be shorter);
    ``predicted``: drawn dashed with hollow markers, never to be mistaken for a measurement; ``measured``
    (launchcard bench's own runs): square markers, kept apart from published and predicted points."""

    label: str
    points: tuple[tuple[float, float], ...]
    links: tuple[str | None, ...] = ()
    predicted: bool = False
    measured: bool = False
    colour: int | None = None  # the colour's index (default: the series' position); a pair shares one


_LEGEND_CHARS = 88
_LEGEND_LINE = 15.0


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    out = [round(start, 10)]
    while out[-1] < hi:  # the last tick is at or above the highest value, so nothing is drawn off the plot
        out.append(round(out[-1] + step, 10))
    return out


def perf_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str, uid: str,
               x_log: bool = True, point: str = "concurrency {x:g}, {y:,.0f} tok/s/GPU") -> str | None:
    """Lines of y against log2(x) (``x_log``) or x, one per series, with axes, ticks, axis labels and a legend;
    ``point`` words each point's tooltip."""
    series = [s for s in series if s.points]
    if not series:
        return None
    xs = [x for s in series for x, _ in s.points if x > 0]
    ys = [y for s in series for _, y in s.points]
    if not xs:
        return None
    if x_log:
        lx_lo, lx_hi = math.log2(min(xs)), math.log2(max(xs))
        if lx_hi - lx_lo < 1:
            lx_lo, lx_hi = lx_lo - 0.5, lx_hi + 0.5
    else:
        x_ticks_lin = _ticks(0.0, max(xs) * 1.05 or 1.0)
        lx_lo, lx_hi = 0.0, x_ticks_lin[-1] or 1.0
    y_ticks = _ticks(0.0, max(ys) * 1.05 or 1.0)
    y_hi = y_ticks[-1] or 1.0
    left, right, top, plot_h = 64.0, 16.0, 28.0, 260.0
    plot_w = 760.0 - left - right
    # a legend label longer than the chart is wide wraps onto further lines (12px text: about 88 characters fit
    # the 662px beside the swatch), so its end, "(predicted)" included, is drawn inside the chart
    legends = [textwrap.wrap(s.label, _LEGEND_CHARS) or [""] for s in series]
    legend_y = [top + plot_h + 56 + sum(18 + _LEGEND_LINE * (len(w) - 1) for w in legends[:i])
                for i in range(len(series))]
    height = top + plot_h + 48 + sum(18 + _LEGEND_LINE * (len(w) - 1) for w in legends)

    def px(x: float) -> float:
        return left + plot_w * ((math.log2(x) if x_log else x) - lx_lo) / (lx_hi - lx_lo)

    def py(y: float) -> float:
        return top + plot_h - plot_h * y / y_hi

    desc = "; ".join(f"{s.label}: " + ", ".join(f"{x:g} -> {y:g}" for x, y in s.points) for s in series)
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 760 {height:g}" width="760" '
            f'height="{height:g}" role="img" aria-labelledby="{_e(uid)}-t {_e(uid)}-d">'),
           f'<title id="{_e(uid)}-t">{_e(title)}</title>', f'<desc id="{_e(uid)}-d">{_e(desc)}</desc>',
           f'<text class="lbl title" x="{left:g}" y="16">{_e(title)}</text>']
    for t in y_ticks:
        y = py(t)
        out.append(f'<line class="grid" x1="{left:g}" x2="{left + plot_w:g}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="lbl tick" x="{left - 6:g}" y="{y + 4:.1f}" text-anchor="end">{t:,.0f}</text>')
    x_ticks = sorted(set(xs)) if x_log else x_ticks_lin
    for x in x_ticks:
        xp = px(x)
        out.append(f'<line class="axis" x1="{xp:.1f}" x2="{xp:.1f}" y1="{top + plot_h:g}" y2="{top + plot_h + 5:g}"/>')
        out.append(f'<text class="lbl tick" x="{xp:.1f}" y="{top + plot_h + 18:g}" text-anchor="middle">{x:,.0f}</text>'
                   if not x_log else
                   f'<text class="lbl tick" x="{xp:.1f}" y="{top + plot_h + 18:g}" text-anchor="middle">{x:g}</text>')
    out.append(f'<line class="axis" x1="{left:g}" x2="{left + plot_w:g}" y1="{top + plot_h:g}" y2="{top + plot_h:g}"/>')
    out.append(f'<line class="axis" x1="{left:g}" x2="{left:g}" y1="{top:g}" y2="{top + plot_h:g}"/>')
    out.append(f'<text class="lbl" x="{left + plot_w / 2:g}" y="{top + plot_h + 36:g}" '
               f'text-anchor="middle">{_e(x_label)}</text>')
    out.append(f'<text class="lbl" transform="translate(14 {top + plot_h / 2:g}) rotate(-90)" '
               f'text-anchor="middle">{_e(y_label)}</text>')
    for i, s in enumerate(series):
        cls = (f"s{(i if s.colour is None else s.colour) % 8}" + (" predicted" if s.predicted else "")
               + (" measured" if s.measured else ""))
        order = sorted(range(len(s.points)), key=lambda k: s.points[k])
        pts = [s.points[k] for k in order]
        links = [s.links[k] if k < len(s.links) else None for k in order]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts if x > 0)
        out.append(f'<g class="series {cls}"><title>{_e(s.label)}</title>')
        if len(pts) > 1:
            out.append(f'<polyline fill="none" points="{path}"/>')
        for (x, y), link in zip(pts, links, strict=True):
            if x > 0:
                tip = f'<title>{_e(s.label)}: {_e(point.format(x=x, y=y))}</title>'
                dot = (f'<rect x="{px(x) - 4:.1f}" y="{py(y) - 4:.1f}" width="8" height="8">{tip}</rect>'
                       if s.measured else f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5">{tip}</circle>')
                # a source on the web, or (measured runs) the run's row on this page
                href = link if link and (link.startswith("https://") or link.startswith("#")) else None
                out.append(f'<a href="{_e(href)}">{dot}</a>' if href else dot)
        ly = legend_y[i]
        marker = (f'<rect x="{left + 7:g}" y="{ly - 8:g}" width="8" height="8"/>' if s.measured else
                  f'<circle cx="{left + 11:g}" cy="{ly - 4:g}" r="3.5"/>')
        out.append(f'<line x1="{left:g}" x2="{left + 22:g}" y1="{ly - 4:g}" y2="{ly - 4:g}"/>{marker}')
        lines = " ".join(f'<tspan x="{left + 30:g}" dy="{0 if k == 0 else _LEGEND_LINE:g}">{_e(line)}</tspan>'
                         for k, line in enumerate(legends[i]))  # the space keeps the label's words apart as text
        out.append(f'<text class="lbl" x="{left + 30:g}" y="{ly:g}">{lines}</text></g>')
    out.append("</svg>")
    return "".join(out)
