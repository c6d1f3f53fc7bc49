"""ShredBench's sections of the report: NED against N beside the paper's reported curves,
heatmaps of NED by domain and N, failure diagnostics, and the sample viewer (scraps as the
model saw them, the truth with each model's omissions, the answer with its hallucinations).

Each section's ``context`` reads the report's inputs (:class:`shredfold.report.build.Inputs`)
and draws with ``inputs.kit``; its template is the section's body.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from shredfold.tasks.benchmark import ReportSection

THUMB = 128  # px, longest side of a scrap thumbnail
# The report's diagnostics table rounds its means to 4 digits (it shows 3).
DIAGNOSTIC_DIGITS = 4
SOURCE = "reported in the ShredBench / OrigamiBench paper (not measured here)"

# The paper's mean NED at N = 8 / 12 / 16 pieces, drawn beside ours, labelled as reported.
REPORTED_NED: dict[str, dict[int, float]] = {
    "Gemini 3 Pro": {8: 0.33, 12: 0.37, 16: 0.41},
    "Gemini 3 Flash": {8: 0.34, 12: 0.40, 16: 0.44},
    "GPT-5 Mini": {8: 0.58, 12: 0.65, 16: 0.73},
    "GPT-5.1": {8: 0.77, 12: 0.81, 16: 0.82},
    "Qwen-VL-Plus": {8: 0.59, 12: 0.63, 16: 0.84},
    "InternVL3.5-38B": {8: 0.74, 12: 0.75, 16: 0.76},
    "Mistral3-Reasoning": {8: 0.77, 12: 0.79, 16: 0.79},
}


def _has_cells(inp: Any) -> bool:
    return bool(inp.plan.sets_of("shred"))


def _shred_models(rows: Sequence[dict[str, str]], kit: Any) -> list[dict[str, str]]:
    return [r for r in rows if kit.num(r.get("ned")) is not None]


def decay(inp: Any) -> dict[str, Any]:
    kit = inp.kit
    cols, rows = inp.csv("leaderboard.csv")
    ns = sorted(int(c[5:]) for c in cols if c.startswith("ned_n") and c[5:].isdigit())
    measured = {}
    for r in _shred_models(rows, kit):
        by_n = {n: v for n in ns if (v := kit.num(r.get(f"ned_n{n}"))) is not None}
        if by_n:
            measured[r["model"]] = by_n
    svg = (
        kit.charts.decay(measured, REPORTED_NED, "NED against the number of pieces")
        if measured or ns
        else ""
    )
    reported = [{"model": m, **{f"n{n}": v for n, v in d.items()}} for m, d in REPORTED_NED.items()]
    return {"svg": svg, "reported": reported, "ns": sorted({n for d in REPORTED_NED.values() for n in d}),
            "source": SOURCE, "measured": list(measured)}  # fmt: skip


def heatmaps(inp: Any) -> list[dict[str, str]]:
    kit = inp.kit
    _, rows = inp.csv("breakdown.csv")
    domains = [
        str(d) for d in dict.fromkeys(str(s.labels["domain"]) for s in inp.plan.sets_of("shred"))
    ]
    ns = sorted({int(s.labels["n"]) for s in inp.plan.sets_of("shred")})
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = {
            (r["domain"], int(r["granularity"])): kit.num(r.get("ned"))
            for r in rows
            if r["model"] == model
        }
        grid = [[mine.get((d, n)) for n in ns] for d in domains]
        out.append(
            {
                "model": model,
                "svg": kit.charts.heatmap(f"{model}: NED by domain and N", domains, ns, grid),
            }
        )
    return out


def diagnostics(inp: Any) -> dict[str, Any]:
    kit = inp.kit
    from shredfold.tasks.shredbench.task import DIAGNOSTICS

    means = ", ".join(replace(m, digits=DIAGNOSTIC_DIGITS).select() for m in DIAGNOSTICS)
    cols, rows = inp.rows(
        f"SELECT model, granularity, count(*) AS items, {means} FROM rows WHERE benchmark = 'shred' "
        "GROUP BY model, granularity ORDER BY model, granularity"
    )
    table = [
        [str(v) if i < 3 else kit.fmt(None if v is None else str(v)) for i, v in enumerate(r)]
        for r in rows
    ]
    _, pieces = inp.rows(
        "SELECT model, piece_omission FROM rows WHERE benchmark = 'shred' AND granularity > 1 "
        "AND piece_omission IS NOT NULL ORDER BY model, item"
    )
    return {"columns": cols, "rows": table, "svg": _omission_by_area(pieces, kit)}


def _omission_by_area(pieces: Sequence[tuple[Any, ...]], kit: Any, bins: int = 5) -> str:
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
        series[model] = [
            (float(area[which == b].mean()), float(om[which == b].mean()))
            for b in sorted(set(which.tolist()))
        ]
    return kit.charts.lines("Omission by scrap area (pieces binned by area share of the page)",
                        "scrap area (share of the page)", "omitted share of the scrap's text", series)  # fmt: skip


def samples(inp: Any) -> list[dict[str, Any]]:
    """For each domain, its first document at the largest N: the scraps as presented, the
    truth with each model's omissions marked, and each answer with its hallucinations."""
    kit = inp.kit
    from shredfold.metrics.text import normalize
    from shredfold.models.envelope import load_response
    from shredfold.shred.diagnostics import diagnose
    from shredfold.shred.glyphs import PageGlyphs, skeleton
    from shredfold.shred.prompts import parse_answer
    from shredfold.shred.sample_folder import (
        SAMPLE_STAGE,
        load_hidden,
        load_layout,
        load_public,
        load_truth,
    )
    from shredfold.tasks.shredbench.task import DIAGNOSTICS

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
                    "truth": kit.mark(truth.text, [], item.kind),
                    "answer": kit.mark(shown, [], item.kind),
                })  # fmt: skip
                continue
            d = diagnose(glyphs.chars, glyphs.boxes, glyphs.lines, glyphs.words, hidden["polygons"],
                         float(hidden["page"]["width"] * hidden["page"]["height"]),
                         skeleton(answer, item.kind), item.lang)  # fmt: skip
            models.append({
                "model": model, "error": error,
                "truth": kit.mark(truth.text, list(d.alignment.t2a < 0), item.kind),
                "answer": kit.mark(shown, list(d.alignment.inserted), item.kind),
                "scores": {k: v for k, v in d.columns().items() if k != "piece_omission"},
            })  # fmt: skip
        out.append({
            "domain": domain, "doc": item.doc.doc_id, "n": item.n, "key": item.key[:12],
            "pieces": [kit.image_uri(p, THUMB) for p in public.pieces or [public.composite]], "truth": truth.text, "models": models,
        })  # fmt: skip
    return out


SECTIONS = (
    ReportSection("decay", "NED against the number of pieces", """\
  {% if section %}
  <p class="note">Solid lines: measured by this run. Grey dashed lines: <span class="reported">{{ section.source }}</span>.</p>
  {{ section.svg | safe }}
  <h3>The paper's numbers <span class="reported">(reported, not measured)</span></h3>
  <table class="reported-table">
    <thead><tr><th>model (reported)</th>{% for n in section.ns %}<th>N={{ n }}</th>{% endfor %}</tr></thead>
    <tbody>{% for r in section.reported %}<tr><td>{{ r.model }}</td>{% for n in section.ns %}<td>{{ "%.2f" | format(r["n" ~ n]) }}</td>{% endfor %}</tr>{% endfor %}</tbody>
  </table>
  {% else %}<p class="note">No ShredBench cells in this plan.</p>{% endif %}
""",
                  lambda inp: decay(inp) if _has_cells(inp) else None),
    ReportSection("heatmaps", "NED by domain and N", """\
  <div class="grid">{% for h in section %}<div class="heatmap" data-model="{{ h.model }}">{{ h.svg | safe }}</div>{% else %}<p class="note">No ShredBench cells in this plan.</p>{% endfor %}</div>
""",
                  lambda inp: heatmaps(inp) if _has_cells(inp) else []),
    ReportSection("diagnostics", "Failure diagnostics", """\
  {% if section %}
  <p class="note">omission: share of each scrap's own text missing from the answer (mean over scraps); small / large: scraps below / above the item's median area; hallucination: share of the answer aligned to nothing in the truth; order_tau: Kendall τ of the truth's line order against the answer's; cut_word_recovery: share of words cut by a scrap boundary spelled whole.</p>
  <div class="scroll"><table>
    <thead><tr>{% for c in section.columns %}<th>{{ c }}</th>{% endfor %}</tr></thead>
    <tbody>{% for r in section.rows %}<tr>{% for v in r %}<td>{{ v }}</td>{% endfor %}</tr>{% endfor %}</tbody>
  </table></div>
  {{ section.svg | safe }}
  {% else %}<p class="note">No ShredBench cells in this plan.</p>{% endif %}
""",
                  lambda inp: diagnostics(inp) if _has_cells(inp) else None),
    ReportSection("samples", "Sample viewer", """\
  <p class="legend note"><span class="om">struck red</span> truth a model omitted · <span class="ins">yellow</span> answer text aligned to nothing in the truth</p>
  {% for s in section %}
  <div class="sample" data-domain="{{ s.domain }}">
    <h3>{{ s.domain }} · {{ s.doc }} · N={{ s.n }} <span class="note">sample {{ s.key }}</span></h3>
    <div class="pieces">{% for p in s.pieces %}<img src="{{ p }}" alt="scrap {{ loop.index0 }}" title="scrap {{ loop.index0 }} as presented">{% endfor %}</div>
    {% for m in s.models %}
    <details{% if loop.first %} open{% endif %} data-model="{{ m.model }}">
      <summary>{{ m.model }} — omission {{ m.scores.omission }}, hallucination {{ m.scores.hallucination }}, τ {{ m.scores.order_tau }}, cut words recovered {{ m.scores.cut_word_recovery }}{% if m.error %} — failed: {{ m.error }}{% endif %}</summary>
      <div class="columns">
        <div><b>truth</b><pre class="text">{% for t, on in m.truth %}{% if on %}<span class="om">{{ t }}</span>{% else %}{{ t }}{% endif %}{% endfor %}</pre></div>
        <div><b>answer</b> <span class="note">(as scored: normalised)</span><pre class="text">{% for t, on in m.answer %}{% if on %}<span class="ins">{{ t }}</span>{% else %}{{ t }}{% endif %}{% endfor %}</pre></div>
      </div>
    </details>
    {% endfor %}
  </div>
  {% else %}<p class="note">No ShredBench section in this plan.</p>{% endfor %}
""",
                  lambda inp: samples(inp) if _has_cells(inp) else []),
)  # fmt: skip
