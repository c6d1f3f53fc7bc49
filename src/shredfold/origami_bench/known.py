"""What the package knows ahead of time about Flat-Folder's designs, by each file's SHA-256.

``data/flat_folder/known.json`` holds, for every design file of the manifest (the pinned
files and their later upstream revisions): whether it folds flat and who decided it, how
many flat-folded states it has, and a crease order or why there is none. A plan reads it
instead of solving: the 366 designs plan without engine work, and a design this engine
cannot decide on the user's machine in reasonable time (300 Japanese Spiny Lobster v2 needs
more than 11 GB here, Flat-Folder an hour) is never judged by a timeout there.

The file is made by ``python bench/flat_folder_known.py`` (:func:`.facts.facts_of` per
design, each in a worker process under a time and memory budget; Flat-Folder's own results
at the pinned commit for what the budget does not decide), and a test recomputes it for a
sample of designs. Records may carry more fields than :class:`Known` names (``extra="allow"``): a
later step that derives more from each design adds them without breaking older readers.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.design import Design

KNOWN_FILE = "known.json"
KNOWN_FORMAT = 1


class CreaseOrderFact(BaseModel):
    """The crease order search's outcome with the default budget (steps of crease actions),
    or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: tuple[tuple[dict[str, Any], ...], ...] | None = None
    reason: str = ""
    lines: int = 0


class Known(BaseModel):
    """One design file's facts."""

    model_config = ConfigDict(frozen=True, extra="allow")

    file: str  # the file name in Flat-Folder's examples/instagram
    revision: str | None = None  # None: the pinned file; else the later upstream commit
    vertices: int
    creases: int
    folds_flat: Literal["yes", "no", "undecided"]
    decided_by: Literal["shredfold", "flat-folder"] = "shredfold"
    why_not: str = ""  # for "no" and "undecided": the cause, as a plan would report it
    # whether this engine found a layer order within the budget; False for a design known to
    # fold flat from Flat-Folder's results alone (its target is drawn without one)
    layer_order: bool
    states: int | None = None  # flat-folded states, each component counted up to facts.STATES_LIMIT
    states_limited: bool = False  # some component reached the limit
    states_by: Literal["shredfold", "flat-folder"] | None = None  # None: not counted
    crease_order: CreaseOrderFact | None = None  # None: not searched (a design that does not fold flat)

    @property
    def entry(self) -> ff.Entry:
        return ff.manifest().by_name()[self.file]

    @property
    def category(self) -> str:
        return self.entry.category

    @property
    def tier(self) -> str:
        return ff.tier(self.vertices, self.creases)

    @property
    def problem(self) -> str | None:
        """Why the design cannot be a target (None when it folds flat)."""
        return None if self.folds_flat == "yes" else self.why_not or self.folds_flat


class KnownFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int
    about: str
    commit: str  # Flat-Folder's pinned commit (the manifest's)
    engine: str  # ENGINE_VERSION of the engine that computed it
    budget: dict[str, Any]  # what each design was given (seconds, memory)
    designs: dict[str, Known]  # by the file's SHA-256


@cache
def known_file() -> KnownFile:
    text = (resources.files("shredfold.origami_bench") / "data" / "flat_folder" / KNOWN_FILE).read_text(encoding="utf-8")
    return KnownFile.model_validate(json.loads(text))


def known(sha256: str) -> Known | None:
    """What the package knows about the design file with these bytes (None: not one of
    Flat-Folder's designs, or not computed)."""
    return known_file().designs.get(sha256)


def of(design: Design) -> Known | None:
    """What the package knows about a design read from a file (None for any other)."""
    return None if design.origin is None else known(design.origin.sha256)


def known_problem(sha256: str) -> str | None:
    """Why a known design cannot be a target; None when it folds flat or is not known."""
    fact = known(sha256)
    return None if fact is None else fact.problem
