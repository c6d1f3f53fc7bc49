"""OrigamiBench's sections of the report: accuracy and GS by task, tier and category (the
paper's one-step numbers beside ours, the designs left out), and the episode viewer
(full-step episodes replayed turn by turn).

Each section's ``context`` reads the report's inputs (:class:`shredfold.report.build.Inputs`)
and draws with ``inputs.kit``; its template is the section's body.
"""

from __future__ import annotations

import json
from typing import Any

from shredfold.tasks.benchmark import ReportSection

STATE_THUMB = 120  # px, origami state pictures
EPISODES_PER_MODEL = 1
SOURCE = "reported in the ShredBench / OrigamiBench paper (not measured here)"

# The paper's one-step multiple-choice accuracy by variant, drawn beside ours, labelled as reported.
REPORTED_MCQ: dict[str, dict[str, float]] = {
    "Qwen3-VL-32B": {"mcq_assoc": 0.9618, "mcq_causal": 0.4337},
}


def origami(inp: Any) -> dict[str, Any]:
    kit = inp.kit
    cols, rows = inp.csv("leaderboard.csv")
    variants = [v for v in ("mcq_assoc", "mcq_causal") if f"origami_{v}" in cols]
    agents = [r for r in rows if any(kit.num(r.get(f"origami_{v}")) is not None for v in variants)
              or kit.num(r.get("origami_gs")) is not None]  # fmt: skip
    mcq_svg = ""
    if variants:
        mcq_svg = kit.charts.bars(
            "One-step MCQ accuracy", variants,
            {r["model"]: [kit.num(r.get(f"origami_{v}")) for v in variants] for r in agents},
            {m: [d.get(v) for v in variants] for m, d in REPORTED_MCQ.items()}, "accuracy",
        )  # fmt: skip
    tiers = [t for t in ("easy", "medium", "hard") if f"origami_gs_{t}" in cols]
    gs_svg = ""
    if tiers and any(kit.num(r.get("origami_gs")) is not None for r in agents):
        gs_svg = kit.charts.bars("Full-step GS by tier", tiers,
                             {r["model"]: [kit.num(r.get(f"origami_gs_{t}")) for t in tiers] for r in agents},
                             ylabel="GS (silhouette IoU)")  # fmt: skip
    bcols, brows = inp.csv("breakdown_origami.csv")
    return {
        "mcq_svg": mcq_svg, "gs_svg": gs_svg, "columns": bcols, "left_out": left_out(inp),
        "rows": [[kit.fmt(r.get(c)) if c not in ("model", "task", "tier", "category") else r.get(c, "") for c in bcols] for r in brows],
        "reported": [{"model": m, **d} for m, d in REPORTED_MCQ.items()], "source": SOURCE,
    }  # fmt: skip


def left_out(inp: Any) -> list[dict[str, str]]:
    """Full-step targets dropped at build time (their design did not validate), by design."""
    from shredfold.tasks.origamibench.fullstep import dropped_targets

    dropped = dropped_targets(inp.plan.sets_of("origami_fullstep"), inp.store)
    out = {design.id: why for design, why in dropped.values()}
    return [{"design": d, "why": w} for d, w in sorted(out.items())]


def episodes(inp: Any) -> list[dict[str, Any]]:
    """Origami full-step episodes replayed turn by turn: what the model saw (target, folded
    state, crease pattern), what it did, and what the environment answered."""
    kit = inp.kit
    from shredfold.origami import square_sheet
    from shredfold.origami_bench.env import render_folded, render_pattern, step
    from shredfold.origami_bench.targets import TARGET_STAGE
    from shredfold.tasks.origamibench.fullstep import EPISODE_STAGE

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
            before = (kit.image_uri(render_folded(state, ob.image_size), STATE_THUMB, keep_alpha=False),
                      kit.image_uri(render_pattern(state, ob.image_size), STATE_THUMB, keep_alpha=False))  # fmt: skip
            state, fb, _ = step(state, t["answer"], ob.action)
            turns.append({
                "turn": t["turn"], "folded": before[0], "pattern": before[1], "action": json.dumps(t["action"]),
                "answer": t["answer"][:300], "valid": t["valid"], "feedback": fb.text(), "effective": t["effective"],
            })  # fmt: skip
        target = inp.store.read_bytes(TARGET_STAGE, item, "target.png")
        out.append({
            "model": model, "design": design, "tier": tier, "gs": kit.fmt(str(gs)), "qe": kit.fmt(None if qe is None else str(qe)),
            "target": kit.image_uri(target, STATE_THUMB, keep_alpha=False),
            "final": kit.image_uri(render_folded(state, ob.image_size), STATE_THUMB, keep_alpha=False),
            "turns": turns, "stopped": record.get("stopped"),
        })  # fmt: skip
    return out


SECTIONS = (
    ReportSection("origami", "OrigamiBench", """\
  {% if section.mcq_svg %}<p class="note">Hatched bars: <span class="reported">{{ section.source }}</span>{% for r in section.reported %} — {{ r.model }}: associative {{ "%.2f%%" | format(100 * r.mcq_assoc) }}, causal {{ "%.2f%%" | format(100 * r.mcq_causal) }}{% endfor %}.</p>{{ section.mcq_svg | safe }}{% endif %}
  {{ section.gs_svg | safe }}
  <h3>Accuracy and GS by task, tier and category</h3>
  <div class="scroll"><table>
    <thead><tr>{% for c in section.columns %}<th>{{ c }}</th>{% endfor %}</tr></thead>
    <tbody>{% for r in section.rows %}<tr>{% for v in r %}<td>{{ v }}</td>{% endfor %}</tr>{% else %}<tr><td>no OrigamiBench cells in this plan</td></tr>{% endfor %}</tbody>
  </table></div>
  {% if section.left_out %}<h3>Designs left out</h3>
  <p class="note">Full-step targets dropped because their design did not validate (<code>on_invalid: skip</code>); none of them is in any score above.</p>
  <ul id="left-out">{% for d in section.left_out %}<li><code>{{ d.design }}</code>: {{ d.why }}</li>{% endfor %}</ul>{% endif %}
""", origami),
    ReportSection("episodes", "Episode viewer", """\
  {% for e in section %}
  <div class="episode" data-model="{{ e.model }}">
    <h3>{{ e.model }} · {{ e.design }} ({{ e.tier }}) · GS {{ e.gs }} · QE {{ e.qe }}{% if e.stopped %} · stopped{% endif %}</h3>
    <div class="grid"><div><b>target</b><br><img src="{{ e.target }}" alt="target"></div><div><b>final state</b><br><img src="{{ e.final }}" alt="final state"></div></div>
    <table class="turns">
      <thead><tr><th>turn</th><th>folded state</th><th>crease pattern</th><th>action</th><th>feedback</th></tr></thead>
      <tbody>{% for t in e.turns %}<tr><td>{{ t.turn }}</td><td><img src="{{ t.folded }}" alt="folded state before turn {{ t.turn }}"></td><td><img src="{{ t.pattern }}" alt="crease pattern before turn {{ t.turn }}"></td><td><code>{{ t.action }}</code></td><td class="{{ 'ok' if t.valid else 'bad' }}">{{ t.feedback }}{% if t.effective %} · changed the outline{% endif %}</td></tr>{% endfor %}</tbody>
    </table>
  </div>
  {% else %}<p class="note">No OrigamiBench full-step section in this plan.</p>{% endfor %}
""", episodes),
)  # fmt: skip
