"""What the two OrigamiBench tasks share: where their files go, their row, their breakdown,
and the design catalogue they plan from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.catalogue import Catalogue, catalogue_key, load_catalogue
from shredfold.origami_bench.design import ROOTS, TIERS, Design, DesignRoots, builtin_folder
from shredfold.origami_bench.prompts import VERSION as PROMPT_VERSION
from shredfold.spec import OrigamiBenchSpec, ResolvedSpec, spec_error_at
from shredfold.store import content_key
from shredfold.tasks.base import (
    Cell,
    Column,
    ItemSet,
    Layout,
    Licence,
    PlanContext,
    Row,
    Stage,
    fill,
)
from shredfold.tasks.manifest import ManifestRow
from shredfold.tasks.metric import (
    ERRORS,
    ITEMS,
    Board,
    Breakdown,
    Field,
    Metric,
    Ratio,
    Scope,
    Split,
    least,
    mean,
    row_type,
    total,
)

T = TypeVar("T")
LAYOUT = Layout(
    set="origami/{task}/{tier}",
    query="origami/run/{model}/{task}/{tier}",
    score="origami/score/{model}/{task}/{tier}",
    name="{model}/origami/{task}/{tier}",
)
RUN_STAGE = Stage("origami_run", 1)
# 3: rows carry their task and ss_weights (the weights SS was scored with)
SCORE_STAGE = Stage("origami_score", 3)
SET_STAGE = Stage("origami_set", 1)
# The unit of resampling for intervals: a design (its items share its difficulty).
DESIGN = ("design",)


class OrigamiKeys(Row):
    """What names an OrigamiBench row's item (the row's first columns)."""

    item: str
    design: str
    category: str
    model: str
    reference: bool
    benchmark: str
    task: str  # mcq_assoc, mcq_causal, fullstep
    tier: str


class OrigamiTail(BaseModel):
    """What an OrigamiBench answer cost and whether it failed (the row's last columns)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool
    error: str | None = None
    response: str | None = None


# Both tasks' values share one row (one benchmark, one table schema); each task's board and
# breakdown pick their own metrics. Empty where a task has no such value.
ACCURACY = Metric("accuracy", mean("correct"), field=Field("correct", float | None))  # MCQ
QE = Metric.score("qe", float | None)  # full step, and the four below
GS = Metric.score("gs", float | None)
SS = Metric.score("ss", float | None)
# the CLIP weights SS used, by the SHA-256 of their bytes
SS_WEIGHTS = Metric("ss_weights", least("ss_weights"), digits=None, field=Field("ss_weights", str | None))
STEPS = Metric("steps", mean("steps"), field=Field("steps", int | None, arrow="int32"))
INVALID_RATE = Metric("invalid_rate", Ratio(total("invalid"), total("turns"), guard=True))
VALUES: tuple[Metric | Field, ...] = (
    ACCURACY, QE, GS, SS, SS_WEIGHTS, STEPS,
    Field("invalid", int | None, arrow="int32"), Field("turns", int | None, arrow="int32"),
    Field("stopped", bool | None),
)  # fmt: skip
OrigamiRow = row_type("OrigamiRow", OrigamiKeys, VALUES, OrigamiTail, __name__,
                      "One OrigamiBench item played: its keys, its task's scores, cost.")  # fmt: skip


def board(*columns: Metric | Split, scopes: tuple[Scope, ...]) -> Board:
    """An origami task's leaderboard: its columns named ``origami_…``, then the errors of
    every origami task."""
    return Board(columns, prefix="origami_", scopes=scopes, trailer=(ERRORS,))


def by_tier(metric: Metric) -> Split:
    """A metric's leaderboard columns by tier (``origami_gs_easy``…), every tier planned or not."""
    return Split(metric, "tier", "_{}", TIERS)


def breakdown(*columns: Metric) -> Breakdown:
    """The origami breakdown (one file for both tasks): items first, errors last."""
    return Breakdown("breakdown_origami.csv", ("task", "tier", "category"), columns, (ITEMS,), (ERRORS,))


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
        # Files that do not parse are known here; whether a folder's design folds flat is
        # decided later, by its validation job (origami_fullstep), whose drops reach the
        # leaderboard's notes through the aggregate.
        skipped = [_named(e, design_roots(ctx.spec)) for e in cached.invalid]
        if not cached.designs:
            raise spec_error_at(
                ctx.spec.path, ("origami", "designs"),
                "no usable design" + (f": every one of {len(skipped)} design file(s) cannot be used:\n  "
                                      + "\n  ".join(skipped) if skipped else " (the sources hold none)"),
            )  # fmt: skip
        if cached.invalid and ob.designs.on_invalid == "skip":
            ctx.note("origami", f"origami.designs: {len(skipped)} design file(s) skipped (on_invalid: skip): " + "; ".join(skipped))
        if cached.invalid and ob.designs.on_invalid == "stop":
            raise spec_error_at(
                ctx.spec.path, ("origami", "designs"),
                f"{len(cached.invalid)} design file(s) cannot be used (set "
                "origami.designs.on_invalid: skip to leave them out):\n  " + "\n  ".join(cached.invalid),
            )  # fmt: skip
        ctx._origami_catalogue = cached  # type: ignore[attr-defined]
    return cached


def design_roots(spec: ResolvedSpec) -> DesignRoots:
    """The folders a plan file names this spec's design files under: the spec's design
    folder, Flat-Folder's cache (this machine's ``$SHREDFOLD_CACHE``), the built-in set."""
    from shredfold.origami_bench.flat_folder import default_folder

    folders = {"builtin": builtin_folder(), "flat_folder": default_folder()}
    ob = spec.spec.origami
    if ob is not None and ob.designs.folder is not None:
        folders["folder"] = Path(ob.designs.folder)
    return DesignRoots(folders)


def _shown(root: str, rel: str) -> str:
    return rel if root == "folder" else f"{root}/{rel}"


def design_name(design: Design, roots: DesignRoots) -> str:
    """A design named by its file within its folder (notes reach the leaderboard and
    releases, which record no absolute path), else by its id."""
    if design.origin is None:
        return design.id
    try:
        return _shown(*roots.record(design.origin.path))
    except ValueError:
        return design.id


def _named(invalid: str, roots: DesignRoots) -> str:
    """A skipped design file ("file: cause") named within its folder, else under ``~``."""
    for root, folder in roots.folders.items():
        for prefix in dict.fromkeys((str(folder), str(folder.resolve()))):
            if invalid.startswith(f"{prefix}/"):
                return _shown(root, invalid[len(prefix) + 1 :])
    home = str(Path.home())
    return "~" + invalid[len(home) :] if len(home) > 1 and invalid.startswith(f"{home}/") else invalid


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
        raise spec_error_at(ctx.spec.path, ("origami", "designs"), str(exc)) from None


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


class OrigamiTask:
    """What the OrigamiBench tasks have in common (a base for their classes)."""

    benchmark = "origami"
    layout = LAYOUT
    row_type = OrigamiRow
    query_stage = RUN_STAGE
    score_stage = SCORE_STAGE

    def score_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return score_params(spec)

    def item_context(self, spec: ResolvedSpec) -> dict[str, Any]:
        """Plan files name design files under their folders (no absolute path)."""
        return {ROOTS: design_roots(spec)}

    def signatures(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> dict[str, str]:
        import json

        return {
            "gs": "silhouette-iou/best-of-8-symmetries/centroid-shift",
            "engine": ENGINE_VERSION,
            "prompt": PROMPT_VERSION,
            "clip": json.dumps(score_params(spec)["clip"], sort_keys=True),
        }

    def row(self, cell: Cell, item: str, design: Design, q: ManifestRow, **scores: Any) -> OrigamiRow:
        return OrigamiRow(
            item=item,
            design=design.id,
            category=design.category,
            model=cell.model.id,
            reference=cell.model.reference,
            benchmark=self.benchmark,
            task=str(cell.labels["task"]),
            tier=str(cell.labels["tier"]),
            error=q.error,
            cached=q.cached,
            **scores,
        )


# ---------------------------------------------------------------- export

DESIGN_COLUMNS = (
    Column("design", "string", "the design's id"),
    Column("design_key", "string", "the design's content key"),
    Column("design_source", "string", "builtin, procedural, flat_folder or folder"),
    Column("category", "string", "the design's semantic category"),
    Column("tier", "string", "easy, medium or hard (from vertex and crease counts, or the paper's)"),
)


def design_columns(design: Design) -> dict[str, Any]:
    return {"design": design.id, "design_key": design.key, "design_source": design.source,
            "category": design.category, "tier": design.tier}  # fmt: skip


def design_licences(designs: Sequence[Design]) -> tuple[Licence, ...]:
    """Whose terms the pictures' designs are under, by where the designs come from."""
    from shredfold.origami_bench.flat_folder import manifest

    sources = {d.source for d in designs}
    out = [Licence("shredfold's own material (the pictures, built-in and procedural designs)", "MIT", "mit",
                   "shredfold's pyproject.toml (license)")]  # fmt: skip
    if "flat_folder" in sources:
        m = manifest()
        out.append(Licence(f"Flat-Folder's designs (Jason S. Ku), {m.upstream} at {m.commit}", "MIT", "mit",
                           f"{m.upstream}/blob/{m.commit}/LICENSE"))  # fmt: skip
    if "folder" in sources:
        out.append(Licence("the designs of the spec's folder (origami.designs.folder)",
                           "their own terms, not known to shredfold: state them before publishing", "unknown"))  # fmt: skip
    return tuple(out)


def origami_facts(spec: ResolvedSpec) -> dict[str, Any]:
    ob = origami_spec(spec)
    return {"image_size": ob.image_size, "engine": ENGINE_VERSION, "prompt": PROMPT_VERSION,
            "tiers": ob.tiers.model_dump(mode="json")}  # fmt: skip
