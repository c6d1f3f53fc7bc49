"""The OrigamiBench environment: a closed loop of observation → model answer → action.

Pure core: :func:`step` takes a state and a model's raw answer and returns the new state
(unchanged when the action is rejected) with feedback. :func:`run_episode` drives the loop
through an ``ask`` callable, so the caller decides how requests reach a model (in-process,
over HTTP, from the cache); every turn records the engine version and a hash of the state.
Nothing a model writes can end an episode early except ``{"stop": true}``: unparsable
answers, unknown fields, points off the sheet and impossible folds are rejected with a reason
and count as steps.
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import shapely
from PIL import Image, ImageDraw

from shredfold.calls import Request
from shredfold.metrics.shape import VIEW, aligned_iou
from shredfold.origami import (
    ENGINE_VERSION,
    FoldState,
    Rejection,
    crease,
    draw_crease_pattern,
    draw_folded,
    fold,
    folded_silhouette,
    silhouette_mask,
    square_sheet,
)
from shredfold.origami_bench.prompts import (
    Action,
    ActionKind,
    AnswerError,
    HistoryEntry,
    Stop,
    fullstep_request,
    parse_action,
)

log = logging.getLogger(__name__)

Ask = Callable[[Request], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class EnvConfig:
    kind: ActionKind = "fold"
    step_limit: int = 6
    image_size: int = 256


@dataclass(frozen=True)
class Feedback:
    valid: bool
    reason: str = ""  # "" when valid; "stop"; else a parse or engine reason
    detail: str = ""

    def text(self) -> str:
        if self.valid:
            return "valid"
        return f"rejected ({self.reason}): {self.detail}"


# ---------------------------------------------------------------- pictures


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def render_folded(state: FoldState, size: int) -> bytes:
    """The folded state over :data:`VIEW` (a fixed frame, so states compare by position)."""
    if not state.flat_foldable or state.layers.face_orders is None:
        img = Image.new("RGB", (size, size), (255, 255, 255))
        ImageDraw.Draw(img).text((8, 8), "does not fold flat", fill=(200, 0, 0))
        return png_bytes(img)
    return png_bytes(draw_folded(state.geometry, state.layers.face_orders, size=size, bounds=VIEW))


def render_pattern(state: FoldState, size: int) -> bytes:
    return png_bytes(draw_crease_pattern(state.pattern, size=size))


def silhouette(state: FoldState, size: int) -> np.ndarray:
    """Boolean mask of the folded outline over :data:`VIEW` (empty when not flat)."""
    if not state.flat_foldable:
        return np.zeros((size, size), bool)
    return np.asarray(silhouette_mask(state.geometry, size=size, bounds=VIEW), bool)


def state_hash(state: FoldState) -> str:
    """SHA-256 of the crease pattern and folded vertex positions (rounded to 1e-9)."""
    h = hashlib.sha256()
    h.update(np.round(state.pattern.vertices, 9).astype("<f8").tobytes())
    h.update(state.pattern.edges.astype("<i8").tobytes())
    h.update("".join(state.pattern.assignments.tolist()).encode())
    h.update(np.round(state.geometry.vertices, 9).astype("<f8").tobytes())
    return h.hexdigest()


def outline_changed(before: FoldState, after: FoldState) -> bool:
    if not (before.flat_foldable and after.flat_foldable):
        return before.flat_foldable != after.flat_foldable
    a, b = folded_silhouette(before.geometry), folded_silhouette(after.geometry)
    return float(shapely.symmetric_difference(a, b).area) > 1e-9


# ---------------------------------------------------------------- one step


# The latest actions applied, by the content of the state and the action: an in-process
# agent (the built-in ones) tries the fold it answers, and the environment then applies that
# very fold to an equal state; on a thick stack one fold costs up to a second.
_APPLIED: OrderedDict[bytes, FoldState | Rejection] = OrderedDict()
_APPLIED_ENTRIES = 4
_APPLIED_LOCK = threading.Lock()


def apply(state: FoldState, action: Action, kind: ActionKind) -> FoldState | Rejection:
    key = _apply_key(state, action, kind)
    with _APPLIED_LOCK:
        if key in _APPLIED:
            _APPLIED.move_to_end(key)
            return _APPLIED[key]
    op = fold if kind == "fold" else crease
    try:
        out = op(state, action.start, action.end, action.assignment)
    except Exception as exc:  # noqa: BLE001 - a model's action must never crash an episode
        log.warning("engine raised on %s: %r", action, exc)
        return Rejection("syntax", f"the engine could not apply this action ({type(exc).__name__})")
    with _APPLIED_LOCK:
        _APPLIED[key] = out
        while len(_APPLIED) > _APPLIED_ENTRIES:
            _APPLIED.popitem(last=False)
    return out


def _apply_key(state: FoldState, action: Action, kind: ActionKind) -> bytes:
    """Everything an action's outcome reads, exactly (states are immutable)."""
    h = hashlib.sha256()
    pattern, geom, orders = state.pattern, state.geometry, state.layers.face_orders
    for arr in (pattern.vertices, pattern.edges, geom.vertices, geom.transforms, geom.flipped):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    h.update("".join(pattern.assignments.tolist()).encode())
    h.update(b"|" if orders is None else np.ascontiguousarray(orders, np.int64).tobytes())
    h.update(repr((state.layers.status, state.steps, state.lattice, pattern.eps, kind, action)).encode())
    return h.digest()


def step(state: FoldState, answer: str, kind: ActionKind) -> tuple[FoldState, Feedback, Action | Stop | None]:
    """Apply a model's raw answer: the new state (or the same one), feedback, the parsed action."""
    try:
        parsed = parse_action(answer)
    except AnswerError as exc:
        return state, Feedback(False, exc.reason, exc.detail), None
    if isinstance(parsed, Stop):
        return state, Feedback(True, "stop"), parsed
    new = apply(state, parsed, kind)
    if isinstance(new, Rejection):
        return state, Feedback(False, new.reason, new.detail), parsed
    return new, Feedback(True), parsed


# ---------------------------------------------------------------- an episode


@dataclass
class Turn:
    turn: int
    answer: str
    action: dict[str, Any] | None
    valid: bool
    reason: str
    detail: str
    effective: bool  # accepted and changed the folded outline
    state_hash: str
    engine_version: str
    seconds: float  # environment time of the turn (rendering + step), not the model's
    meta: dict[str, Any] = field(default_factory=dict)  # response key, tokens, cost, cached


@dataclass
class Episode:
    turns: list[Turn]
    final: FoldState
    stopped: bool
    error: str | None = None

    @property
    def steps(self) -> int:
        """Actions taken, the stop excluded."""
        return sum(1 for t in self.turns if t.reason != "stop")

    def record(self) -> dict[str, Any]:
        return {
            "turns": [asdict(t) for t in self.turns],
            "stopped": self.stopped,
            "error": self.error,
            "final_hash": state_hash(self.final),
            "engine_version": ENGINE_VERSION,
        }


def vertex_list(state: FoldState, kind: ActionKind) -> list[tuple[float, float]]:
    pts = state.geometry.vertices if kind == "fold" else state.pattern.vertices
    return [(float(x), float(y)) for x, y in pts]


def turn_request(
    state: FoldState, target_png: bytes, cfg: EnvConfig, history: list[HistoryEntry], item: str | None
) -> Request:
    """What a model is shown on a turn: the target, the current state and pattern, the vertices."""
    return fullstep_request(
        kind=cfg.kind,
        target=target_png,
        folded=render_folded(state, cfg.image_size),
        pattern=render_pattern(state, cfg.image_size),
        vertices=vertex_list(state, cfg.kind),
        history=history,
        step_limit=cfg.step_limit,
        item=item,
    )


def recorded_action(parsed: Action | Stop | None) -> dict[str, Any] | None:
    """The action as a turn records it and the history shows it (None: it did not parse)."""
    if isinstance(parsed, Action):
        return parsed.as_json()
    return {"stop": True} if parsed else None


def gs(final: np.ndarray, target: np.ndarray) -> float:
    """GS of a final silhouette against the target's, as the full-step score records it."""
    return round(aligned_iou(final, target), 6)


def run_episode(
    target_png: bytes, cfg: EnvConfig, ask: Ask, item: str | None, start: FoldState | None = None
) -> Episode:
    """Run one full-step episode; ``ask`` raising ``ModelCallError`` ends it with ``error``."""
    from shredfold.calls import ModelCallError

    state = start or square_sheet()
    history: list[HistoryEntry] = []
    turns: list[Turn] = []
    while len(turns) < cfg.step_limit:
        t0 = time.perf_counter()
        request = turn_request(state, target_png, cfg, history, item)
        env_s = time.perf_counter() - t0
        try:
            answer, meta = ask(request)
        except ModelCallError as exc:
            return Episode(turns, state, stopped=False, error=str(exc))
        t1 = time.perf_counter()
        new, fb, parsed = step(state, answer, cfg.kind)
        effective = fb.valid and fb.reason != "stop" and outline_changed(state, new)
        action = recorded_action(parsed)
        turns.append(
            Turn(
                turn=len(turns) + 1,
                answer=answer,
                action=action,
                valid=fb.valid,
                reason=fb.reason,
                detail=fb.detail,
                effective=effective,
                state_hash=state_hash(new),
                engine_version=ENGINE_VERSION,
                seconds=env_s + time.perf_counter() - t1,
                meta=meta,
            )
        )
        state = new
        if isinstance(parsed, Stop):
            return Episode(turns, state, stopped=True)
        history.append(HistoryEntry(action if isinstance(parsed, Action) else None, fb.text()))
    return Episode(turns, state, stopped=False)


def replay_actions(actions: list[dict[str, Any]], kind: ActionKind, start: FoldState | None = None) -> FoldState:
    """The state after the accepted actions of a history (rejected ones change nothing)."""
    import json

    state = start or square_sheet()
    for a in actions:
        state, _, _ = step(state, json.dumps(a), kind)
    return state
