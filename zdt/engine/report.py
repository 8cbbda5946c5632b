"""One self-contained HTML page that shows what an encoding did to the data
(``zdt compare --html FILE``, ``zdt convert --report FILE``; docs/compare.md shows one).

Per array: compare's figures and checks, then one picture: the source, the decoded copy and
their difference on a representative slice (the middle one of those compare read; a window
of a 1-d array), drawn on the slice's coordinates with north up (index axes and a note when
it has none), the difference on a diverging colour map centred on zero whose ends are the
bound (when one is known), a histogram of the errors against the bound, the radially averaged
power spectra of source and copy, and for a conversion the bytes and largest error of every
encoding measured (the decision's rate-distortion picture). An array whose copy is identical
gets one line instead. Images are PNG inline (data: URLs): the page needs no network and no
other file. Drawn with matplotlib (the optional extra zdt[report]), without pyplot's global
state.
"""

from __future__ import annotations

import base64
import html
import io
import math
from datetime import datetime, timezone
from typing import Any

import numpy as np

from zdt.errors import MissingPackage

FIGURE_ROWS = [
    ("max_abs_error", "max abs error"), ("max_rel_error", "max rel error"),
    ("mean_abs_error", "mean abs error"), ("rmse", "rmse"), ("bias", "bias (mean of decoded - source)"),
    ("psnr", "PSNR (dB)"), ("r2", "R\u00b2 (1 - SSE/SST)"), ("dssim", "DSSIM"),
    ("spectral_error", "spectral error"), ("rel_error_share", "share above rel error 1e-4"),
]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 36px; border-top: 1px solid #ccc; padding-top: 12px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #176317; font-weight: 600; } .fail { color: #b00020; font-weight: 600; } .none { color: #777; }
img { max-width: 100%; height: auto; display: block; margin: 8px 0; }
.tables { display: flex; gap: 40px; align-items: flex-start; flex-wrap: wrap; }
"""


def require_matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise MissingPackage("the report is drawn with matplotlib, which is not installed: "
                             "pip install 'zdt[report]'") from None
    return matplotlib


def fmt(v: Any) -> str:
    if v is None:
        return "\u2013"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.6g}"
    return str(v)


def identical(figures: dict) -> bool:
    """Whether compare found the copy equal to the source: no value differs (and the specials,
    which compare matches by position, are where they were)."""
    return figures["max_abs_error"] in (0.0, None)


def _verdict(passed: bool | None) -> str:
    cls, text = {True: ("pass", "pass"), False: ("fail", "FAIL"), None: ("none", "not decided")}[passed]
    return f'<span class="{cls}">{text}</span>'


def _checks_html(checks: dict) -> str:
    b, s, r = checks["bound"], checks["rel_error_share"], checks["r2"]
    rows = [
        ("pointwise bound" + (f" {html.escape(b['bound'])}, largest error {fmt(b['largest_error'])}"
                              if b["bound"] else " (no bound given)"), b["passed"]),
        (f"fewer than {100 * s['most']:g}% of points above relative error {s['threshold']:g} "
         f"({fmt(None if s['value'] is None else 100 * s['value'])}%)", s["passed"]),
        (f"R\u00b2 above {r['least']} ({fmt(r['value'])})", r["passed"]),
    ]
    return "".join(f"<tr><td>{text}</td><td>{_verdict(p)}</td></tr>" for text, p in rows)


def _figures_html(name: str, f: dict) -> str:
    cells = "".join(
        f'<tr><th>{label}</th><td class="num" data-key="{key}" data-value="{html.escape(repr(f[key]))}">'
        f"{fmt(f[key])}</td></tr>" for key, label in FIGURE_ROWS)
    return (f'<div class="tables"><table class="figures" data-array="{html.escape(name)}">{cells}</table>'
            f'<table class="checks">{_checks_html(f["checks"])}</table></div>')


def tick_labels(values: Any) -> list[str]:
    """Labels for ticks at `values`, all with the same number of decimals (or of a mantissa's
    decimals, for magnitudes below 1e-4 or from 1e6 up): the fewest that keep the labels of
    distinct ticks distinct and each label within a millionth of the ticks' spacing of its
    tick, so 0.00025 reads 0.00025 (not 0.0002) and no offset is needed."""
    v = [0.0 if x == 0 else float(x) for x in values]
    finite = sorted({x for x in v if math.isfinite(x)})
    if not finite:
        return [fmt(x) for x in v]
    top = max(abs(x) for x in finite)
    gaps = np.diff(finite)
    tol = 1e-6 * float(gaps.min()) if gaps.size else 1e-9 * top
    pattern = "{:.%de}" if top and (top < 1e-4 or top >= 1e6) else "{:.%df}"
    for digits in range(26):
        labels = [(pattern % digits).format(x) if math.isfinite(x) else fmt(x) for x in v]
        if (len(set(labels)) == len(set(v))
                and all(abs(float(t) - x) <= tol for t, x in zip(labels, v) if math.isfinite(x))):
            break
    # zero reads 0 (not "-0.000" from rounding noise, nor "0e+00")
    zero = "0" if pattern.endswith("e}") else None
    return [(zero or t.lstrip("-")) if math.isfinite(x) and float(t) == 0 else t for t, x in zip(labels, v)]


def _formatter() -> Any:
    from matplotlib.ticker import Formatter

    class Digits(Formatter):
        """matplotlib's side of tick_labels (with its typographic minus)."""

        def format_ticks(self, values: Any) -> list[str]:
            return [self.fix_minus(t) for t in tick_labels(values)]

        def __call__(self, x: float, pos: int | None = None) -> str:
            return self.fix_minus(tick_labels([x])[0])

    return Digits()


def _nice_up(x: float) -> float:
    """x rounded up to two significant digits (a colour scale's end that reads well)."""
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    unit = 10.0 ** (math.floor(math.log10(x)) - 1)
    return float(f"{math.ceil(x / unit) * unit:.2g}")


def _edges(v: np.ndarray) -> np.ndarray:
    """The cell edges of ascending cell centres: midway between them, as far out at the ends."""
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[:-1] + v[1:]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def draw_map(ax: Any, data: np.ndarray, grid: Any, **style: Any) -> Any:
    """A 2-d slice on its axes (zdt.engine.compare.Grid): cells at their coordinates, each
    axis increasing upward and rightward (so north is up however latitude is stored; an axis
    marked `down`, such as depth, increases downward), a grid stored (x, y) drawn with y
    upright, cells of uneven spacing at their own widths. Returns the artist (for a colour bar)."""
    rows, cols = grid.rows, grid.cols
    if cols.north and rows.east:            # (stored longitude x latitude)
        data, rows, cols = data.T, cols, rows
    y, x = rows.values, cols.values
    if y.size > 1 and y[0] > y[-1]:
        y, data = y[::-1], data[::-1]
    if x.size > 1 and x[0] > x[-1]:
        x, data = x[::-1], data[:, ::-1]
    ye, xe = _edges(y), _edges(x)
    # (pcolorfast: an image where the spacing is even, rectangles of their own sizes where not)
    artist = ax.pcolorfast(xe, ye, np.ma.masked_invalid(data), **style)
    ax.set_xlim(xe[0], xe[-1])
    ax.set_ylim(*((ye[-1], ye[0]) if rows.down else (ye[0], ye[-1])))
    ax.set_xlabel(cols.label)
    ax.set_ylabel(rows.label)
    return artist


def picture(name: str, views: Any, measured: dict | None) -> bytes:
    """The PNG of one array (see the module docstring)."""
    out = io.BytesIO()
    figure(name, views, measured).savefig(out, format="png")
    return out.getvalue()


def figure(name: str, views: Any, measured: dict | None) -> Any:
    """The matplotlib Figure of one array (picture's)."""
    mpl = require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    candidates = (measured or {}).get("candidates") or []
    bound = views.bound
    fig = Figure(figsize=(13.5, 7.6), dpi=80)      # (fixed margins: a constrained layout
    FigureCanvasAgg(fig)                            # takes most of the drawing time)
    grid = fig.add_gridspec(2, 3, left=0.06, right=0.93, bottom=0.08, top=0.9, wspace=0.36, hspace=0.4)
    # (copies of the colour maps with grey where the source has no value: the shared ones untouched)
    values_map = mpl.colormaps["viridis"].with_extremes(bad="#d9d9d9")
    errors_map = mpl.colormaps["RdBu_r"].with_extremes(bad="#d9d9d9")
    x, y = views.source, views.decoded
    with np.errstate(invalid="ignore"):
        d = y - x
    finite = np.isfinite(d)
    worst = float(np.abs(d[finite]).max()) if finite.any() else 0.0
    # the error's colour scale: the bound at its ends (an absolute bound), else the largest
    # error rounded up to two digits
    by_bound = bound is not None and not bound.relative and bound.value > 0
    limit = bound.value if by_bound else _nice_up(worst)
    if x.ndim == 2:
        vals = x[np.isfinite(x)]
        lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
        for k, (data, title) in enumerate(((x, "source"), (y, "decoded"))):
            ax = fig.add_subplot(grid[0, k])
            im = draw_map(ax, data, views.grid, cmap=values_map, vmin=lo, vmax=hi)
            ax.set_title(f"{title} {views.where}")
            fig.colorbar(im, ax=ax, shrink=0.85, format=_formatter())
        ax = fig.add_subplot(grid[0, 2])
        im = draw_map(ax, d, views.grid, cmap=errors_map, norm=TwoSlopeNorm(0.0, -limit, limit))
        ax.set_title("decoded - source" + (f" (colour ends: the bound {limit:g})" if by_bound else ""))
        # ticks at the ends: where an error at the bound sits
        fig.colorbar(im, ax=ax, shrink=0.85, ticks=[-limit, -limit / 2, 0.0, limit / 2, limit],
                     format=_formatter())
        if views.grid.note:
            fig.text(0.5, 0.948, views.grid.note, ha="center", va="top", fontsize=9, color="#555")
    else:
        ax = fig.add_subplot(grid[0, :2])
        index = np.arange(x.size)
        ax.plot(index, x, lw=0.9, label="source")
        ax.plot(index, y, lw=0.9, label="decoded", alpha=0.8)
        ax.set_title(f"values {views.where}")
        ax.legend(loc="upper right")
        ax = fig.add_subplot(grid[0, 2])
        ax.plot(index, d, lw=0.7, color="#b2182b")
        ax.axhline(0, color="#444", lw=0.6)
        if bound is not None and not bound.relative:
            for s in (-1, 1):
                ax.axhline(s * bound.value, color="#444", ls="--", lw=0.8)
        ax.set_title("decoded - source")
    # the errors' histogram against the bound
    ax = fig.add_subplot(grid[1, 0])
    e = views.errors[np.isfinite(views.errors)]
    if e.size:
        span = max(limit, float(np.abs(e).max())) or 1.0
        counts, edges = np.histogram(e, bins=101, range=(-span, span))
        ax.stairs(counts, edges, fill=True, color="#4575b4")       # (one artist, not 101 bars)
    if bound is not None and not bound.relative:
        for s in (-1, 1):
            ax.axvline(s * bound.value, color="#b2182b", ls="--", lw=1.0)
    ax.set_title(f"errors (sample of {e.size:,})" + (f", bound {bound}" if bound is not None else ""))
    ax.set_xlabel("decoded - source")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.xaxis.set_major_formatter(_formatter())
    # the power spectra
    ax = fig.add_subplot(grid[1, 1])
    if views.spectra is not None:
        ps, pd = views.spectra
        r = np.arange(len(ps))
        ax.loglog(r[1:], ps[1:], label="source", lw=1.2)
        ax.loglog(r[1:], pd[1:], label="decoded", lw=1.0, ls="--")
        ax.legend()
        ax.set_xlabel("radial wavenumber")
        ax.set_title("radially averaged power spectrum")
    else:
        ax.text(0.5, 0.5, "no spectrum: a 1-d array, or every slice has gaps",
                ha="center", va="center", transform=ax.transAxes, color="#777")
        ax.set_axis_off()
    # the decision's rate-distortion picture
    ax = fig.add_subplot(grid[1, 2])
    if candidates:
        b = np.array([c["bytes"] for c in candidates], dtype=float)
        err = np.array([c["error"] for c in candidates], dtype=float)
        ax.scatter(err, b, s=14, color="#4575b4", label="encodings measured")
        chosen = [c for c in candidates if c["label"] == measured.get("label")]
        if chosen:
            ax.scatter([chosen[0]["error"]], [chosen[0]["bytes"]], s=70, marker="*", color="#d73027",
                       label="chosen", zorder=3)
        if bound is not None:
            ax.axvline(bound.value, color="#b2182b", ls="--", lw=1.0, label=f"bound {bound.value:g}")
        if b.max() > 10 * b.min():
            ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useOffset=False)
        ax.set_xlabel("largest error measured")
        ax.set_ylabel("bytes")
        ax.legend(fontsize=8)
        ax.set_title("the decision: bytes against error")
    else:
        ax.set_axis_off()
    fig.suptitle(name, y=0.99)
    return fig


def page(title: str, result: dict, as_json: str, views: dict[str, Any],
         measured: dict[str, dict] | None = None, progress: Any = None) -> str:
    """The HTML page of a comparison: `result` as zdt.compare returns it and `as_json` as
    `zdt compare --json` prints it (embedded for scripts), `views` (array ->
    zdt.engine.compare.Views), `measured` (array -> its plan entry's measurements)."""
    from zdt import __version__

    figures = result["arrays"]
    advance = progress("draw", len(figures)) if progress is not None else (lambda n=1: None)
    head = (f"<h1>{html.escape(title)}</h1><p>zdt {__version__}, "
            f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Figures over every value; the "
            f"pictures show one slice (named above each) and a sample of the errors. "
            f"docs/compare.md defines each figure and check.</p>")
    summary = ["<table class=\"summary\"><tr><th>array</th><th>max abs error</th><th>max rel error</th>"
               "<th>PSNR</th><th>R\u00b2</th><th>DSSIM</th><th>bound</th><th>rel error 1e-4</th>"
               "<th>R\u00b2 check</th></tr>"]
    sections = []
    for i, (name, f) in enumerate(figures.items()):
        summary.append(f'<tr><td><a href="#a{i}">{html.escape(name)}</a></td>'
                       + "".join(f'<td class="num">{fmt(f[k])}</td>'
                                 for k in ("max_abs_error", "max_rel_error", "psnr", "r2", "dssim"))
                       + "".join(f"<td>{_verdict(c['passed'])}</td>" for c in f["checks"].values())
                       + "</tr>")
        if identical(f):        # (a copy: one line, not a panel of zeros)
            body = ('<p class="identical">Identical to the source: every value equal, and NaN, '
                    'infinities and missing values at the same places.</p>')
        else:
            body = _figures_html(name, f)
            if name in views:
                png = picture(name, views[name], (measured or {}).get(name))
                body += (f'<img alt="{html.escape(name)}: source, decoded, error, histogram, spectra" '
                         f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')
        sections.append(f'<section id="a{i}"><h2>{html.escape(name)}</h2>{body}</section>')
        advance(1)
    summary.append("</table>")
    if not figures:
        summary.append("<p>No array was compared (none encoded, or none numeric in both).</p>")
    data = as_json.replace("</", "<\\/")
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{head}{''.join(summary)}{''.join(sections)}"
            f'<script type="application/json" id="zdt-figures">{data}</script></body></html>')


def write(path: Any, text: str) -> None:
    from pathlib import Path

    from zdt.errors import StorageError

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"{path}: cannot write the report ({exc.strerror or exc})") from None
