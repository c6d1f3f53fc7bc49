"""Expand a spec into item sets and cells with their content keys: pure and light.

Jobs are cells, not items (a job per item would make a DAG of ~10^5 nodes at paper scale,
which Snakemake builds slowly): an *item set* (e.g. one domain at one N) is one build job; a
*cell* (one model on one item set) is a query job and a score job, looping over its items and
reusing each item's stored result by key. Each path carries the key of what it was made
from, so a changed parameter means a new path, and only the affected cells run. The tasks
(:mod:`shredfold.tasks`) say what their item sets are.

``make_plan`` imports no imaging, geometry or OCR library and builds no model (identities
come from the adapters' configuration). Snakemake plans once per invocation and writes the
plan to a content-addressed file (:func:`write_plan`) that every job loads
(:func:`load_plan`), so a job does not plan the spec again.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from shredfold import paths
from shredfold.models import registry
from shredfold.spec import ResolvedSpec
from shredfold.store import Store, atomic_write_bytes, canonical_json, content_key, sha256_bytes
from shredfold.tasks.base import Cell, ItemSet, PlanContext, Task, item_context, make_cells
from shredfold.tasks.manifest import ManifestError, QueryManifest, read_manifest
from shredfold.tasks.registry import benchmarks, tasks
from shredfold.tasks.registry import get as get_task

# 2: sets carry needs and asked; designs are their files (origami_bench.design.DesignRoots).
# A format-1 plan still loads when it holds no OrigamiBench items, else is refused, saying so.
PLAN_FORMAT = 2
_READS = (1, PLAN_FORMAT)
LIMIT_STAGE, LIMIT_VERSION = "item_set_limit", 1


class StalePlanError(KeyError):
    """A job names a cell or item set its plan does not hold: the plan is older than the
    spec or the code. A KeyError, so lookups that allow a missing cell keep working."""

    def __str__(self) -> str:  # KeyError's own str() quotes the message
        return str(self.args[0]) if self.args else ""


@dataclass
class Plan:
    spec: ResolvedSpec
    item_sets: dict[str, ItemSet]  # by key, in plan order
    cells: list[Cell]
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)  # benchmark → what the plan left out

    @cached_property
    def _cells_by_key(self) -> dict[tuple[str, str], Cell]:
        out = {(c.query_where, c.query_key): c for c in self.cells}
        out.update({(c.score_where, c.score_key): c for c in self.cells})
        return out

    def cell(self, key: str, where: str) -> Cell:
        """The cell whose query or score files are ``where``/``key`` (two models with the
        same identity share a query key, so the key alone does not name a cell)."""
        cell = self._cells_by_key.get((where, key))
        if cell is None:
            raise StalePlanError(
                f"no cell {where}/{key} in the plan of {self.spec.path}: the spec or the code "
                "changed since Snakemake planned this run; run it again"
            )
        return cell

    def item_set(self, key: str) -> ItemSet:
        if key not in self.item_sets:
            raise StalePlanError(
                f"no item set with key {key} in the plan of {self.spec.path}: the spec or the "
                "code changed since Snakemake planned this run; run it again"
            )
        return self.item_sets[key]

    def sets_of(self, task: str) -> list[ItemSet]:
        """The task's sets that models are asked about (not those only built for others)."""
        return [s for s in self.item_sets.values() if s.task == task and s.asked]

    def limits(self) -> dict[str, int]:
        """Benchmarks this quick run cut (``limit``), with the number of items per cell."""
        by_task = {t.name: t.benchmark for t in tasks()}
        return {by_task[s.task]: s.limit for s in self.item_sets.values() if s.limit is not None}

    def tasks(self) -> list[Task]:
        """The tasks this plan has item sets of, in plan order."""
        names = {s.task for s in self.item_sets.values()}
        return [t for t in tasks() if t.name in names]

    @property
    def score_paths(self) -> list[str]:
        return [c.score_path for c in self.cells]

    def summary(self) -> dict[str, Any]:
        from shredfold.models.endpoints import key_routes

        return {
            "spec": str(self.spec.path),
            "keys": [r.as_json() for r in key_routes(self.spec.models)],
            "notes": self.notes,
            "sets": [
                {"task": s.task, **s.labels, "key": s.key, "items": s.item_keys, "path": s.path, "asked": s.asked, "needs": list(s.needs)}
                for s in self.item_sets.values()
            ],
            "cells": [
                {
                    "name": c.name,
                    "task": c.task,
                    "model": c.model.id,
                    **c.labels,
                    "set": c.item_set.key,
                    "query_key": c.query_key,
                    "score_key": c.score_key,
                    "attempt": c.attempt,
                }
                for c in self.cells
            ],
        }


def _check_benchmarks() -> None:
    """Every benchmark an adapter names is one a registered task runs (a misspelt name
    would leave the adapter silently without cells)."""
    known = {t.benchmark for t in tasks()}
    for a in registry.adapters().values():
        unknown = sorted((a.benchmarks or frozenset()) - known)
        if unknown:
            raise ValueError(f"adapter {a.name!r} names benchmarks no task runs: {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")


def make_plan(resolved: ResolvedSpec, store: Store | None = None, *, write: bool = False) -> Plan:
    """The plan of a spec. ``store`` holds inputs costly to derive (the origami design
    catalogue), reused when present and written there only when ``write`` is set."""
    ctx = PlanContext(resolved, store, write)
    _check_benchmarks()
    identities = {m.id: registry.identity(m) for m in resolved.models}
    sets: dict[str, ItemSet] = {}
    cells: list[Cell] = []
    for task in tasks():
        mine = task.item_sets(ctx)
        if not mine:
            continue
        limit = limit_of(resolved, task.benchmark)
        if limit is not None:  # (a set built only for others, e.g. design validations, stays whole)
            mine = [limited(s, limit) if s.asked else s for s in mine]
        sets.update((s.key, s) for s in mine)
        made = make_cells(task, resolved, mine, resolved.models, identities, registry.answers)
        cells += [limited_cell(c) for c in made]
    return Plan(spec=resolved, item_sets=sets, cells=cells, identities=identities, notes=ctx.notes)


# ---------------------------------------------------------------- quick runs


def limit_of(resolved: ResolvedSpec, benchmark: str) -> int | None:
    """The spec's ``limit`` for a benchmark's cells (its section's ``limit``), if any."""
    return getattr(getattr(resolved.spec, benchmark, None), "limit", None)


def with_limit(resolved: ResolvedSpec, limit: int | None) -> ResolvedSpec:
    """The spec with ``limit`` on every benchmark section it has (``--config limit=N``,
    which overrides the sections' own); unchanged for None."""
    if limit is None:
        return resolved
    spec = resolved.spec
    update = {
        b.name: section.model_copy(update={"limit": limit})
        for b in benchmarks()
        if (section := b.section_of(resolved)) is not None and "limit" in type(section).model_fields
    }
    return resolved.model_copy(update={"spec": spec.model_copy(update=update)})


def parse_limit(value: object) -> int | None:
    """``--config limit=…`` as a number of items (None when not given)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not str(value).isdigit() or int(str(value)) < 1:
        raise ValueError(f"limit={value!r}: give a whole number of items, at least 1")
    return int(str(value))


def limited(item_set: ItemSet, limit: int) -> ItemSet:
    """The set of a quick run: its first ``limit`` items, which keep their keys (so they are
    built, stored and asked exactly as in the full run, whose answers they share). A set no
    larger than that is the full set itself. A cut set has its own key and path part
    (``first-N/…``): its cells' tables, holding fewer items, are never the full cells'."""
    if len(item_set.items) <= limit:
        return item_set
    items = item_set.items[:limit]
    key = content_key(LIMIT_STAGE, LIMIT_VERSION, {"limit": limit}, [item_set.key, *(i.key for i in items)])
    return replace(item_set, key=key, items=items, where=paths.limited_where(item_set.where, limit), limit=limit)


def limited_cell(cell: Cell) -> Cell:
    """A cell of a cut set: its files under ``first-N/``, its name saying so."""
    n = cell.item_set.limit
    if n is None:
        return cell
    return replace(
        cell,
        query_where=paths.limited_where(cell.query_where, n),
        score_where=paths.limited_where(cell.score_where, n),
        name=f"{cell.name} (first {n})",
    )


# ---------------------------------------------------------------- the plan file
# A plan file (and a release's plan.json and resolved spec) records no absolute path: a
# published release must not carry its author's home directory or machine layout. The spec
# is recorded relative to the working directory (the Snakemake workdir, where every job
# runs), the files it names relative to the spec's folder, and a path under neither as
# "~/…" when it is under the home directory; loading resolves them again.


def recorded_path(path: str | Path, base: Path) -> str:
    """``path`` as a plan records it: relative to ``base`` when under it, else ``~/…``
    under the home directory, else relative to ``base`` with ``..``."""
    path, base = Path(os.path.abspath(path)), Path(os.path.abspath(base))
    if path.is_relative_to(base):
        return path.relative_to(base).as_posix() or "."
    try:
        home = Path.home()
    except RuntimeError:  # no home directory known
        home = None
    if home is not None and home != Path(home.anchor) and path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return Path(os.path.relpath(path, base)).as_posix()


def restored_path(text: str, base: Path) -> Path:
    """:func:`recorded_path` undone (an absolute path, as older plans hold, is kept)."""
    if text == "~" or text.startswith("~/"):
        return Path(os.path.expanduser(text))
    return Path(os.path.normpath(base / text))


def spec_document(spec: ResolvedSpec, cwd: Path | None = None) -> dict[str, Any]:
    """The resolved spec as JSON, its paths recorded as :func:`recorded_path` says."""
    from shredfold.spec import path_fields

    cwd = Path.cwd() if cwd is None else cwd
    doc = spec.model_dump(mode="json")
    doc["path"] = recorded_path(spec.path, cwd)
    for field_path in path_fields():
        *parents, name = field_path
        holder = doc["spec"]
        for part in parents:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and holder.get(name) is not None:
            holder[name] = recorded_path(holder[name], Path(spec.path).parent)
    return doc


def _restored_spec(doc: dict[str, Any], cwd: Path) -> ResolvedSpec:
    from shredfold.spec import path_fields

    tasks()  # the spec's sections are the registered benchmarks' (outside ones included)

    doc = json.loads(json.dumps(doc))  # a copy to fill in
    path = restored_path(doc["path"], cwd)
    doc["path"] = str(path)
    for field_path in path_fields():
        *parents, name = field_path
        holder = doc["spec"]
        for part in parents:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and holder.get(name) is not None:
            holder[name] = str(restored_path(holder[name], path.parent))
    return ResolvedSpec.model_validate(doc)


def plan_document(plan: Plan, cwd: Path | None = None) -> dict[str, Any]:
    return {
        "format": PLAN_FORMAT,
        "spec": spec_document(plan.spec, cwd),
        "identities": plan.identities,
        "notes": plan.notes,
        "sets": [
            {
                "task": s.task,
                "key": s.key,
                "labels": dict(s.labels),
                "where": s.where,
                "items": _items_document(s, plan.spec),
                "needs": list(s.needs),
                "asked": s.asked,
                **({"limit": s.limit} if s.limit is not None else {}),
            }
            for s in plan.item_sets.values()
        ],
        "cells": [
            {
                "task": c.task,
                "model": c.model.id,
                "set": c.item_set.key,
                "query_key": c.query_key,
                "score_key": c.score_key,
                "query_where": c.query_where,
                "score_where": c.score_where,
                "name": c.name,
            }
            for c in plan.cells
        ],
    }


def _items_document(item_set: ItemSet, spec: ResolvedSpec) -> list[Any]:
    """A set's items as a plan file records them (their files' paths under named folders,
    where the task says so: :func:`shredfold.tasks.base.item_context`)."""
    context = item_context(get_task(item_set.task), spec)
    return [i.model_dump(mode="json", context=context) for i in item_set.items]


def write_plan(plan: Plan, root: str | Path = ".") -> str:
    """Write the plan to ``results/plans/<key>.json`` (once per content) and return its path,
    relative to ``root``."""
    data = canonical_json(plan_document(plan))
    rel = paths.plan_path(sha256_bytes(data))
    target = Path(root) / rel
    if not target.is_file():
        atomic_write_bytes(target, data)
    else:
        target.touch()  # the newest plan file is the run `shredfold status` reports on
    return rel


def load_plan(path: str | Path) -> Plan:
    """A plan written by :func:`write_plan` (a job's view of the run)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") not in _READS:
        raise ValueError(f"{path}: plan format {doc.get('format')!r}, expected {PLAN_FORMAT}: plan again")
    spec = _restored_spec(doc["spec"], Path.cwd())
    models = {m.id: m for m in spec.models}
    sets: dict[str, ItemSet] = {}
    # Format 1 held the items that name files (OrigamiBench's designs) as segments.
    if doc["format"] == 1 and any(item_context(get_task(s["task"]), spec) is not None for s in doc["sets"]):
        raise ValueError(
            f"{path}: plan format 1 (OrigamiBench designs as segments; format 2 names their files): "
            "plan again, or verify an older release with the shredfold that made it"
        )
    for s in doc["sets"]:
        task = get_task(s["task"])
        context = item_context(task, spec)
        items = tuple(task.item_type.model_validate(i, context=context) for i in s["items"])
        needs, asked = tuple(s.get("needs", ())), bool(s.get("asked", True))
        sets[s["key"]] = ItemSet(s["task"], s["key"], s["labels"], items, s["where"], needs, asked, limit=s.get("limit"))
    identities = doc["identities"]
    cells = [
        Cell(
            task=c["task"],
            model=models[c["model"]],
            identity=identities[c["model"]],
            item_set=sets[c["set"]],
            query_key=c["query_key"],
            score_key=c["score_key"],
            query_where=c["query_where"],
            score_where=c["score_where"],
            name=c["name"],
        )
        for c in doc["cells"]
    ]
    return Plan(spec=spec, item_sets=sets, cells=cells, identities=identities, notes=doc.get("notes", {}))


# ---------------------------------------------------------------- attempts

_ATTEMPT = re.compile(r"-r([1-9][0-9]*)\.json$")


def _attempts(cell: Cell, workdir: Path) -> Iterator[int]:
    base = workdir / cell.at(0).query_path
    if base.is_file():
        yield 0
    if base.parent.is_dir():
        for p in base.parent.glob(f"{cell.query_key}-r*.json"):
            m = _ATTEMPT.search(p.name)
            if m:
                yield int(m.group(1))


def latest_attempt(cell: Cell, workdir: Path) -> int | None:
    """The highest attempt whose query manifest exists under ``workdir``, or None."""
    return max(_attempts(cell, workdir), default=None)


def current_attempts(plan: Plan, workdir: str | Path = ".") -> Plan:
    """The plan with each cell at the latest attempt that was run (its query manifest
    exists), errors or not: what the last run made, and what its leaderboard was aggregated
    from. A release is of this. (:func:`resolve_attempts` is what the *next* run should
    make: a cell with errors moves on to an attempt that does not exist yet.)"""
    root = Path(workdir)
    cells = [cell.at(n) if (n := latest_attempt(cell, root)) is not None else cell for cell in plan.cells]
    return Plan(spec=plan.spec, item_sets=plan.item_sets, cells=cells, identities=plan.identities, notes=plan.notes)


def _reask_corrupt(manifest: QueryManifest, store: Store) -> int:
    """Move aside every answer a finished cell lists that fails its manifest; how many."""
    from shredfold.calls import RESPONSE_STAGE
    from shredfold.store import CorruptObjectError

    moved = 0
    for row in manifest.items:
        rkey = row.response
        if not row.answered or not rkey or not store.has(RESPONSE_STAGE, rkey):
            continue
        try:
            store.get_json(RESPONSE_STAGE, rkey)
        except CorruptObjectError:
            store.quarantine(RESPONSE_STAGE, rkey)
            moved += 1
    return moved


# What the next run does about a cell whose latest manifest cannot be read (see resolve_attempts).
REDONE = (
    "the cell is queried again at a new attempt (answers from the response cache) and this "
    f"file moved to {paths.SUPERSEDED}/"
)


def resolve_attempts(
    plan: Plan,
    workdir: str | Path = ".",
    reask_corrupt: Store | None = None,
    note: Callable[[str], None] | None = None,
) -> Plan:
    """The plan with each cell at the attempt this run should produce.

    A query manifest that records errors is a finished job to Snakemake, so failed items
    would never be asked again. Here a cell whose latest manifest has errors moves on to a
    new attempt (``{key}-r1.json``, ``-r2``, …, and the same suffix on its score table): the
    next run re-queries only the failed items (answers come from the cache), and a run with
    no errors left is a no-op. Reads manifests, so it is kept apart from :func:`make_plan`.

    A cell whose job found a corrupt object it can rebuild (a note under ``results/repairs``)
    moves on past the attempt that failed.

    With ``reask_corrupt`` (the store), a finished cell whose stored answers fail their
    manifests has them moved aside and moves on to a new attempt, which asks them again —
    only when the user asks for it (``--config reask_corrupt=true``): answers cost money.

    A latest manifest that cannot be read (broken, or edited into something else) is like a
    corrupt object that can be rebuilt: its cell moves on to a new attempt, queried again from
    the response cache, and the broken file leaves ``results/cells/`` with the attempt it
    ends. ``note`` is told so, in one line naming the file and the cause.
    """
    root = Path(workdir)
    cells = []
    for cell in plan.cells:
        n = latest_attempt(cell, root)
        if n is not None:
            try:
                manifest = read_manifest(root / cell.at(n).query_path)
            except ManifestError as exc:
                if note is not None:
                    note(f"{exc}; {REDONE}")
                cell = cell.at(n + 1)
            else:
                corrupt = _reask_corrupt(manifest, reask_corrupt) if reask_corrupt is not None else 0
                cell = cell.at(n + 1 if manifest.errors or corrupt else n)
        repair = root / paths.repair_path(cell.score_where, cell.score_key)
        if repair.is_file():
            broken = int(json.loads(repair.read_text(encoding="utf-8")).get("attempt", 0))
            if broken >= cell.attempt:
                cell = cell.at(broken + 1)
        cells.append(cell)
    return Plan(spec=plan.spec, item_sets=plan.item_sets, cells=cells, identities=plan.identities, notes=plan.notes)
