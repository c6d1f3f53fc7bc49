"""A cell's query manifest: what its query job recorded about each item. The one home of its
format: the query job writes it (:func:`write_manifest`); scoring, the next plan, ``status``,
a release and ``verify`` read it (:func:`read_manifest`).

It sits at ``results/cells/<where>/<key><attempt>.json`` (:func:`shredfold.paths.query_path`)::

    {"cell": name, "task": …, "query_key": …, "model": id, "identity": {…},
     "called": n, "cached": n, "errors": n, "requests": n,
     "items": [{"item": key, "response": key, "error": null, "cached": false, …}, …]}

A row keeps exactly the fields its task gave it: a failed item has ``error`` and no answer
key, an item asked once has ``response``, an episode of requests has ``episode``. Rows are
written without the fields their task left unset, so a manifest reads back and writes out
byte for byte (manifests of runs made before the rows were typed included).

A manifest is a file a user can edit: one that is not what this says is refused with one
line naming the file and the cause (:class:`ManifestError`), read at most
:data:`MAX_MANIFEST_BYTES`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shredfold import paths
from shredfold.errors import InputError
from shredfold.store import atomic_write_json

if TYPE_CHECKING:
    from shredfold.tasks.base import Cell

# A row is a few hundred bytes: this holds over 100,000 items, far beyond any cell.
MAX_MANIFEST_BYTES = 64 * 2**20

Key = Annotated[str, Field(pattern=f"^{paths.KEY_PATTERN}$")]


class ManifestError(InputError):
    """A query manifest that cannot be read: one line, the file and ``why``."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = str(path)
        self.why = why


class ManifestRow(BaseModel):
    """One item of a cell as its query job left it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item: Key
    error: str | None = None  # why the item has no answer; the next run asks it again
    cached: bool = False  # answered from the response cache (no call made)
    response: Key | None = None  # the stored response of an item asked once
    episode: Key | None = None  # the stored episode of an item asked over many turns
    # What some tasks copy beside the answer (ShredBench its document, the MCQ the bill).
    doc_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None

    @classmethod
    def not_run(cls, item: str) -> ManifestRow:
        """An item its manifest does not list: scored as failed."""
        return cls(item=item, error="not run")

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def answered(self) -> bool:
        """Not failed, and with a stored answer to score (a response or an episode)."""
        return self.error is None and bool(self.response or self.episode)


class QueryManifest(BaseModel):
    """A cell's manifest: which cell and model, how its items were answered, and the rows.
    The counts are derived from the rows and must agree with them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cell: str
    task: str
    query_key: Key
    model: str
    identity: dict[str, Any]
    called: int = Field(ge=0)  # answered by a call this attempt
    cached: int = Field(ge=0)  # answered from the response cache
    errors: int = Field(ge=0)  # failed: asked again by the next run
    requests: int = Field(ge=0)  # calls made, retries and the turns of episodes included
    items: tuple[ManifestRow, ...]

    @classmethod
    def of(cls, cell: Cell, rows: Sequence[ManifestRow], requests: int) -> QueryManifest:
        errors, cached = _tally(rows)
        return cls(
            cell=cell.name, task=cell.task, query_key=cell.query_key, model=cell.model.id,
            identity=cell.identity, called=len(rows) - errors - cached, cached=cached,
            errors=errors, requests=requests, items=tuple(rows),
        )  # fmt: skip

    @model_validator(mode="after")
    def _counts_agree(self) -> QueryManifest:
        errors, cached = _tally(self.items)
        said = (self.errors, self.cached, self.called)
        if said != (errors, cached, len(self.items) - errors - cached):
            raise ValueError(
                f"errors, cached, called say {said}; its {len(self.items)} items say "
                f"{(errors, cached, len(self.items) - errors - cached)}"
            )
        return self

    @property
    def counts(self) -> dict[str, int]:
        return {"called": self.called, "cached": self.cached, "errors": self.errors, "requests": self.requests}

    @cached_property
    def answers(self) -> dict[str, ManifestRow]:
        """The rows by item key (what a task scores)."""
        return {row.item: row for row in self.items}


def _tally(rows: Sequence[ManifestRow]) -> tuple[int, int]:
    """(failed items, items answered from the cache)."""
    return sum(r.failed for r in rows), sum(r.cached and not r.failed for r in rows)


def write_manifest(path: str | Path, manifest: QueryManifest) -> None:
    """Written atomically: a manifest that exists is a finished query job."""
    atomic_write_json(path, manifest.model_dump(mode="json", exclude_unset=True))


def read_manifest(path: str | Path) -> QueryManifest:
    """The manifest at ``path``; :class:`ManifestError` (one line) when it is not one."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise ManifestError(path, f"cannot read the query manifest: {exc.strerror or exc}") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(path, f"query manifest larger than {MAX_MANIFEST_BYTES:,} bytes; refused")
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ManifestError(path, f"query manifest is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        why = f"query manifest is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise ManifestError(path, why) from None
    try:
        return QueryManifest.model_validate(obj)
    except ValidationError as exc:
        raise ManifestError(path, f"not a query manifest: {_first(exc)}") from None


def _first(exc: ValidationError) -> str:
    """The first problem of a validation error, on one line."""
    e = exc.errors(include_url=False, include_context=False)[0]
    where = ".".join(str(p) for p in e["loc"]) or "the top level"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    msg = " ".join(str(e["msg"]).split())  # a validator's message may span lines
    return f"{where}: {msg}{more}"
