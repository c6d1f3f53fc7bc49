"""``results/report.html``: one self-contained page (no script, no font file, no request
leaving it; images inline and small) built from the plan's tables and store.

Sections (each an element with this id): ``leaderboard`` (with 95% intervals), ``decay``
(NED against N, the paper's reported curves beside ours), ``heatmaps`` (domain × N per
model), ``pairwise`` (paired bootstrap, Holm-adjusted), ``diagnostics`` (failure modes by N
and omission by scrap area), ``origami`` (accuracy and GS by task, tier and category, the
paper's one-step numbers beside ours), ``samples`` (scraps as the model saw them, the truth
with each model's omissions, the answer with its hallucinations) and ``episodes`` (origami
episodes turn by turn).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shredfold import aggregate, paths
from shredfold.plan import Plan
from shredfold.report import charts, paper
from shredfold.report.highlight import mark
from shredfold.store import Store, atomic_write_text

THUMB = 128  # px, longest side of a scrap thumbnail
STATE_THUMB = 120  # px, origami state pictures
EPISODES_PER_MODEL = 1
SECTIONS = ("leaderboard", "decay", "heatmaps", "pairwise", "diagnostics", "origami", "samples", "episodes")


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


@dataclass
class Inputs:
    plan: Plan
    workdir: Path
    tables: list[str]  # the plan's cell tables (current attempts)
    store: Store = field(init=False)

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


def _shred_models(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    return [r for r in rows if num(r.get("ned")) is not None]


def decay(inp: Inputs) -> dict[str, Any]:
    cols, rows = inp.csv("leaderboard.csv")
    ns = sorted(int(c[5:]) for c in cols if c.startswith("ned_n") and c[5:].isdigit())
    measured = {}
    for r in _shred_models(rows):
        by_n = {n: v for n in ns if (v := num(r.get(f"ned_n{n}"))) is not None}
        if by_n:
            measured[r["model"]] = by_n
    svg = charts.decay(measured, paper.SHRED_NED, "NED against the number of pieces") if measured or ns else ""
    reported = [{"model": m, **{f"n{n}": v for n, v in d.items()}} for m, d in paper.SHRED_NED.items()]
    return {"svg": svg, "reported": reported, "ns": sorted({n for d in paper.SHRED_NED.values() for n in d}),
            "source": paper.SOURCE, "measured": list(measured)}  # fmt: skip


def heatmaps(inp: Inputs) -> list[dict[str, str]]:
    _, rows = inp.csv("breakdown.csv")
    domains = [str(d) for d in dict.fromkeys(str(s.labels["domain"]) for s in inp.plan.sets_of("shred"))]
    ns = sorted({int(s.labels["n"]) for s in inp.plan.sets_of("shred")})
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = {(r["domain"], int(r["granularity"])): num(r.get("ned")) for r in rows if r["model"] == model}
        grid = [[mine.get((d, n)) for n in ns] for d in domains]
        out.append({"model": model, "svg": charts.heatmap(f"{model}: NED by domain and N", domains, ns, grid)})
    return out


def pairwise(inp: Inputs) -> dict[str, Any]:
    cols, rows = inp.csv("pairwise.csv")
    return {"columns": cols, "rows": [[fmt(r.get(c)) if c not in ("model_a", "model_b", "better", "benchmark", "metric") else r.get(c, "") for c in cols] for r in rows]}


# The report's diagnostics table rounds its means to 4 digits (it shows 3).
DIAGNOSTIC_DIGITS = 4


def diagnostics(inp: Inputs) -> dict[str, Any]:
    from shredfold.tasks.shred import DIAGNOSTICS

    means = ", ".join(replace(m, digits=DIAGNOSTIC_DIGITS).select() for m in DIAGNOSTICS)
    cols, rows = inp.rows(
        f"SELECT model, granularity, count(*) AS items, {means} FROM rows WHERE benchmark = 'shred' "
        "GROUP BY model, granularity ORDER BY model, granularity"
    )
    table = [[str(v) if i < 3 else fmt(None if v is None else str(v)) for i, v in enumerate(r)] for r in rows]
    _, pieces = inp.rows(
        "SELECT model, piece_omission FROM rows WHERE benchmark = 'shred' AND granularity > 1 "
        "AND piece_omission IS NOT NULL ORDER BY model, item"
    )
    return {"columns": cols, "rows": table, "svg": _omission_by_area(pieces)}


def _omission_by_area(pieces: Sequence[tuple[Any, ...]], bins: int = 5) -> str:
    import numpy as np

    points: dict[str, list[tuple[float, float]]] = {}
    for model, blob in pieces:
        for p in json.loads(blob):
            if p.get("omission") is not None:
                points.setdefault(model, []).append((float(p["area"]), float(p["omission"])))
    every = [a for pts in points.values() for a, _ in pts]
    if not every:
        return ""
    edges = np.unique(np.quantile(every, np.linspace(0, 1, bins + 1)))
    series = {}
    for model, pts in points.items():
        area = np.array([a for a, _ in pts])
        om = np.array([o for _, o in pts])
        which = np.clip(np.searchsorted(edges, area, side="right") - 1, 0, max(0, len(edges) - 2))
        series[model] = [(float(area[which == b].mean()), float(om[which == b].mean())) for b in sorted(set(which.tolist()))]
    return charts.lines("Omission by scrap area (pieces binned by area share of the page)",
                        "scrap area (share of the page)", "omitted share of the scrap's text", series)  # fmt: skip


def origami(inp: Inputs) -> dict[str, Any]:
    cols, rows = inp.csv("leaderboard.csv")
    variants = [v for v in ("mcq_assoc", "mcq_causal") if f"origami_{v}" in cols]
    agents = [r for r in rows if any(num(r.get(f"origami_{v}")) is not None for v in variants)
              or num(r.get("origami_gs")) is not None]  # fmt: skip
    mcq_svg = ""
    if variants:
        mcq_svg = charts.bars(
            "One-step MCQ accuracy", variants,
            {r["model"]: [num(r.get(f"origami_{v}")) for v in variants] for r in agents},
            {m: [d.get(v) for v in variants] for m, d in paper.ORIGAMI_MCQ.items()}, "accuracy",
        )  # fmt: skip
    tiers = [t for t in ("easy", "medium", "hard") if f"origami_gs_{t}" in cols]
    gs_svg = ""
    if tiers and any(num(r.get("origami_gs")) is not None for r in agents):
        gs_svg = charts.bars("Full-step GS by tier", tiers,
                             {r["model"]: [num(r.get(f"origami_gs_{t}")) for t in tiers] for r in agents},
                             ylabel="GS (silhouette IoU)")  # fmt: skip
    bcols, brows = inp.csv("breakdown_origami.csv")
    return {
        "mcq_svg": mcq_svg, "gs_svg": gs_svg, "columns": bcols, "left_out": left_out(inp),
        "rows": [[fmt(r.get(c)) if c not in ("model", "task", "tier", "category") else r.get(c, "") for c in bcols] for r in brows],
        "reported": [{"model": m, **d} for m, d in paper.ORIGAMI_MCQ.items()], "source": paper.SOURCE,
    }  # fmt: skip


def left_out(inp: Inputs) -> list[dict[str, str]]:
    """Full-step targets dropped at build time (their design did not validate), by design."""
    from shredfold.tasks.origami_fullstep import dropped_targets

    dropped = dropped_targets(inp.plan.sets_of("origami_fullstep"), inp.store)
    out = {design.id: why for design, why in dropped.values()}
    return [{"design": d, "why": w} for d, w in sorted(out.items())]


# ---------------------------------------------------------------- the sample viewer


def samples(inp: Inputs) -> list[dict[str, Any]]:
    """For each domain, its first document at the largest N: the scraps as presented, the
    truth with each model's omissions marked, and each answer with its hallucinations."""
    from shredfold.metrics.text import normalize
    from shredfold.models.envelope import load_response
    from shredfold.prompts.shred import parse_answer
    from shredfold.shred.diagnostics import diagnose
    from shredfold.shred.glyphs import PageGlyphs, skeleton
    from shredfold.shred.sample_folder import (
        SAMPLE_STAGE,
        load_hidden,
        load_layout,
        load_public,
        load_truth,
    )
    from shredfold.tasks.shred import DIAGNOSTICS

    chosen: dict[str, Any] = {}
    for s in inp.plan.sets_of("shred"):
        domain = str(s.labels["domain"])
        if s.items and (domain not in chosen or s.items[0].n > chosen[domain].n):
            chosen[domain] = s.items[0]
    _, answered = inp.rows(
        "SELECT item, model, response, error FROM rows WHERE benchmark = 'shred' ORDER BY model"
    )
    by_item: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for item, model, response, error in answered:
        by_item.setdefault(item, []).append((model, response, error))
    out = []
    for domain, item in chosen.items():
        if not inp.store.has(SAMPLE_STAGE, item.key):
            continue
        obj = inp.store.object(SAMPLE_STAGE, item.key)
        public, truth, hidden = load_public(obj), load_truth(obj), load_hidden(obj)
        # An outside sample has no layout or polygons: its answers are shown unmarked.
        layout = load_layout(obj) if item.outside is None else None
        glyphs = PageGlyphs.from_json(layout) if layout is not None else None
        models = []
        for model, response, error in by_item.get(item.key, []):
            text = load_response(inp.store, response).text if response and not error else ""
            answer = parse_answer(text, item.kind)
            shown = normalize(answer, item.kind)  # type: ignore[arg-type]
            if glyphs is None:  # an outside sample: no diagnostics (no polygons)
                models.append({
                    "model": model, "error": error, "scores": {m.name: "—" for m in DIAGNOSTICS},
                    "truth": mark(truth.text, [], item.kind),
                    "answer": mark(shown, [], item.kind),
                })  # fmt: skip
                continue
            d = diagnose(glyphs.chars, glyphs.boxes, glyphs.lines, glyphs.words, hidden["polygons"],
                         float(hidden["page"]["width"] * hidden["page"]["height"]),
                         skeleton(answer, item.kind), item.lang)  # fmt: skip
            models.append({
                "model": model, "error": error,
                "truth": mark(truth.text, list(d.alignment.t2a < 0), item.kind),
                "answer": mark(shown, list(d.alignment.inserted), item.kind),
                "scores": {k: v for k, v in d.columns().items() if k != "piece_omission"},
            })  # fmt: skip
        out.append({
            "domain": domain, "doc": item.doc.doc_id, "n": item.n, "key": item.key[:12],
            "pieces": [image_uri(p, THUMB) for p in public.pieces or [public.composite]], "truth": truth.text, "models": models,
        })  # fmt: skip
    return out


# ---------------------------------------------------------------- the episode viewer


def episodes(inp: Inputs) -> list[dict[str, Any]]:
    """Origami full-step episodes replayed turn by turn: what the model saw (target, folded
    state, crease pattern), what it did, and what the environment answered."""
    from shredfold.origami import square_sheet
    from shredfold.origami_bench.env import render_folded, render_pattern, step
    from shredfold.origami_bench.targets import TARGET_STAGE
    from shredfold.tasks.origami_fullstep import EPISODE_STAGE

    _, rows = inp.rows(
        "SELECT model, item, design, tier, response, gs, qe FROM rows WHERE benchmark = 'origami' "
        "AND task = 'fullstep' AND response IS NOT NULL ORDER BY model, tier, item"
    )
    ob = inp.plan.spec.spec.origami
    if ob is None:
        return []
    seen: dict[str, int] = {}
    out = []
    for model, item, design, tier, ekey, gs, qe in rows:
        if seen.get(model, 0) >= EPISODES_PER_MODEL or not inp.store.has(EPISODE_STAGE, ekey):
            continue
        seen[model] = seen.get(model, 0) + 1
        record = inp.store.get_json(EPISODE_STAGE, ekey, "episode.json")
        state = square_sheet()
        turns = []
        for t in record["turns"]:
            before = (image_uri(render_folded(state, ob.image_size), STATE_THUMB, keep_alpha=False),
                      image_uri(render_pattern(state, ob.image_size), STATE_THUMB, keep_alpha=False))  # fmt: skip
            state, fb, _ = step(state, t["answer"], ob.action)
            turns.append({
                "turn": t["turn"], "folded": before[0], "pattern": before[1], "action": json.dumps(t["action"]),
                "answer": t["answer"][:300], "valid": t["valid"], "feedback": fb.text(), "effective": t["effective"],
            })  # fmt: skip
        target = inp.store.read_bytes(TARGET_STAGE, item, "target.png")
        out.append({
            "model": model, "design": design, "tier": tier, "gs": fmt(str(gs)), "qe": fmt(None if qe is None else str(qe)),
            "target": image_uri(target, STATE_THUMB, keep_alpha=False),
            "final": image_uri(render_folded(state, ob.image_size), STATE_THUMB, keep_alpha=False),
            "turns": turns, "stopped": record.get("stopped"),
        })  # fmt: skip
    return out


# ---------------------------------------------------------------- the page


def context(inp: Inputs) -> dict[str, Any]:
    shred = bool(inp.plan.sets_of("shred"))
    return {
        "title": f"shredfold report: {inp.plan.spec.spec.name}",
        "spec": inp.plan.spec.spec.name,
        "description": inp.plan.spec.spec.description or "",
        "cells": len(inp.plan.cells),
        "items": sum(len(s.items) for s in inp.plan.item_sets.values() if s.asked),
        "models": [m.id for m in inp.plan.spec.models],
        "limits": inp.plan.limits(),
        "leaderboard": leaderboard(inp),
        "decay": decay(inp) if shred else None,
        "heatmaps": heatmaps(inp) if shred else [],
        "pairwise": pairwise(inp),
        "diagnostics": diagnostics(inp) if shred else None,
        "origami": origami(inp),
        "samples": samples(inp) if shred else [],
        "episodes": episodes(inp),
        "sections": SECTIONS,
    }


def render(ctx: Mapping[str, Any]) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("shredfold.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(**ctx)


def build_report(plan: Plan, workdir: str | Path, tables: Sequence[str] | None = None) -> str:
    inp = Inputs(plan, Path(workdir), list(tables) if tables is not None else plan.score_paths)
    return render(context(inp))


def write_report(plan: Plan, workdir: str | Path, out: str | Path, tables: Sequence[str] | None = None) -> dict[str, float]:
    """Write the report atomically; return its size (bytes) and build time (seconds)."""
    t0 = time.perf_counter()
    html = build_report(plan, workdir, tables)
    atomic_write_text(out, html)
    return {"bytes": len(html.encode("utf-8")), "seconds": round(time.perf_counter() - t0, 2)}
