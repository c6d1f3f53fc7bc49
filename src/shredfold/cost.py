"""The bill before it is run: per model, what a plan will ask and what it may cost
(``shredfold plan SPEC --cost``).

For every cell of a model that calls an endpoint, each request is reduced to a
:class:`Shape` — its text tokens, the pixel sizes of its images, a typical answer length —
without building a sample or a model: ShredBench requests carry the sample's pieces (or its
one table-top composite, ``images.mode``), OrigamiBench requests carry ``image_size``²
pictures (five per multiple-choice item, three per full-step turn). Each model then prices
the shapes by its own file: images at the size they are sent (``images.max_side``), counted
by its ``image_tokens`` rule (:mod:`shredfold.models.image_tokens`), text at ~4 characters a
token, and its prices per million tokens. Built-in models run in-process and cost nothing.

Rules of the estimate (also printed with it):

- output: *typical* is the answer's own length (a ShredBench answer is about the document's
  text; an OrigamiBench answer a short JSON object), without any hidden reasoning; *max* is
  ``decoding.max_tokens`` per request, an upper bound (reasoning tokens count toward it);
- full-step episodes are counted at ``step_limit`` turns each, an upper bound (an episode
  may stop earlier), and a turn's text grows with its history (approximated);
- ShredBench image sizes are read from the stored samples (``sample.json`` and the PNG
  headers, through the store) when they exist, else estimated from the page's geometry: the
  page size from the real layout (fonts measured, nothing drawn), each of the N pieces a
  square of :data:`PIECE_AREA` × page area / N, the composite a 4:3 rectangle of
  :data:`COMPOSITE_AREA` × page area (both measured on flat-mode samples: rotated pieces'
  bounding boxes and their shadows take 1.5-2.2 × the page, the scattered table 1.6-2.7 ×);
- every request is counted: answers already in the store (which are not asked again) are
  not subtracted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from shredfold.models import registry
from shredfold.models.accounting import cost_usd, text_tokens
from shredfold.models.budget import SpendLedger, ledger_path
from shredfold.models.endpoints import KeyRoute, key_routes
from shredfold.models.image_tokens import describe, image_tokens, png_size, sent_size
from shredfold.plan import Plan
from shredfold.prompts.origami import HistoryEntry, fullstep_request, mcq_request
from shredfold.prompts.shred import build_request
from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.spec import ModelConfig
from shredfold.store import CorruptObjectError, Store
from shredfold.tasks.base import Cell

PIECE_AREA = 2.0
COMPOSITE_AREA = 2.25
PNG_HEADER = 24
# What a typical OrigamiBench answer looks like (its length is what counts).
MCQ_ANSWER = '{"answer": "A"}'
FOLD_ANSWER = '{"start": [0.5, 0.0], "end": [0.5, 1.0], "assignment": "V"}'
# the step a causal MCQ prompt names, at the longest a coordinate is written (a crease-order
# step naming several lines is longer; most name one)
MCQ_STEP = {"kind": "fold", "start": [-0.1234, 0.1234], "end": [1.1234, -0.1234], "assignment": "M"}
# A full-step turn's vertex list grows as folds cut the sheet: a blank square's 4 corners,
# then about 4 more per earlier turn (an approximation; the list is capped at 200 anyway).
VERTICES_START, VERTICES_PER_TURN = 4, 4

OUTPUT_RULE = (
    "output tokens: typical = the answer's own length (no hidden reasoning); "
    "max = decoding.max_tokens per request, an upper bound"
)
CACHE_RULE = "every request is counted: answers already in the store are not subtracted"


@dataclass(frozen=True)
class Shape:
    """One request as far as its price goes (``count`` identical ones)."""

    text_tokens: int
    images: tuple[tuple[int, int], ...]  # pixel sizes as made, before the adapter downscales
    answer_tokens: int  # typical
    count: int = 1


@dataclass
class ModelCost:
    model: str
    endpoint: bool  # False: a built-in, answered in-process, free
    requests: int = 0
    images: int = 0
    pixels: int = 0  # as sent
    text_tokens: int = 0
    image_tokens: int = 0
    output_tokens_typical: int = 0
    output_tokens_max: int = 0
    usd_typical: float = 0.0
    usd_max: float = 0.0
    image_rule: str = ""
    budget_usd: float | None = None
    spent_usd: float | None = None  # recorded in the model's spend ledger

    @property
    def input_tokens(self) -> int:
        return self.text_tokens + self.image_tokens

    def add(self, cfg: ModelConfig, shape: Shape) -> None:
        sent = [sent_size(w, h, cfg.images.max_side) for w, h in shape.images]
        img = sum(image_tokens(cfg.image_tokens, cfg.images.detail, w, h) for w, h in sent)
        typical = min(shape.answer_tokens, cfg.decoding.max_tokens)
        inp = shape.text_tokens + img
        k = shape.count
        self.requests += k
        self.images += k * len(sent)
        self.pixels += k * sum(w * h for w, h in sent)
        self.text_tokens += k * shape.text_tokens
        self.image_tokens += k * img
        self.output_tokens_typical += k * typical
        self.output_tokens_max += k * cfg.decoding.max_tokens
        self.usd_typical += k * cost_usd(cfg, inp, typical)
        self.usd_max += k * cost_usd(cfg, inp, cfg.decoding.max_tokens)


@dataclass
class CostReport:
    spec: str
    models: list[ModelCost]
    notes: list[str] = field(default_factory=list)
    keys: list[KeyRoute] = field(default_factory=list)  # which variable goes to which host

    def total(self) -> ModelCost:
        t = ModelCost(model="total", endpoint=any(m.endpoint for m in self.models))
        for m in self.models:
            for f in ("requests", "images", "pixels", "text_tokens", "image_tokens",
                      "output_tokens_typical", "output_tokens_max", "usd_typical", "usd_max"):  # fmt: skip
                setattr(t, f, getattr(t, f) + getattr(m, f))
        return t

    def as_json(self) -> dict[str, Any]:
        def row(m: ModelCost) -> dict[str, Any]:
            return {**asdict(m), "input_tokens": m.input_tokens}

        return {"spec": self.spec, "models": [row(m) for m in self.models], "total": row(self.total()),
                "notes": self.notes, "keys": [k.as_json() for k in self.keys]}  # fmt: skip


# ---------------------------------------------------------------- ShredBench image sizes


class ShredSizes:
    """Each sample's image sizes: read from the store when the sample is there (its
    ``sample.json`` and PNG headers), else estimated from its page's geometry."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self._stored: dict[str, dict[str, Any] | None] = {}
        self._pieces: dict[str, list[tuple[int, int]]] = {}
        self.unreadable: list[str] = []

    def _meta(self, key: str) -> dict[str, Any] | None:
        if key not in self._stored:
            meta = None
            if self.store is not None and self.store.has(SAMPLE_STAGE, key):
                try:
                    meta = json.loads(self.store.read_text(SAMPLE_STAGE, key, "sample.json"))
                    if not isinstance(meta, dict):
                        raise ValueError("sample.json is not a mapping")
                except (CorruptObjectError, ValueError) as exc:
                    self.unreadable.append(f"{key[:12]} ({exc})")
                    meta = None
            self._stored[key] = meta
        return self._stored[key]

    def stored(self, keys: Iterable[str]) -> int:
        return sum(self._meta(k) is not None for k in keys)

    def pieces(self, item: Any) -> list[tuple[int, int]]:
        if item.key not in self._pieces:
            self._pieces[item.key] = self._read_pieces(item) or estimate_pieces(item)
        return self._pieces[item.key]

    def _read_pieces(self, item: Any) -> list[tuple[int, int]] | None:
        meta = self._meta(item.key)
        if meta is None or self.store is None:
            return None
        try:
            return [png_size(self.store.read_head(SAMPLE_STAGE, item.key, str(name), PNG_HEADER))
                    for name in meta["piece_files"]]  # fmt: skip
        except (CorruptObjectError, ValueError, KeyError, TypeError) as exc:
            self.unreadable.append(f"{item.key[:12]} ({exc})")
            return None

    def composite(self, item: Any) -> tuple[int, int]:
        meta = self._meta(item.key)
        try:
            if meta is not None:
                c = meta["composite"]
                return int(c["width"]), int(c["height"])
        except (KeyError, TypeError, ValueError) as exc:
            self.unreadable.append(f"{item.key[:12]} ({exc})")
        return estimate_composite(item)


@lru_cache(maxsize=4096)
def _page(doc_json: str, render_json: str) -> tuple[int, int]:
    from shredfold.corpus.document import Document
    from shredfold.shred.render import page_size
    from shredfold.spec import RenderSettings

    return page_size(Document.model_validate_json(doc_json), RenderSettings.model_validate_json(render_json))


def page_of(item: Any) -> tuple[int, int]:
    return _page(item.doc.model_dump_json(), item.render.model_dump_json())


def _outside_sizes(item: Any) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """An outside sample's pieces and composite as the plan measured its files; a composite
    made from the pieces is estimated from their area."""
    ref = item.outside
    pieces = [p.size for p in ref.pieces]
    if ref.composite is not None:
        return pieces, ref.composite.size
    area = COMPOSITE_AREA / PIECE_AREA * sum(w * h for w, h in pieces)
    return pieces, (max(1, round(math.sqrt(area * 4 / 3))), max(1, round(math.sqrt(area * 3 / 4))))


def estimate_pieces(item: Any) -> list[tuple[int, int]]:
    if item.outside is not None:
        return _outside_sizes(item)[0]
    w, h = page_of(item)
    side = max(1, round(math.sqrt(PIECE_AREA * w * h / item.n)))
    return [(side, side)] * item.n


def estimate_composite(item: Any) -> tuple[int, int]:
    if item.outside is not None:
        return _outside_sizes(item)[1]
    w, h = page_of(item)
    area = COMPOSITE_AREA * w * h
    return max(1, round(math.sqrt(area * 4 / 3))), max(1, round(math.sqrt(area * 3 / 4)))


# ---------------------------------------------------------------- request shapes per task


@lru_cache(maxsize=1024)
def _shred_text(kind: str, lang: str, n: int, images: int, composite: bool) -> int:
    request = build_request(kind=kind, lang=lang, n=n, images=[b""] * images, composite=composite, item=None)
    return text_tokens(request.text)


def shred_shapes(cell: Cell, plan: Plan, sizes: ShredSizes) -> list[Shape]:
    if plan.spec.spec.shred is not None and plan.spec.spec.shred.protocol == "paper":
        return paper_shapes(cell, sizes)
    mode = cell.model.images.mode == "composite"
    out = []
    for item in cell.item_set.items:
        # an outside sample given as one photograph shows it to every model (as the request does)
        composite = mode or (item.outside is not None and not item.outside.pieces)
        images = (sizes.composite(item),) if composite else tuple(sizes.pieces(item))
        text = _shred_text(item.kind, item.lang, item.n, len(images), composite)
        out.append(Shape(text, images, text_tokens(item.doc.text)))
    return out


def paper_shapes(cell: Cell, sizes: ShredSizes) -> list[Shape]:
    """The paper's protocol: the composite with its longest side scaled to 2048 px."""
    from shredfold.prompts.shred import paper_request
    from shredfold.shred.presentation import PAPER_LONGEST_SIDE

    text = text_tokens(paper_request(b"", item=None).text)
    out = []
    for item in cell.item_set.items:
        w, h = sizes.composite(item)
        scale = PAPER_LONGEST_SIDE / max(w, h)
        out.append(Shape(text, ((max(1, round(w * scale)), max(1, round(h * scale))),), text_tokens(item.doc.text)))
    return out


def mcq_shapes(cell: Cell, plan: Plan, sizes: ShredSizes) -> list[Shape]:
    ob = plan.spec.spec.origami
    assert ob is not None
    side = (ob.image_size, ob.image_size)
    step = MCQ_STEP if cell.item_set.labels.get("task") == "mcq_causal" else None
    text = text_tokens(mcq_request(b"", [b""] * 4, item=None, step=step).text)
    return [Shape(text, (side,) * 5, text_tokens(MCQ_ANSWER), count=len(cell.item_set.items))]


@lru_cache(maxsize=1024)
def _turn_text(kind: str, turn: int, step_limit: int) -> int:
    action = json.loads(FOLD_ANSWER)
    request = fullstep_request(
        kind=kind,  # type: ignore[arg-type]
        target=b"", folded=b"", pattern=b"",
        vertices=[(0.5, 0.5)] * (VERTICES_START + VERTICES_PER_TURN * (turn - 1)),
        history=[HistoryEntry(action, "valid")] * (turn - 1),
        step_limit=step_limit, item=None,
    )  # fmt: skip
    return text_tokens(request.text)


def fullstep_shapes(cell: Cell, plan: Plan, sizes: ShredSizes) -> list[Shape]:
    ob = plan.spec.spec.origami
    assert ob is not None
    side = (ob.image_size, ob.image_size)
    episodes = len(cell.item_set.items)
    return [
        Shape(_turn_text(ob.action, t, ob.step_limit), (side,) * 3, text_tokens(FOLD_ANSWER), count=episodes)
        for t in range(1, ob.step_limit + 1)
    ]


ShapeFn = Callable[[Cell, Plan, ShredSizes], list[Shape]]
SHAPES: dict[str, ShapeFn] = {
    "shred": shred_shapes,
    "origami_mcq": mcq_shapes,
    "origami_fullstep": fullstep_shapes,
}


def requests_of(cell: Cell, plan: Plan) -> int:
    """How many requests a cell makes (full-step episodes at ``step_limit`` turns)."""
    if cell.task == "origami_fullstep":
        ob = plan.spec.spec.origami
        assert ob is not None
        return len(cell.item_set.items) * ob.step_limit
    return len(cell.item_set.items)


# ---------------------------------------------------------------- the report


def estimate(plan: Plan, store: Store | None = None) -> CostReport:
    """The cost report of a plan; ``store`` (read, never written) gives the sizes of samples
    already made and the spend recorded so far."""
    sizes = ShredSizes(store)
    rows: dict[str, ModelCost] = {}
    for m in plan.spec.models:
        endpoint = registry.concurrent(m)
        rows[m.id] = ModelCost(
            model=m.id,
            endpoint=endpoint,
            image_rule=describe(m.image_tokens, m.images.detail) if endpoint else "built-in: no cost",
            budget_usd=m.budget_usd,
            spent_usd=SpendLedger(ledger_path(store, m.id)).peek().total if store is not None else None,
        )
    unknown: set[str] = set()
    for cell in plan.cells:
        row = rows[cell.model.id]
        if not row.endpoint:
            row.requests += requests_of(cell, plan)
            continue
        shapes = SHAPES.get(cell.task)
        if shapes is None:
            unknown.add(cell.task)
            row.requests += requests_of(cell, plan)
            continue
        for shape in shapes(cell, plan, sizes):
            row.add(cell.model, shape)
    return CostReport(str(plan.spec.path), list(rows.values()), notes(plan, sizes, unknown), key_routes(plan.spec.models))


def notes(plan: Plan, sizes: ShredSizes, unknown: set[str]) -> list[str]:
    out = [OUTPUT_RULE, CACHE_RULE]
    if any(registry.concurrent(c.model) for c in plan.cells if c.task == "shred"):
        keys = {i.key for s in plan.sets_of("shred") for i in s.items}
        stored = sizes.stored(keys)
        out.append(
            f"ShredBench image sizes: {stored} of {len(keys)} samples read from the store, "
            f"{len(keys) - stored} estimated from page geometry (the real page layout; each of "
            f"N pieces a square of {PIECE_AREA:g} × page area / N; the composite a 4:3 "
            f"rectangle of {COMPOSITE_AREA:g} × page area)"
        )
    if sizes.unreadable:
        out.append(f"unreadable stored samples (estimated instead): {', '.join(sizes.unreadable[:5])}")
    ob = plan.spec.spec.origami
    if ob is not None and any(c.task == "origami_fullstep" for c in plan.cells):
        out.append(
            f"OrigamiBench full-step: {ob.step_limit} turns per episode (step_limit), an upper "
            "bound: an episode may stop earlier"
        )
    for task in sorted(unknown):
        out.append(f"task {task}: requests counted, not priced (no cost rule for it)")
    return out


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def render(report: CostReport) -> str:
    """The report as a table, a line per model, a total, and the rules it follows."""
    head = (f"{'model':24s} {'requests':>8s} {'images':>7s} {'Mpx':>8s} {'input tok':>11s} "
            f"{'out tok typ':>11s} {'out tok max':>11s} {'$ typical':>10s} {'$ max':>10s} "
            f"{'budget $':>9s} {'spent $':>9s}")  # fmt: skip

    def line(m: ModelCost) -> str:
        name = m.model if m.endpoint or m.model == "total" else f"{m.model} (built-in)"
        return (f"{name:24s} {m.requests:8d} {m.images:7d} {m.pixels / 1e6:8.1f} {m.input_tokens:11d} "
                f"{m.output_tokens_typical:11d} {m.output_tokens_max:11d} {m.usd_typical:10.4f} "
                f"{m.usd_max:10.4f} {_money(m.budget_usd):>9s} {_money(m.spent_usd):>9s}")  # fmt: skip

    lines = [f"cost estimate for {report.spec} (before any call)", head]
    lines += [line(m) for m in report.models]
    total = report.total()
    total.budget_usd = total.spent_usd = None
    lines.append(line(total))
    lines.append("image tokens:")
    lines += [f"  {m.model}: {m.image_rule}" for m in report.models]
    lines.append("API keys sent (variable -> host):")
    lines += [f"  {k.line()}" for k in report.keys] or ["  none"]
    lines.append("notes:")
    lines += [f"  {n}" for n in report.notes]
    return "\n".join(lines)
