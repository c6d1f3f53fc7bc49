"""OrigamiBench task items: one-step multiple choice and full-step synthesis targets.

Item *specs* are made at plan time (pure, no engine work): which design, which step, where
the answer goes. Items are *built* by the set job (folding and drawing), every random choice
from a generator seeded by the item's key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from shredfold.prompts.origami import LETTERS
from shredfold.spec import TIERS
from shredfold.store import content_key

from . import ENGINE_VERSION, FoldState, fold, write_fold
from .designs import Design
from .env import render_folded, silhouette
from .procedural import SimpleFold, replay

MCQ_STAGE, MCQ_VERSION = "origami_mcq", 1
TARGET_STAGE, TARGET_VERSION = "origami_target", 1

Variant = Literal["mcq_assoc", "mcq_causal"]


def rng_for(key: str) -> np.random.Generator:
    return np.random.default_rng(int(key[:16], 16))


# ---------------------------------------------------------------- multiple choice


@dataclass(frozen=True)
class McqSpec:
    key: str
    variant: Variant
    index: int
    design: Design
    k: int  # folds in the reference state; the answer has k + 1
    answer: int  # 0..3, position of the right option
    tier: str

    @property
    def letter(self) -> str:
        return LETTERS[self.answer]


def plan_mcq(designs: Sequence[Design], variant: Variant, n_items: int, seed: int, size: int) -> list[McqSpec]:
    """``n_items`` item specs over the designs that have a fold sequence.

    Designs are visited round-robin in a seeded order; the reference step is seeded per
    item. Answer positions are balanced within each tier (a seeded shuffle of 0,1,2,3,…).
    """
    pool = [d for d in designs if d.sequence]
    if not pool:
        return []
    base = content_key("origami_mcq_plan", MCQ_VERSION, {"variant": variant, "seed": seed})
    order = rng_for(base).permutation(len(pool))
    drafts = []
    for i in range(n_items):
        d = pool[int(order[i % len(pool)])]
        k = int(rng_for(content_key("origami_mcq_step", MCQ_VERSION, {"base": base, "i": i}))
                .integers(len(d.sequence or ())))
        drafts.append((i, d, k))
    out: list[McqSpec] = []
    for tier in ("easy", "medium", "hard"):
        mine = [x for x in drafts if x[1].tier == tier]
        pos = [j % 4 for j in range(len(mine))]
        pos = [pos[j] for j in rng_for(content_key("origami_mcq_pos", MCQ_VERSION, {"base": base, "tier": tier})).permutation(len(pos))]
        for (i, d, k), a in zip(mine, pos, strict=True):
            params = {"variant": variant, "i": i, "k": k, "answer": a, "size": size, "engine": ENGINE_VERSION}
            key = content_key(MCQ_STAGE, MCQ_VERSION, params, [d.key])
            out.append(McqSpec(key, variant, i, d, k, a, tier))
    return sorted(out, key=lambda s: s.index)


class StateCache:
    """Every prefix state of each design's sequence, made once per process."""

    def __init__(self) -> None:
        self._states: dict[str, list[FoldState]] = {}

    def prefixes(self, design: Design) -> list[FoldState]:
        if design.key not in self._states:
            self._states[design.key] = replay(design.steps() or [])
        return self._states[design.key]


@dataclass(frozen=True)
class McqItem:
    reference: bytes
    options: tuple[bytes, ...]
    answer: str
    kinds: tuple[str, ...]  # what each option is: "answer", "later", "earlier", "other-assignment", …


def _nearby(state: FoldState, s: SimpleFold, rng: np.random.Generator) -> FoldState | None:
    """The same fold along a line turned or shifted a little."""
    p, q = np.array(s.start), np.array(s.end)
    mid, d = (p + q) / 2, q - p
    for _ in range(12):
        ang = rng.choice([-1, 1]) * rng.uniform(np.deg2rad(8), np.deg2rad(25))
        rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
        shift = rng.uniform(-0.08, 0.08) * np.array([-d[1], d[0]]) / (np.hypot(*d) or 1)
        a, b = mid + shift - rot @ d / 2, mid + shift + rot @ d / 2
        new = fold(state, tuple(a), tuple(b), s.assignment)
        if isinstance(new, FoldState):
            return new
    return None


def build_mcq(spec: McqSpec, designs: Sequence[Design], size: int, cache: StateCache) -> McqItem:
    rng = rng_for(spec.key)
    states = cache.prefixes(spec.design)
    steps = spec.design.steps() or []
    ref, right = states[spec.k], states[spec.k + 1]
    ref_png, right_png = render_folded(ref, size), render_folded(right, size)
    taken = {ref_png, right_png}
    distractors: list[tuple[str, bytes]] = []

    def offer(kind: str, st: FoldState | None) -> None:
        if st is None or len(distractors) >= 3:
            return
        png = render_folded(st, size)
        if png not in taken:
            taken.add(png)
            distractors.append((kind, png))

    if spec.variant == "mcq_causal":
        nxt = steps[spec.k]
        other = "M" if nxt.assignment == "V" else "V"
        flipped = fold(ref, nxt.start, nxt.end, other)
        pool: list[tuple[str, FoldState | None]] = [
            ("later", states[spec.k + 2] if spec.k + 2 < len(states) else None),
            ("earlier", states[spec.k - 1] if spec.k >= 1 else None),
            ("other-assignment", flipped if isinstance(flipped, FoldState) else None),
            ("nearby-line", _nearby(ref, nxt, rng)),
        ]
        for j in rng.permutation(len(pool)):
            offer(*pool[int(j)])
        for _ in range(6):
            offer("nearby-line", _nearby(ref, nxt, rng))
    others = [d for d in designs if d.sequence and d.key != spec.design.key]
    for _ in range(40):  # associative, and the causal variant's last resort
        if len(distractors) >= 3 or not others:
            break
        d = others[int(rng.integers(len(others)))]
        pre = cache.prefixes(d)
        offer("unrelated", pre[int(rng.integers(1, len(pre)))])
    if len(distractors) < 3:
        raise ValueError(f"item {spec.key[:12]}: could not find three distinct distractors")
    options: list[tuple[str, bytes]] = list(distractors)
    options.insert(spec.answer, ("answer", right_png))
    return McqItem(ref_png, tuple(p for _, p in options), spec.letter, tuple(k for k, _ in options))


def write_mcq(item: McqItem, folder: str) -> None:
    from pathlib import Path

    out = Path(folder)
    (out / "reference.png").write_bytes(item.reference)
    for letter, png in zip(LETTERS, item.options, strict=True):
        (out / f"option_{letter}.png").write_bytes(png)
    (out / "item.json").write_text(json.dumps({"answer": item.answer, "kinds": list(item.kinds)}))


def read_mcq(folder: str) -> McqItem:
    from pathlib import Path

    f = Path(folder)
    meta = json.loads((f / "item.json").read_text())
    return McqItem(
        (f / "reference.png").read_bytes(),
        tuple((f / f"option_{c}.png").read_bytes() for c in LETTERS),
        meta["answer"],
        tuple(meta["kinds"]),
    )


# ---------------------------------------------------------------- full-step targets


def target_key(design: Design, size: int) -> str:
    return content_key(TARGET_STAGE, TARGET_VERSION, {"size": size, "engine": ENGINE_VERSION}, [design.key])


def solve_target(design: Design, size: int, folder: str) -> None:
    """Solve a design's folded state once: target.png, silhouette.npy, state.fold, meta.json."""
    from pathlib import Path

    out = Path(folder)
    state = design.target_state()
    (out / "target.png").write_bytes(render_folded(state, size))
    np.save(out / "silhouette.npy", silhouette(state, size))
    (out / "state.fold").write_text(write_fold(state.pattern.to_fold_frame(state.layers.face_orders)))
    meta = {
        "design": design.id,
        "design_key": design.key,
        "category": design.category,
        "tier": design.tier,
        "flat_foldable": state.flat_foldable,
        "sequence": list(design.sequence) if design.sequence else None,
        "engine_version": ENGINE_VERSION,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))


# ---------------------------------------------------------------- the plan's share

RUN_STAGE, RUN_VERSION = "origami_run", 1
ORIGAMI_SCORE_STAGE, ORIGAMI_SCORE_VERSION = "origami_score", 1


def plan_origami(resolved: Any, identities: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """Origami sets (task × tier) and cells (model × task × tier) of a resolved spec."""
    from pathlib import Path

    from shredfold.plan import Cell, OrigamiSet, supports
    from shredfold.prompts.origami import VERSION as PROMPT_VERSION
    from shredfold.store import Store

    from .designs import load_designs

    spec = resolved.spec
    ob = spec.origami
    designs = load_designs(ob, spec.seed, Store(Path("results/store")))
    sets: dict[str, OrigamiSet] = {}
    for task in ob.tasks:
        if task == "fullstep":
            chosen = _fullstep_designs(designs, ob.fullstep_targets, spec.seed)
            by_tier = {t: [(target_key(d, ob.image_size), d) for d in chosen if d.tier == t] for t in TIERS}
        else:
            specs = plan_mcq(designs, task, ob.mcq_items, spec.seed, ob.image_size)
            by_tier = {t: [(s.key, s) for s in specs if s.tier == t] for t in TIERS}
        for tier, pairs in by_tier.items():
            if not pairs:
                continue
            keys = tuple(k for k, _ in pairs)
            params = {"task": task, "tier": tier, "size": ob.image_size}
            skey = content_key("origami_set", 1, params, list(keys))
            sets[skey] = OrigamiSet(task, tier, skey, tuple(x for _, x in pairs), keys)
    env = {"action": ob.action, "step_limit": ob.step_limit, "size": ob.image_size}
    cells = []
    for model in resolved.models:
        if not supports(model, "origami"):
            continue
        ident = identities[model.id]
        for s in sets.values():
            params = {"model": ident, "prompt": PROMPT_VERSION, "engine": ENGINE_VERSION}
            if s.task == "fullstep":
                params["env"] = env
            qkey = content_key(RUN_STAGE, RUN_VERSION, params, [s.key])
            score_params = {"model_id": model.id, "reference": model.reference, "clip": _clip_id(ob)}
            skey = content_key(ORIGAMI_SCORE_STAGE, ORIGAMI_SCORE_VERSION, score_params, [qkey])
            cells.append(
                Cell(
                    benchmark="origami",
                    model=model,
                    identity=ident,
                    domain=s.task,
                    query_key=qkey,
                    score_key=skey,
                    origami_set=s,
                )
            )
    return sets, cells


def _clip_id(ob: Any) -> dict[str, Any]:
    from shredfold.metrics.clip import weights_id

    return weights_id(ob.clip)


def _fullstep_designs(designs: Sequence[Design], limit: int | None, seed: int) -> list[Design]:
    if limit is None or limit >= len(designs):
        return list(designs)
    order = rng_for(content_key("origami_fullstep_pick", 1, {"seed": seed})).permutation(len(designs))
    keep = sorted(int(i) for i in order[:limit])
    return [designs[i] for i in keep]
