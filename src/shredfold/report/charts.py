"""The report's charts as inline SVG (matplotlib, drawn at build time): values in, SVG text out.

Why matplotlib: it is maintained and pinned, draws static vector charts without any
JavaScript (the report needs no script at all, so it opens offline and its size is the
charts' own), and its SVG is reproducible (fixed hash salt, no date). Interactive libraries
(plotly, bokeh, vega-lite) either fetch their runtime from a CDN, which a self-contained
offline report cannot, or inline one of 1-4 MB into every report. Text stays text
(``svg.fonttype = none``), so the browser draws it with its own fonts and it can be searched.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

MEASURED = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]
REPORTED = "#8a8a8a"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "svg.fonttype": "none",
        "svg.hashsalt": "shredfold-report",
        "font.size": 9,
        "font.family": "DejaVu Sans",
        "axes.spines.top": False,
        "axes.spines.right": False,
    })  # fmt: skip
    return plt


def _svg(fig: Any) -> str:
    plt = _pyplot()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    # Inline in HTML: drop the XML prolog and doctype, keep the <svg> element.
    return text[text.index("<svg") :]


def colour(i: int) -> str:
    return MEASURED[i % len(MEASURED)]


def decay(measured: Mapping[str, Mapping[int, float]], reported: Mapping[str, Mapping[int, float]], label: str) -> str:
    """NED against N: our models (solid) and the paper's (dashed grey, labelled reported)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 3.6))
    for i, (model, by_n) in enumerate(measured.items()):
        ns = sorted(by_n)
        ax.plot(ns, [by_n[n] for n in ns], "-o", color=colour(i), lw=2, ms=5, label=f"{model} (measured)")
    styles = ["--", ":", "-."]
    for i, (model, by_n) in enumerate(reported.items()):
        ns = sorted(by_n)
        ax.plot(ns, [by_n[n] for n in ns], styles[i % 3], marker="s", mfc="white", color=REPORTED,
                lw=1.2, ms=4, label=f"{model} (reported)")  # fmt: skip
    ticks = sorted({n for d in (*measured.values(), *reported.values()) for n in d})
    ax.set_xticks(ticks)
    ax.set_xlabel("pieces N")
    ax.set_ylabel("NED (lower is better)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.25)
    ax.set_title(label, fontsize=9, loc="left")
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _svg(fig)


def heatmap(title: str, rows: Sequence[str], cols: Sequence[int], values: Sequence[Sequence[float | None]]) -> str:
    """A domain × N grid of NED, each cell annotated (empty cells blank)."""
    import numpy as np

    plt = _pyplot()
    grid = np.array([[np.nan if v is None else v for v in r] for r in values], dtype=float)
    fig, ax = plt.subplots(figsize=(0.7 * len(cols) + 1.6, 0.32 * len(rows) + 0.8))
    ax.imshow(grid, cmap="RdYlGn_r", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cols)), [f"N={n}" for n in cols])
    ax.set_yticks(range(len(rows)), rows)
    for (r, c), v in np.ndenumerate(grid):
        if not np.isnan(v):
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7, color="black")
    ax.set_title(title, fontsize=9, loc="left")
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    return _svg(fig)


def lines(title: str, xlabel: str, ylabel: str, series: Mapping[str, Sequence[tuple[float, float]]]) -> str:
    """One line per model (e.g. omission against scrap area)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.0))
    for i, (name, pts) in enumerate(series.items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=colour(i), ms=4, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.25)
    ax.set_title(title, fontsize=9, loc="left")
    if series:
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(fig)


def bars(title: str, groups: Sequence[str], series: Mapping[str, Sequence[float | None]],
         reported: Mapping[str, Sequence[float | None]] | None = None, ylabel: str = "") -> str:  # fmt: skip
    """Grouped bars: one bar per model in each group; reported values hatched grey."""
    import numpy as np

    plt = _pyplot()
    entries = [(k, v, False) for k, v in series.items()] + [(k, v, True) for k, v in (reported or {}).items()]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(groups) * max(1, len(entries)) * 0.45 + 2), 2.8))
    width = 0.8 / max(1, len(entries))
    x = np.arange(len(groups))
    for i, (name, vals, is_reported) in enumerate(entries):
        heights = [np.nan if v is None else v for v in vals]
        style = {"color": "white", "edgecolor": REPORTED, "hatch": "///"} if is_reported else {"color": colour(i)}
        label = f"{name} (reported)" if is_reported else name
        ax.bar(x - 0.4 + width * (i + 0.5), heights, width * 0.92, label=label, **style)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.25)
    ax.set_title(title, fontsize=9, loc="left")
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(fig)
