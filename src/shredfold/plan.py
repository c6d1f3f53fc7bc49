"""Expand a spec into grid cells and their content keys. Pure and fast: no images are made.

Jobs are cells, not items (see design.md): a *sample set* (domain × granularity) is one
shred job, a *query cell* (model × domain × granularity) asks one model about one set, and a
*score cell* turns the answers into a Parquet table. Each path carries the key of what it was
made from, so a changed parameter means a new path, and only the affected cells run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from shredfold.corpus.document import Document, domain_kind
from shredfold.corpus.loaders import load_corpus
from shredfold.spec import ModelConfig, RenderSettings, ResolvedSpec, SynthesisSettings
from shredfold.store import content_key

QUERY_STAGE, QUERY_VERSION = "query", 1
SCORE_STAGE, SCORE_VERSION = "score", 1


@dataclass(frozen=True)
class ShredItem:
    key: str
    doc: Document
    n: int
    render: RenderSettings
    synthesis: SynthesisSettings
    seed: int

    @property
    def kind(self) -> str:
        return domain_kind(self.doc.domain)

    @property
    def lang(self) -> str:
        return "zh" if self.doc.domain.endswith("_zh") else "en"


@dataclass(frozen=True)
class ShredSet:
    """All samples of one domain at one granularity: the unit of the shred job."""

    domain: str
    n: int
    key: str
    items: tuple[ShredItem, ...]

    @property
    def path(self) -> str:
        return f"results/sets/shred/{self.domain}/N{self.n}/{self.key}.json"


@dataclass(frozen=True)
class OrigamiSet:
    """The items of one OrigamiBench task at one complexity tier: the unit of the set job.

    ``items`` are :class:`~shredfold.origami.tasks.McqSpec` (MCQ) or
    :class:`~shredfold.origami.designs.Design` (full-step targets, keyed by target key).
    """

    task: str
    tier: str
    key: str
    items: tuple[Any, ...]
    item_keys: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"results/sets/origami/{self.task}/{self.tier}/{self.key}.json"


@dataclass(frozen=True)
class Cell:
    benchmark: str
    model: ModelConfig
    identity: dict[str, Any] = field(compare=False, hash=False)
    domain: str = ""
    n: int = 0
    sample_set: ShredSet | None = None
    query_key: str = ""
    score_key: str = ""
    attempt: int = field(default=0, compare=False)
    origami_set: OrigamiSet | None = None

    @property
    def suffix(self) -> str:
        """``-rN`` on the paths of the N-th retry of a cell whose earlier query had errors."""
        return f"-r{self.attempt}" if self.attempt else ""

    @property
    def query_path(self) -> str:
        if self.origami_set is not None:
            return f"results/cells/origami/run/{self.model.id}/{self.domain}/{self.origami_set.tier}/{self.query_key}{self.suffix}.json"
        return f"results/cells/query/{self.model.id}/{self.benchmark}/{self.domain}/N{self.n}/{self.query_key}{self.suffix}.json"

    @property
    def score_path(self) -> str:
        if self.origami_set is not None:
            return f"results/cells/origami/score/{self.model.id}/{self.domain}/{self.origami_set.tier}/{self.score_key}{self.suffix}.parquet"
        return f"results/cells/score/{self.model.id}/{self.benchmark}/{self.domain}/N{self.n}/{self.score_key}{self.suffix}.parquet"

    @property
    def name(self) -> str:
        if self.origami_set is not None:
            return f"{self.model.id}/{self.benchmark}/{self.domain}/{self.origami_set.tier}"
        return f"{self.model.id}/{self.benchmark}/{self.domain}/N{self.n}"


@dataclass
class Plan:
    spec: ResolvedSpec
    sets: dict[str, ShredSet]
    cells: list[Cell]
    origami_sets: dict[str, OrigamiSet] = field(default_factory=dict)

    @cached_property
    def cells_by_query_key(self) -> dict[str, Cell]:
        return {c.query_key: c for c in self.cells}

    @cached_property
    def cells_by_score_key(self) -> dict[str, Cell]:
        return {c.score_key: c for c in self.cells}

    def cell(self, key: str) -> Cell:
        cell = self.cells_by_query_key.get(key) or self.cells_by_score_key.get(key)
        if cell is None:
            raise KeyError(
                f"no cell with key {key} in the plan of {self.spec.path}: the spec or the code "
                "changed since Snakemake planned this run; run it again"
            )
        return cell

    def origami_set(self, key: str) -> OrigamiSet:
        if key not in self.origami_sets:
            raise KeyError(f"no origami set with key {key} in the plan of {self.spec.path}")
        return self.origami_sets[key]

    def sample_set(self, key: str) -> ShredSet:
        if key not in self.sets:
            raise KeyError(
                f"no sample set with key {key} in the plan of {self.spec.path}: the spec or the "
                "code changed since Snakemake planned this run; run it again"
            )
        return self.sets[key]

    @property
    def score_paths(self) -> list[str]:
        return [c.score_path for c in self.cells]

    def summary(self) -> dict[str, Any]:
        return {
            "spec": str(self.spec.path),
            "sets": [
                {"domain": s.domain, "n": s.n, "key": s.key, "items": [i.key for i in s.items]}
                for s in self.sets.values()
            ],
            "origami_sets": [
                {"task": s.task, "tier": s.tier, "key": s.key, "items": list(s.item_keys)}
                for s in self.origami_sets.values()
            ],
            "cells": [
                {
                    "name": c.name,
                    "model": c.model.id,
                    "benchmark": c.benchmark,
                    "domain": c.domain,
                    "n": c.n,
                    "set": c.sample_set.key if c.sample_set else None,
                    "query_key": c.query_key,
                    "score_key": c.score_key,
                    "attempt": c.attempt,
                }
                for c in self.cells
            ],
        }


def _identities(models: list[ModelConfig]) -> dict[str, dict[str, Any]]:
    from shredfold.models.registry import model_identity
    from shredfold.store import Store

    # Identities never touch the store; a placeholder root keeps the constructor honest.
    store = Store(Path("results/store"))
    return {m.id: model_identity(m, store) for m in models}


def make_plan(resolved: ResolvedSpec) -> Plan:
    from shredfold.prompts.shred import VERSION as SHRED_PROMPT_VERSION
    from shredfold.shred.sample import sample_key

    spec = resolved.spec
    sets: dict[str, ShredSet] = {}
    cells: list[Cell] = []
    identities = _identities(resolved.models)
    if spec.shred is not None:
        sb = spec.shred
        corpus = load_corpus(sb.corpus, list(sb.domains), sb.documents_per_domain)
        ordered: list[ShredSet] = []
        for domain in sb.domains:
            render = sb.render_for(domain)
            for n in sb.granularities:
                items = tuple(
                    ShredItem(
                        key=sample_key(doc, n, render, sb.synthesis, spec.seed),
                        doc=doc,
                        n=n,
                        render=render,
                        synthesis=sb.synthesis,
                        seed=spec.seed,
                    )
                    for doc in corpus[domain]
                )
                skey = content_key("sample_set", 1, {"domain": domain, "n": n}, [i.key for i in items])
                s = ShredSet(domain=domain, n=n, key=skey, items=items)
                sets[skey] = s
                ordered.append(s)
        for model in resolved.models:
            if not supports(model, "shred"):
                continue
            ident = identities[model.id]
            for s in ordered:
                qkey = content_key(
                    QUERY_STAGE,
                    QUERY_VERSION,
                    {"model": ident, "prompt": SHRED_PROMPT_VERSION},
                    [s.key],
                )
                skey = content_key(SCORE_STAGE, SCORE_VERSION, {"model_id": model.id, "reference": model.reference}, [qkey])
                cells.append(
                    Cell(
                        benchmark="shred",
                        model=model,
                        identity=ident,
                        domain=s.domain,
                        n=s.n,
                        sample_set=s,
                        query_key=qkey,
                        score_key=skey,
                    )
                )
    origami_sets: dict[str, OrigamiSet] = {}
    if spec.origami is not None:
        from shredfold.origami.tasks import plan_origami

        origami_sets, origami_cells = plan_origami(resolved, identities)
        cells += origami_cells
    return Plan(spec=resolved, sets=sets, cells=cells, origami_sets=origami_sets)


def supports(model: ModelConfig, benchmark: str) -> bool:
    """Whether a model has cells in a benchmark: built-ins serve one, API models both."""
    from shredfold.spec import ORIGAMI_AGENTS

    if model.adapter == "openai":
        return True
    return (model.adapter in ORIGAMI_AGENTS) == (benchmark == "origami")


_ATTEMPT = re.compile(r"-r([1-9][0-9]*)\.json$")


def latest_attempt(cell: Cell, workdir: Path) -> int | None:
    """The highest attempt whose query manifest exists under ``workdir``, or None."""
    base = replace(cell, attempt=0)
    folder = (workdir / base.query_path).parent
    found = [0] if (workdir / base.query_path).is_file() else []
    if folder.is_dir():
        for p in folder.glob(f"{cell.query_key}-r*.json"):
            m = _ATTEMPT.search(p.name)
            if m:
                found.append(int(m.group(1)))
    return max(found) if found else None


def resolve_attempts(plan: Plan, workdir: str | Path = ".") -> Plan:
    """The plan with each cell at the attempt this run should produce.

    A query manifest that records errors is a finished job to Snakemake, so failed items
    would never be asked again. Here a cell whose latest manifest has errors moves on to a
    new attempt (``{key}-r1.json``, ``-r2``, …, and the same suffix on its score table): the
    next run re-queries only the failed items (answers come from the cache), and a run with
    no errors left is a no-op. Reads manifests, so it is kept apart from :func:`make_plan`.
    """
    root = Path(workdir)
    cells = []
    for cell in plan.cells:
        n = latest_attempt(cell, root)
        if n is not None:
            at = replace(cell, attempt=n)
            manifest = json.loads((root / at.query_path).read_text(encoding="utf-8"))
            cell = replace(cell, attempt=n + 1 if manifest.get("errors") else n)
        cells.append(cell)
    return replace(plan, cells=cells)
