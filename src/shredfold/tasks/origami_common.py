"""What the two OrigamiBench tasks share: where their files go, their row, their breakdown,
and the design catalogue they plan from.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.catalogue import Catalogue, catalogue_key, load_catalogue
from shredfold.origami_bench.design import TIERS, Design
from shredfold.prompts.origami import VERSION as PROMPT_VERSION
from shredfold.spec import OrigamiBenchSpec, ResolvedSpec, SpecError
from shredfold.store import content_key
from shredfold.tasks.base import Breakdown, Cell, ItemSet, Layout, PlanContext, Row, Stage, fill

DIGITS = 6
T = TypeVar("T")
log = logging.getLogger(__name__)
LAYOUT = Layout(
    set="origami/{task}/{tier}",
    query="origami/run/{model}/{task}/{tier}",
    score="origami/score/{model}/{task}/{tier}",
    name="{model}/origami/{task}/{tier}",
)
RUN_STAGE = Stage("origami_run", 1)
SCORE_STAGE = Stage("origami_score", 2)  # 2: rows carry their task (no ShredBench columns)
SET_STAGE = Stage("origami_set", 1)
BREAKDOWN_FILE = "breakdown_origami.csv"
BREAKDOWN_KEYS = ("task", "tier", "category")
BREAKDOWN_LEAD = ("count(*) AS items",)
BREAKDOWN_TRAILER = ("count(error) AS errors",)
LEADERBOARD_TRAILER = ["count(error) AS origami_errors"]
# The unit of resampling for intervals: a design (its items share its difficulty).
DESIGN = "design"


class OrigamiRow(Row):
    item: str
    design: str
    category: str
    model: str
    reference: bool
    benchmark: str
    task: str  # mcq_assoc, mcq_causal, fullstep
    tier: str
    correct: float | None = None
    qe: float | None = None
    gs: float | None = None
    ss: float | None = None
    steps: int | None = None
    invalid: int | None = None
    turns: int | None = None
    stopped: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool
    error: str | None = None
    response: str | None = None

    arrow_types: ClassVar[dict[str, str]] = {
        "steps": "int32",
        "invalid": "int32",
        "turns": "int32",
    }


def origami_spec(spec: ResolvedSpec) -> OrigamiBenchSpec:
    ob = spec.spec.origami
    if ob is None:
        raise ValueError(f"{spec.path}: the spec has no origami section")
    return ob


def catalogue(ctx: PlanContext) -> Catalogue:
    """The spec's designs, made once per plan (both origami tasks plan from them). Design
    files that cannot be used stop the plan, all named in one message, unless the spec says
    ``on_invalid: skip``."""
    cached = getattr(ctx, "_origami_catalogue", None)
    if cached is None:
        ob = origami_spec(ctx.spec)
        with _sources(ctx):
            cached = load_catalogue(ob, ctx.spec.spec.seed, ctx.store, write=ctx.write, key=catalogue_id(ctx))
        if cached.invalid and ob.designs.on_invalid == "stop":
            raise SpecError(
                f"{ctx.spec.path}: origami.designs: {len(cached.invalid)} design file(s) cannot "
                "be used (set origami.designs.on_invalid: skip to leave them out):\n  "
                + "\n  ".join(cached.invalid)
            )
        if cached.invalid:
            log.warning("origami.designs: %d design file(s) left out (on_invalid: skip):\n  %s", len(cached.invalid), "\n  ".join(cached.invalid))
        ctx._origami_catalogue = cached  # type: ignore[attr-defined]
    return cached


def catalogue_id(ctx: PlanContext) -> str:
    """The catalogue's key, once per plan (it hashes every design file)."""
    key = getattr(ctx, "_origami_catalogue_key", None)
    if key is None:
        with _sources(ctx):
            key = catalogue_key(origami_spec(ctx.spec), ctx.spec.spec.seed)
        ctx._origami_catalogue_key = key  # type: ignore[attr-defined]
    return key


@contextmanager
def _sources(ctx: PlanContext) -> Iterator[None]:
    """A design source that is not there (Flat-Folder's designs not fetched) as a spec error."""
    try:
        yield
    except FileNotFoundError as exc:
        raise SpecError(f"{ctx.spec.path}: origami.designs: {exc}") from None


ITEMS_STAGE = Stage("origami_plan_items", 1)


def planned_items(ctx: PlanContext, what: dict[str, Any], item_type: type[T], make: Callable[[], list[T]]) -> list[T]:
    """Items that take seeded choices (numpy's generators) over the catalogue, cached beside
    it: a plan that finds them reads them back with pydantic alone. ``what`` names
    everything besides the catalogue that shapes them."""
    ob = origami_spec(ctx.spec)
    params = {
        **what,
        "catalogue": catalogue_id(ctx),
        "tiers": ob.tiers.model_dump(mode="json"),
        "seed": ctx.spec.spec.seed,
        "engine": ENGINE_VERSION,
    }
    key = content_key(ITEMS_STAGE.name, ITEMS_STAGE.version, params)
    store = ctx.store
    if store is not None and store.has(ITEMS_STAGE.name, key):
        return [item_type.model_validate(x) for x in store.get_json(ITEMS_STAGE.name, key)]
    items = make()
    if store is not None and ctx.write:
        store.put_json(ITEMS_STAGE.name, key, [i.model_dump(mode="json") for i in items])  # type: ignore[attr-defined]
    return items


def tier_sets(task_name: str, variant: str, size: int, items: list[tuple[str, Any]]) -> list[ItemSet]:
    """One set per tier (easy, medium, hard) of ``(key, item)`` pairs, empty tiers dropped."""
    out = []
    for tier in TIERS:
        mine = [item for _, item in items if item.tier == tier]
        if not mine:
            continue
        labels = {"task": variant, "tier": tier}
        params = {"task": variant, "tier": tier, "size": size}
        key = content_key(SET_STAGE.name, SET_STAGE.version, params, [i.key for i in mine])
        out.append(ItemSet(task_name, key, labels, tuple(mine), fill(LAYOUT.set, labels)))
    return out


def run_params(spec: ResolvedSpec) -> dict[str, Any]:
    return {"prompt": PROMPT_VERSION, "engine": ENGINE_VERSION}


def score_params(spec: ResolvedSpec) -> dict[str, Any]:
    from shredfold.metrics.clip import weights_id

    return {"clip": weights_id(origami_spec(spec).clip)}


def accounting(metas: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "input_tokens": sum(m.get("input_tokens", 0) for m in metas),
        "output_tokens": sum(m.get("output_tokens", 0) for m in metas),
        "latency_s": sum(m.get("latency_s", 0.0) for m in metas),
        "cost_usd": sum(m.get("cost_usd", 0.0) for m in metas),
    }


def breakdown(*columns: str) -> Breakdown:
    return Breakdown(BREAKDOWN_FILE, BREAKDOWN_KEYS, columns, BREAKDOWN_LEAD, BREAKDOWN_TRAILER)


class OrigamiTask:
    """What the OrigamiBench tasks have in common (a base for their classes)."""

    benchmark = "origami"
    layout = LAYOUT
    row_type = OrigamiRow
    query_stage = RUN_STAGE
    score_stage = SCORE_STAGE

    def score_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return score_params(spec)

    def sort_columns(self) -> list[str]:
        return []

    def signatures(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> dict[str, str]:
        import json

        return {
            "gs": "silhouette-iou/best-of-8-symmetries/centroid-shift",
            "engine": ENGINE_VERSION,
            "prompt": PROMPT_VERSION,
            "clip": json.dumps(score_params(spec)["clip"], sort_keys=True),
        }

    def row(self, cell: Cell, item: str, design: Design, q: dict[str, Any], **scores: Any) -> OrigamiRow:
        return OrigamiRow(
            item=item,
            design=design.id,
            category=design.category,
            model=cell.model.id,
            reference=cell.model.reference,
            benchmark=self.benchmark,
            task=str(cell.labels["task"]),
            tier=str(cell.labels["tier"]),
            error=q.get("error"),
            cached=bool(q.get("cached")),
            **scores,
        )
