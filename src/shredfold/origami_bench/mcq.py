"""One-step multiple-choice items: plan the item specs, build the five pictures.

Item *specs* are made at plan time (no engine work): which design, which step, where the
answer goes. Items are *built* by the set job (folding and drawing), every random choice
from a generator seeded by the item's key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from shredfold.origami import ENGINE_VERSION, affine
from shredfold.origami_bench.design import TIERS, Design, SimpleFold, replay
from shredfold.origami_bench.items import MCQ_STAGE, MCQ_VERSION, McqSpec, Variant
from shredfold.origami_bench.prompts import LETTERS
from shredfold.store import Readable, content_key, readable

if TYPE_CHECKING:
    from shredfold.origami import FoldState
    from shredfold.origami_bench.crease_order import OrderBook
    from shredfold.origami_bench.solvers.picker import Picture

# The gate on what a model sees: two pictures of an item count as different when at least
# MIN_DIFFERENT_SHARE of their pixels differ by more than PIXEL_TOLERANCE in some channel.
# 0.5% of a 256-pixel picture is ~330 pixels: a flap of 18 x 18 pixels, or a 2-pixel edge
# 160 pixels long. Below it two options differ by a hairline or a sliver (a mountain and a
# valley fold of a symmetric stack differ only by the flap's outline, often ~100 pixels),
# which a model can miss or take for noise (issue 14: 27 of 83 such items were coin flips).
# The tolerance sits far below the smallest colour step of the drawing (white background vs
# cream front: 55) and far above PNG or anti-aliasing noise (none: the drawing is exact).
MIN_DIFFERENT_SHARE = 0.005
PIXEL_TOLERANCE = 32
# An option from another design must not itself be one simple fold of the reference: from
# the blank sheet every one-fold state of any design is, and the prompt promises exactly
# one such option. The picker's fit (outline IoU along the best hull line, times the share
# of untouched pixels that agree) is >= 0.91 for every answer of the default spec's causal
# items and near 1 for such look-alikes.
ONE_FOLD_FIT = 0.85


def rng_for(key: str) -> np.random.Generator:
    return np.random.default_rng(int(key[:16], 16))


def step_count(design: Design, orders: OrderBook | None) -> int:
    """Steps of the design's prefix states: its fold sequence, else its crease order (searched
    here when ``orders`` may; 0 when it has neither)."""
    if design.sequence is not None:
        return len(design.sequence)
    if orders is None:
        return 0
    found = orders.get(design)
    return len(found.steps) if found.steps else 0


def plan_mcq(
    designs: Sequence[Design], variant: Variant, n_items: int, seed: int, size: int, orders: OrderBook | None = None
) -> list[McqSpec]:
    """``n_items`` item specs over the designs that have a fold sequence (their own, or
    shipped simple folds, :mod:`.simple_folds`), or (with ``orders``) a crease order.

    Designs are visited round-robin in a seeded order; the reference step is seeded per
    item. Answer positions are balanced within each tier (a seeded shuffle of 0,1,2,3,…).
    Crease orders are searched only for the designs the items reach, in that order, until
    ``n_items`` designs have steps (the rest of the catalogue costs nothing).
    """
    from shredfold.origami_bench.simple_folds import with_simple_folds

    # designs without a fold sequence take their shipped simple folds (:mod:`.simple_folds`)
    designs = [with_simple_folds(d) for d in designs]
    candidates = [d for d in designs if d.sequence or (orders is not None and d.sequence is None)]
    if not candidates:
        return []
    base = content_key("origami_mcq_plan", MCQ_VERSION, {"variant": variant, "seed": seed})
    pool: list[tuple[Design, int]] = []
    for j in rng_for(base).permutation(len(candidates)):
        if len(pool) == n_items:
            break
        n = step_count(candidates[int(j)], orders)
        if n:
            pool.append((candidates[int(j)], n))
    if not pool:
        return []
    drafts = []
    for i in range(n_items):
        d, n = pool[i % len(pool)]
        k = int(rng_for(content_key("origami_mcq_step", MCQ_VERSION, {"base": base, "i": i})).integers(n))
        drafts.append((i, d, k))
    out: list[McqSpec] = []
    for tier in TIERS:
        mine = [x for x in drafts if x[1].tier == tier]
        pos = [j % 4 for j in range(len(mine))]
        pos = [pos[j] for j in rng_for(content_key("origami_mcq_pos", MCQ_VERSION, {"base": base, "tier": tier})).permutation(len(pos))]
        for (i, d, k), a in zip(mine, pos, strict=True):
            params: dict[str, object] = {"variant": variant, "i": i, "k": k, "answer": a, "size": size, "engine": ENGINE_VERSION}
            if d.sequence is None and orders is not None:
                from shredfold.origami_bench.crease_order import order_key

                params["crease_order"] = order_key(d, orders.budget)  # the steps the item shows
            key = content_key(MCQ_STAGE, MCQ_VERSION, params, [d.key])
            out.append(McqSpec(key=key, variant=variant, index=i, design=d, k=k, answer=a, tier=tier))
    return sorted(out, key=lambda s: s.index)


class StateCache:
    """Every prefix state of each design, made once per process: its fold sequence replayed,
    or (with ``orders``) its crease order replayed through the crease action."""

    def __init__(self, orders: OrderBook | None = None) -> None:
        self._states: dict[str, list[FoldState]] = {}
        self.orders = orders

    def has_steps(self, design: Design) -> bool:
        """Whether the design has prefix states without a new search."""
        if design.sequence:
            return True
        known = self.orders.known(design) if self.orders is not None and design.sequence is None else None
        return known is not None and known.found

    def crease_steps(self, design: Design) -> tuple[tuple[dict[str, object], ...], ...] | None:
        """The design's crease order (None for a design with a fold sequence); raises
        ValueError for a design with neither."""
        if design.sequence is not None:
            return None
        found = self.orders.get(design) if self.orders is not None else None
        if found is None or found.steps is None:
            why = found.reason if found is not None else "no crease orders given"
            raise ValueError(f"design {design.id} has no fold sequence and no crease order ({why})")
        return found.steps

    def prefixes(self, design: Design) -> list[FoldState]:
        if design.key not in self._states:
            steps = self.crease_steps(design)
            if steps is not None:
                from shredfold.origami_bench.crease_order import bare_sheet, replay_order

                self._states[design.key] = replay_order(bare_sheet(design.pattern()), steps)
            else:
                self._states[design.key] = replay(design.steps() or [])
        return self._states[design.key]


@dataclass(frozen=True)
class McqItem:
    reference: bytes
    options: tuple[bytes, ...]
    answer: str
    kinds: tuple[str, ...]  # what each option is: "answer", "later", "earlier", "other-assignment", …
    rejected: tuple[str, ...] = ()  # "kind:why" of candidates the gates turned away (later ones replaced them)
    # the causal variant's step, named in its prompt (:func:`step_of`); None for associative
    step: dict[str, object] | None = None


class McqDropped(ValueError):
    """An item that cannot be made answerable from its pictures (the reason says why)."""


def different_share(a: Picture, b: Picture) -> float:
    """Share of pixels that differ clearly between two decoded pictures of one size."""
    return float((np.abs(a.rgb - b.rgb).max(axis=2) > PIXEL_TOLERANCE).mean())


def distinct(a: Picture, b: Picture) -> bool:
    return a.rgb.shape == b.rgb.shape and different_share(a, b) >= MIN_DIFFERENT_SHARE


def _nearby(state: FoldState, s: SimpleFold, rng: np.random.Generator) -> FoldState | None:
    """The same fold along a line turned or shifted a little."""
    from shredfold.origami import FoldState, fold

    p, q = np.array(s.start), np.array(s.end)
    mid, d = (p + q) / 2, q - p
    for _ in range(12):
        ang = rng.choice([-1, 1]) * rng.uniform(np.deg2rad(8), np.deg2rad(25))
        rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
        shift = rng.uniform(-0.08, 0.08) * np.array([-d[1], d[0]]) / (np.hypot(*d) or 1)
        turned = affine.linear(rot, d)
        a, b = mid + shift - turned / 2, mid + shift + turned / 2
        new = fold(state, tuple(a), tuple(b), s.assignment)
        if isinstance(new, FoldState):
            return new
    return None


def _other_assignment(state: FoldState, step: Sequence[dict[str, object]]) -> FoldState | None:
    """The same crease step with mountains and valleys swapped (None if it does not fold flat)."""
    from shredfold.origami import FoldState, crease

    swap = {"M": "V", "V": "M"}
    for a in step:
        new = crease(state, tuple(a["start"]), tuple(a["end"]), swap.get(str(a["assignment"]), str(a["assignment"])))  # type: ignore[arg-type]
        if not isinstance(new, FoldState):
            return None
        state = new
    return state if state.flat_foldable else None


def step_of(spec: McqSpec, cache: StateCache) -> dict[str, object]:
    """The step from the reference to the answer, as the causal prompt names it: the fold
    sequence's next simple fold (folded-plane coordinates), or the crease order's next
    crease lines (sheet coordinates)."""
    creases = cache.crease_steps(spec.design)
    if creases is not None:
        lines = [{"start": list(c["start"]), "end": list(c["end"]), "assignment": c["assignment"]} for c in creases[spec.k]]  # type: ignore[call-overload]
        return {"kind": "crease", "creases": lines}
    nxt = (spec.design.steps() or [])[spec.k]
    return {"kind": "fold", **nxt.as_action()}


def build_mcq(spec: McqSpec, designs: Sequence[Design], size: int, cache: StateCache) -> McqItem:
    from shredfold.origami import FoldState, fold
    from shredfold.origami_bench.env import render_folded
    from shredfold.origami_bench.solvers.picker import decode, fold_fit

    rng = rng_for(spec.key)
    states = cache.prefixes(spec.design)
    steps = spec.design.steps() or []
    ref, right = states[spec.k], states[spec.k + 1]
    ref_png, right_png = render_folded(ref, size), render_folded(right, size)
    taken = [decode(ref_png), decode(right_png)]
    if not distinct(*taken):
        raise McqDropped(
            f"the answer differs from the reference in {different_share(*taken):.2%} of the "
            f"pixels (< {MIN_DIFFERENT_SHARE:.1%})"
        )
    distractors: list[tuple[str, bytes]] = []
    rejected: list[str] = []

    def offer(kind: str, st: FoldState | None) -> None:
        if st is None or len(distractors) >= 3:
            return
        png = render_folded(st, size)
        pic = decode(png)
        if not all(distinct(pic, t) for t in taken):
            rejected.append(f"{kind}:close")
        elif kind == "unrelated" and fold_fit(taken[0], pic).score >= ONE_FOLD_FIT:
            rejected.append(f"{kind}:one-fold")
        else:
            taken.append(pic)
            distractors.append((kind, png))

    creases = cache.crease_steps(spec.design)
    if spec.variant == "mcq_causal" and creases is not None:
        pool_c: list[tuple[str, FoldState | None]] = [
            ("later", states[spec.k + 2] if spec.k + 2 < len(states) else None),
            ("earlier", states[spec.k - 1] if spec.k >= 1 else None),
            # from the bare sheet the swapped lines are the whole pattern swapped: the same
            # folded object turned over, which a named step cannot tell from the answer
            ("other-assignment", _other_assignment(ref, creases[spec.k]) if spec.k >= 1 else None),
        ]
        for j in rng.permutation(len(pool_c)):
            offer(*pool_c[int(j)])
    elif spec.variant == "mcq_causal":
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
    from shredfold.origami_bench.simple_folds import with_simple_folds

    others = [o for o in map(with_simple_folds, designs) if o.key != spec.design.key and cache.has_steps(o)]
    for _ in range(40):  # associative, and the causal variant's last resort
        if len(distractors) >= 3 or not others:
            break
        d = others[int(rng.integers(len(others)))]
        pre = cache.prefixes(d)
        offer("unrelated", pre[int(rng.integers(1, len(pre)))])
    if len(distractors) < 3:
        raise McqDropped(f"found {len(distractors)} distractors clearly distinct from the other pictures, not 3")
    options: list[tuple[str, bytes]] = list(distractors)
    options.insert(spec.answer, ("answer", right_png))
    step = step_of(spec, cache) if spec.variant == "mcq_causal" else None
    return McqItem(
        ref_png, tuple(p for _, p in options), spec.letter, tuple(k for k, _ in options), tuple(rejected), step
    )


def write_mcq(item: McqItem | McqDropped, folder: str | Path) -> None:
    """An item's pictures and item.json; a dropped item is an item.json saying why."""
    out = Path(folder)
    if isinstance(item, McqDropped):
        (out / "item.json").write_text(json.dumps({"dropped": str(item)}))
        return
    for name, png in (("reference", item.reference), *((f"option_{c}", p) for c, p in zip(LETTERS, item.options, strict=True))):
        (out / f"{name}.png").write_bytes(png)
    meta: dict[str, object] = {"answer": item.answer, "kinds": list(item.kinds), "rejected": list(item.rejected)}
    if item.step is not None:
        meta["step"] = item.step
    (out / "item.json").write_text(json.dumps(meta))


def read_mcq(src: Readable | str | Path) -> McqItem | None:
    """A stored item (None: the build dropped it; its item.json says why)."""
    f = readable(src)
    meta = json.loads(f.read_text("item.json"))
    if "dropped" in meta:
        return None
    return McqItem(
        f.read_bytes("reference.png"),
        tuple(f.read_bytes(f"option_{c}.png") for c in LETTERS),
        meta["answer"],
        tuple(meta["kinds"]),
        tuple(meta.get("rejected", ())),
        meta.get("step"),
    )
