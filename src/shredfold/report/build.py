"""``results/report.html``: one self-contained page (no script, no font file, no request
leaving it; images inline and small) built from the plan's tables and store.

Sections (each an element with this id): ``leaderboard`` (with 95% intervals) and
``pairwise`` (paired bootstrap, Holm-adjusted), then each registered benchmark's own
sections (:class:`shredfold.tasks.benchmark.ReportSection`), in benchmark order, whether or
not the plan has its cells (a section then says it has nothing). The benchmarks' sections
draw with the helpers of :class:`Kit`.
"""

from __future__ import annotations

import base64
import csv
import io
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shredfold import aggregate, paths
from shredfold.plan import Plan
from shredfold.report import charts
from shredfold.report.highlight import mark
from shredfold.store import Store, atomic_write_text
from shredfold.tasks.benchmark import ReportSection
from shredfold.tasks.registry import benchmarks

GENERIC = ("leaderboard", "pairwise")


def benchmark_sections() -> list[ReportSection]:
    """The registered benchmarks' sections, in order."""
    return [s for b in benchmarks() for s in b.report]


# The sections of a report with the benchmarks registered at import (the built-in ones).
SECTIONS = (*GENERIC, *(s.id for s in benchmark_sections()))


# ---------------------------------------------------------------- inputs


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.is_file():
        return [], []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def num(v: str | None) -> float | None:
    try:
        x = float(v) if v not in (None, "") else None
    except ValueError:
        return None
    return x if x is None or math.isfinite(x) else None


def fmt(v: str | None) -> str:
    x = num(v)
    if x is None:
        return v if v not in (None, "") else "–"
    return f"{x:.3f}" if not float(x).is_integer() or "." in str(v) else str(v)


def image_uri(png: bytes, size: int, *, keep_alpha: bool = True) -> str:
    """A small WebP data URI of a picture (its longest side ``size`` px)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    if img.mode == "P":  # a palette piece: resample its colours, not its indices
        img = img.convert("RGBA")
    img.thumbnail((size, size))
    if not keep_alpha:
        img = img.convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="WEBP", quality=60, method=4)
    return "data:image/webp;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


@dataclass(frozen=True)
class Kit:
    """What a benchmark's report section draws with (its module sits below the report)."""

    charts: Any = charts
    mark: Callable[..., Any] = mark
    fmt: Callable[[str | None], str] = fmt
    num: Callable[[str | None], float | None] = num
    image_uri: Callable[..., str] = image_uri


@dataclass
class Inputs:
    plan: Plan
    workdir: Path
    tables: list[str]  # the plan's cell tables (current attempts)
    store: Store = field(init=False)
    kit: Kit = field(default_factory=Kit, init=False)

    def __post_init__(self) -> None:
        self.store = Store(self.workdir / paths.STORE)

    def csv(self, name: str) -> tuple[list[str], list[dict[str, str]]]:
        return read_csv(self.workdir / paths.RESULTS / name)

    def rows(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """SQL over the plan's cell tables (the view ``rows``)."""
        import duckdb

        files = [str(self.workdir / t) for t in self.tables if (self.workdir / t).is_file()]
        if not files:
            return [], []
        con = aggregate.connect(files)
        try:
            res = con.execute(sql)
        except duckdb.Error:
            return [], []  # a column this plan's tasks do not have
        return [d[0] for d in res.description], res.fetchall()


# ---------------------------------------------------------------- sections


def leaderboard(inp: Inputs) -> dict[str, Any]:
    """The leaderboard with each ``x_ci_low``/``x_ci_high`` folded into column ``x``."""
    cols, rows = inp.csv("leaderboard.csv")
    shown = [c for c in cols if not c.endswith(("_ci_low", "_ci_high"))]
    body = []
    for r in rows:
        cells = []
        for c in shown:
            text = fmt(r.get(c))
            if f"{c}_ci_low" in r and r.get(f"{c}_ci_low"):
                text += f" [{fmt(r[f'{c}_ci_low'])}, {fmt(r[f'{c}_ci_high'])}]"
            cells.append(text)
        body.append({"model": r["model"], "reference": r.get("reference") == "true", "cells": cells})
    return {"columns": shown, "rows": body}


def pairwise(inp: Inputs) -> dict[str, Any]:
    cols, rows = inp.csv("pairwise.csv")
    return {"columns": cols, "rows": [[fmt(r.get(c)) if c not in ("model_a", "model_b", "better", "benchmark", "metric") else r.get(c, "") for c in cols] for r in rows]}


# ---------------------------------------------------------------- the page


def context(inp: Inputs) -> dict[str, Any]:
    env = _environment()
    shown = [
        {"id": s.id, "title": s.title, "body": env.from_string(s.template).render(section=s.context(inp))}
        for s in benchmark_sections()
    ]
    return {
        "title": f"shredfold report: {inp.plan.spec.spec.name}",
        "spec": inp.plan.spec.spec.name,
        "description": inp.plan.spec.spec.description or "",
        "cells": len(inp.plan.cells),
        "items": sum(len(s.items) for s in inp.plan.item_sets.values() if s.asked),
        "models": [m.id for m in inp.plan.spec.models],
        "limits": inp.plan.limits(),
        "leaderboard": leaderboard(inp),
        "pairwise": pairwise(inp),
        "benchmark_sections": shown,
        "sections": [*GENERIC, *(s["id"] for s in shown)],
    }


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("shredfold.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(ctx: Mapping[str, Any]) -> str:
    return _environment().get_template("report.html.j2").render(**ctx)


def build_report(plan: Plan, workdir: str | Path, tables: Sequence[str] | None = None) -> str:
    inp = Inputs(plan, Path(workdir), list(tables) if tables is not None else plan.score_paths)
    return render(context(inp))


def write_report(plan: Plan, workdir: str | Path, out: str | Path, tables: Sequence[str] | None = None) -> dict[str, float]:
    """Write the report atomically; return its size (bytes) and build time (seconds)."""
    t0 = time.perf_counter()
    html = build_report(plan, workdir, tables)
    atomic_write_text(out, html)
    return {"bytes": len(html.encode("utf-8")), "seconds": round(time.perf_counter() - t0, 2)}
