"""The task protocol, and the values a plan is made of.

A task (in the spirit of Inspect AI's ``Task(dataset, solver, scorer)``) has four jobs:

- **items** — which item sets a spec asks for, with their content keys (pure: reads the
  spec's inputs, writes nothing, builds no model);
- **build** — make an item set's items into the store (the set job);
- **ask** — ask a model about every item of a cell, one request or an episode of requests
  each, through the one cached asker (the query job);
- **score** — turn each answer into a typed row; the cell table's schema is that row type.

It also declares its metrics (:mod:`shredfold.tasks.metric`): its row type, its breakdown,
its leaderboard columns and headlines derive from them. Stages, rules and the aggregator know
nothing more about a task than this protocol.

A *cell* is ``(task, model, item set, labels, keys)``: one model on one item set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel

from shredfold import paths
from shredfold.calls import Request
from shredfold.progress import current as current_progress
from shredfold.spec import ModelConfig, ResolvedSpec
from shredfold.store import Store, content_key
from shredfold.tasks.manifest import ManifestRow

if TYPE_CHECKING:
    from shredfold.models.asker import CachedAsker
    from shredfold.tasks.metric import Board, Breakdown, Headline

Label = str | int
# Decimal places of every aggregate the leaderboard, breakdowns and comparisons write.
DIGITS = 6


@dataclass(frozen=True)
class Layout:
    """Where a task's files go: patterns filled with a cell's labels (and ``model``)."""

    set: str
    query: str
    score: str
    name: str  # how a cell is named in logs and manifests


@dataclass(frozen=True)
class ItemSet:
    """The items of one task that one set job builds (e.g. a domain at one N).

    A set may ``need`` other sets (by key) built first: its build reads what they stored
    (OrigamiBench's targets read their designs' validations, each a set job of its own, so
    they run in parallel). A set that is not ``asked`` gets no cells: only such a need."""

    task: str
    key: str
    labels: Mapping[str, Label]
    items: tuple[Any, ...]  # the task's item values; each has a ``key``
    where: str  # the set's path part (its layout filled in)
    needs: tuple[str, ...] = ()
    asked: bool = True
    limit: int | None = None  # a quick run's set: the first ``limit`` items of the full one

    @property
    def item_keys(self) -> list[str]:
        return [i.key for i in self.items]

    @property
    def path(self) -> str:
        return paths.set_path(self.where, self.key)


@dataclass(frozen=True)
class Cell:
    """One model on one item set: a query job and a score job."""

    task: str
    model: ModelConfig
    identity: dict[str, Any] = field(compare=False, hash=False)
    item_set: ItemSet = field(compare=False, hash=False)
    query_key: str = ""
    score_key: str = ""
    query_where: str = ""
    score_where: str = ""
    name: str = ""
    attempt: int = field(default=0, compare=False)

    @property
    def labels(self) -> Mapping[str, Label]:
        return self.item_set.labels

    @property
    def query_path(self) -> str:
        return paths.query_path(self.query_where, self.query_key, self.attempt)

    @property
    def score_path(self) -> str:
        return paths.score_path(self.score_where, self.score_key, self.attempt)

    def at(self, attempt: int) -> Cell:
        return replace(self, attempt=attempt)


@dataclass(frozen=True)
class Stage:
    """A stage name and version: part of every key the stage makes."""

    name: str
    version: int


@dataclass
class PlanContext:
    """What a task reads to list its item sets. ``store``/``write`` let a task cache input
    that is costly to derive (the origami design catalogue): whoever plans decides whether
    that cache may be written."""

    spec: ResolvedSpec
    store: Store | None = None
    write: bool = False
    # What the plan left out or changed, to be said on screen and in the leaderboard's
    # notes (benchmark → notes): a design file skipped, say.
    notes: dict[str, list[str]] = field(default_factory=dict)

    def note(self, benchmark: str, text: str) -> None:
        self.notes.setdefault(benchmark, []).append(text)


@dataclass
class JobContext:
    """What a job gives a task: the store, and the switches of this run."""

    spec: ResolvedSpec
    store: Store
    replay_only: bool = False
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("shredfold.job"))


class Row(BaseModel):
    """One item's row in a cell table; a task's row type adds its fields (its metrics' with
    :func:`shredfold.tasks.metric.row_type`). The Parquet schema is derived from the fields
    (see :func:`shredfold.stages.score.arrow_schema`)."""

    # Arrow types of fields whose Python type is ambiguous (int → int64 otherwise).
    arrow_types: ClassVar[dict[str, str]] = {}


class Task(Protocol):
    name: str  # the registry name
    benchmark: str  # the models that answer this benchmark get cells in it
    layout: Layout
    item_type: type[BaseModel]
    row_type: type[Row]
    query_stage: Stage
    score_stage: Stage
    board: Board  # its leaderboard columns
    breakdown: Breakdown
    headlines: tuple[Headline, ...]  # metrics whose columns get intervals and pairwise tests

    def item_sets(self, ctx: PlanContext) -> list[ItemSet]: ...

    def query_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        """Parameters (beyond the model's identity) that shape every answer of a cell."""
        ...

    def score_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        """Parameters (beyond model id and reference flag) that shape every score."""
        ...

    def build(self, item_set: ItemSet, job: JobContext) -> dict[str, int]: ...

    def ask(self, cell: Cell, asker: CachedAsker, job: JobContext) -> list[ManifestRow]:
        """One manifest row per item: its answer's key, ``error`` (or None), ``cached``."""
        ...

    def score(self, cell: Cell, answers: Mapping[str, ManifestRow], job: JobContext) -> list[Row]:
        """A row per item, from the manifest's rows by item key (``QueryManifest.answers``)."""
        ...

    def response_keys(self, cell: Cell, answers: Mapping[str, ManifestRow], store: Store) -> list[str]:
        """The stored responses behind a cell's answers (a release carries each envelope)."""
        ...

    def signatures(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> dict[str, str]:
        """What produced the scores (metric signatures, versions), by name: recorded in a
        release, compared with the running code by ``shredfold verify``."""
        ...


# ---------------------------------------------------------------- optional hooks
#
# A task whose items name files records them in plan files (and so releases) relative to
# folders it names (``item_context``); a task whose set jobs may leave planned items out
# (OrigamiBench: the targets of designs whose validation job found they do not fold flat)
# says so once they are built (``left_out``), for the leaderboard's notes and the screen.


@dataclass(frozen=True)
class LeftOut:
    """What a task's built sets left out of its planned items."""

    note: str  # names each item (or design) left out and why: the leaderboard's notes
    nothing_left: str | None = None  # every planned item was left out: the error that says so


def item_context(task: Task, spec: ResolvedSpec) -> dict[str, Any] | None:
    """The pydantic context with which a plan file writes and reads the task's items."""
    hook = getattr(task, "item_context", None)
    return None if hook is None else hook(spec)


def left_out(task: Task, spec: ResolvedSpec, item_sets: Sequence[ItemSet], store: Store) -> LeftOut | None:
    """What the task's built ``item_sets`` left out (None: nothing), read from ``store``."""
    hook = getattr(task, "left_out", None)
    return None if hook is None else hook(spec, item_sets, store)


# ---------------------------------------------------------------- data set and eval hooks
#
# A task may also offer its items to other tools: as tables of a Hugging Face data set
# (``shredfold export``, :mod:`shredfold.export`) and as an Inspect AI task
# (:mod:`shredfold.inspect_eval`). Both are generic; what a task's rows hold and how an
# answer is scored are the task's, through the hooks of :class:`Exported` and
# :class:`Evaluated` below, in the values that follow (plain data: no tool is imported here).

ColumnKind = Literal["string", "int32", "int64", "float64", "bool", "image", "images", "strings"]


@dataclass(frozen=True)
class Column:
    """A column of an exported table: ``image`` holds one image's bytes (PNG or JPEG as
    stored), ``images`` a list of them, ``strings`` a list of strings; a value may be None."""

    name: str
    kind: ColumnKind
    doc: str  # what it holds, for the data set card


@dataclass(frozen=True)
class Table:
    """One table of a task's export: a config (one per task) and a split, holding the rows
    of ``sets`` (item sets of the plan, in plan order)."""

    config: str
    split: str
    columns: tuple[Column, ...]
    sets: tuple[ItemSet, ...]


@dataclass(frozen=True)
class Licence:
    """Whose terms apply to part of an export."""

    what: str  # e.g. "the documents of the built-in corpus"
    name: str  # e.g. "MIT", "SIL Open Font License 1.1"
    hub_id: str  # the Hugging Face hub's licence identifier ("mit", "ofl-1.1", "other", "unknown")
    source: str = ""  # where the terms are stated (a URL or a file)


@dataclass(frozen=True)
class DataCard:
    """A task's part of the data set card: a description, its licences and facts (settings
    a user of the data needs: protocol, image size, …)."""

    summary: str
    licences: tuple[Licence, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalItem:
    """One item as an evaluation harness asks it: ``request`` is exactly what shredfold
    sends a model; ``facts`` is what scoring needs (JSON values, kept with the sample)."""

    id: str
    request: Request
    target: str
    facts: Mapping[str, Any]


@dataclass(frozen=True)
class EvalScore:
    """One answer scored by the task's own metric functions: ``values`` by metric name (NaN
    where a metric does not apply, e.g. TEDS on prose); ``metadata`` names the signature."""

    values: Mapping[str, float]
    answer: str
    metadata: Mapping[str, Any]


class Exported(Protocol):
    """A task whose items can be exported as a data set (:mod:`shredfold.export`)."""

    public_name: str  # the data set config, e.g. "shredbench"

    def export_tables(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> list[Table]: ...

    def export_row(self, item: Any, item_set: ItemSet, job: JobContext) -> dict[str, Any] | None:
        """One item's row (images as bytes) read from the store; None: an item no model is
        asked (e.g. a multiple-choice item its build dropped)."""
        ...

    def export_card(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> DataCard: ...


class Evaluated(Exported, Protocol):
    """A task an evaluation harness can run from its exported rows (:mod:`shredfold.inspect_eval`)."""

    def eval_item(self, row: Mapping[str, Any], options: Mapping[str, Any]) -> EvalItem | None:
        """The item of an exported row under the harness's ``options`` (validated by the task;
        a wrong one raises ValueError naming it); None: the options leave the row out."""
        ...

    def eval_score(self, facts: Mapping[str, Any], answer: str) -> EvalScore: ...


def exported(task: object) -> bool:
    return callable(getattr(task, "export_row", None))


def evaluated(task: object) -> bool:
    return exported(task) and callable(getattr(task, "eval_item", None))


def build_each(
    items: Sequence[Any], stage: str, store: Store, make: Callable[[Any, Path], None]
) -> dict[str, int]:
    """Make every item not yet in the store (``make(item, folder)`` writes its files into a
    temporary folder that becomes the object); stored ones are reused by key."""
    made = reused = 0
    progress = current_progress()
    for item in items:
        if store.has(stage, item.key):
            reused += 1
            progress.advance(cached=True)
            continue
        with store.writing(stage, item.key) as tmp:
            make(item, tmp)
        made += 1
        progress.advance()
    return {"made": made, "reused": reused}


def fill(pattern: str, labels: Mapping[str, Label], **extra: str) -> str:
    return pattern.format(**labels, **extra)


def make_cells(
    task: Task,
    spec: ResolvedSpec,
    sets: Sequence[ItemSet],
    models: Sequence[ModelConfig],
    identities: Mapping[str, dict[str, Any]],
    answers: Callable[[ModelConfig, str], bool],
) -> list[Cell]:
    """Every (model × item set) cell of a task, with its query and score keys."""
    qparams = task.query_params(spec)
    sparams = task.score_params(spec)
    out = []
    for model in models:
        if not answers(model, task.benchmark):
            continue
        ident = identities[model.id]
        for s in sets:
            if not s.asked:
                continue
            qkey = content_key(
                task.query_stage.name, task.query_stage.version, {"model": ident, **qparams}, [s.key]
            )
            skey = content_key(
                task.score_stage.name,
                task.score_stage.version,
                {"model_id": model.id, "reference": model.reference, **sparams},
                [qkey],
            )
            out.append(
                Cell(
                    task=task.name,
                    model=model,
                    identity=ident,
                    item_set=s,
                    query_key=qkey,
                    score_key=skey,
                    query_where=fill(task.layout.query, s.labels, model=model.id),
                    score_where=fill(task.layout.score, s.labels, model=model.id),
                    name=fill(task.layout.name, s.labels, model=model.id),
                )
            )
    return out
