"""A small self-contained SVG line-chart renderer (Python standard library
only): stacked panels sharing one time axis, one polyline per series
segment, and vertical event marks across every panel.

Used by the soak (scripts/soak/soak.py) instead of gnuplot or matplotlib so
that the soak adds no package to scripts/setup.sh and its plot renders the
same everywhere. Not thread-safe (pure functions over its arguments).
"""
import html
import math


def nice_ticks(lo, hi, n=5):
    """About n round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def fmt(v):
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def render(path, title, panels, events, x_max, x_label="minutes",
           legend=(), width=960, panel_height=170):
    """Writes the chart to `path`.

    panels: [(panel title, [(color, [[(x, y), ...], ...]), ...]), ...]:
      each series is a color and its segments (a gap between segments,
      e.g. a restart, is not joined).
    events: [(x, color, dashed)]: a vertical line across every panel.
    legend: [(label, color, kind)], kind "line", "solid" or "dashed".
    """
    left, right, top, gap = 64, 16, 56, 34
    plot_w = width - left - right
    height = top + len(panels) * (panel_height + gap) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="#fff"/>',
           f'<text x="{left}" y="18" font-size="14" font-weight="bold">'
           f'{html.escape(title)}</text>']
    # Legend row.
    x = left
    for label, color, kind in legend:
        if kind == "line":
            out.append(f'<line x1="{x}" y1="34" x2="{x + 18}" y2="34" '
                       f'stroke="{color}" stroke-width="2"/>')
        else:
            dash = ' stroke-dasharray="3,2"' if kind == "dashed" else ""
            out.append(f'<line x1="{x + 9}" y1="27" x2="{x + 9}" y2="41" '
                       f'stroke="{color}"{dash}/>')
        out.append(f'<text x="{x + 22}" y="38">{html.escape(label)}</text>')
        x += 30 + 6.5 * len(label)

    def sx(v):
        return left + plot_w * v / x_max

    for i, (ptitle, series) in enumerate(panels):
        y0 = top + i * (panel_height + gap) + 14
        ys = [p[1] for _, segs in series for seg in segs for p in seg]
        lo = 0.0
        hi = max(ys) * 1.08 if ys and max(ys) > 0 else 1.0
        ticks = nice_ticks(lo, hi)
        hi = max(hi, ticks[-1])

        def sy(v, y0=y0, hi=hi):
            return y0 + panel_height - panel_height * (v - lo) / (hi - lo)

        out.append(f'<text x="{left}" y="{y0 - 4}" font-weight="bold">'
                   f'{html.escape(ptitle)}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" '
                   f'height="{panel_height}" fill="none" stroke="#999"/>')
        for t in ticks:
            y = sy(t)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" '
                       f'y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" '
                       f'text-anchor="end">{fmt(t)}</text>')
        for color, segs in series:
            for seg in segs:
                if not seg:
                    continue
                # Whole pixels: the chart is 960 px wide; halves the file.
                pts = " ".join(f"{sx(px):.0f},{sy(py):.0f}" for px, py in seg)
                out.append(f'<polyline fill="none" stroke="{color}" '
                           f'stroke-width="1.4" points="{pts}"/>')
        # Time axis under each panel.
        for t in nice_ticks(0, x_max, 10):
            if t > x_max:
                continue
            out.append(f'<text x="{sx(t):.1f}" y="{y0 + panel_height + 13}" '
                       f'text-anchor="middle">{fmt(t)}</text>')
    # Events: one line through every panel each.
    y_top = top + 14
    y_bottom = top + (len(panels) - 1) * (panel_height + gap) + 14 + \
        panel_height
    out.append('<g stroke-opacity="0.6">')
    for ex, color, dashed in events:
        dash = ' stroke-dasharray="3,2"' if dashed else ""
        out.append(f'<line x1="{sx(ex):.0f}" y1="{y_top}" x2="{sx(ex):.0f}" '
                   f'y2="{y_bottom}" stroke="{color}"{dash}/>')
    out.append('</g>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" '
               f'text-anchor="middle">{html.escape(x_label)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
