"""The design value: a crease pattern on the unit square with its tier and category.

Light on purpose (pydantic only): plans and their items hold designs, so a design holds no
geometry, only where its pattern comes from: a file (``origin``, named by its SHA-256) or a
fold sequence (procedural designs). :meth:`Design.pattern` reads the file the one way the
engine reads files (:func:`shredfold.origami.read_pattern`), so the benchmark's pattern of a
design is the engine's pattern of its file. :mod:`.designs` makes designs; the methods that
need the engine import it when called.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from shredfold.errors import InputError
from shredfold.spec import TierThresholds
from shredfold.store import content_key, sha256_bytes

if TYPE_CHECKING:
    from shredfold.origami import CreasePattern, FoldState

# 2: a design is its file's bytes (or its fold sequence), read as the engine reads files
DESIGN_VERSION = 2
TIERS = ("easy", "medium", "hard")
FORMATS = {".fold": "fold", ".cp": "cp"}


class DesignFileError(InputError):
    """A design's file is gone or changed since it was read; the message names the file."""


@dataclass(frozen=True)
class SimpleFold:
    """One simple fold: the layers left of start -> end turn over (folded-plane coordinates)."""

    start: tuple[float, float]
    end: tuple[float, float]
    assignment: str  # "M" or "V"

    def as_action(self) -> dict[str, object]:
        return {"start": list(self.start), "end": list(self.end), "assignment": self.assignment}

    @classmethod
    def from_action(cls, action: dict[str, object]) -> SimpleFold:
        s, e = action["start"], action["end"]
        return cls(
            (float(s[0]), float(s[1])),  # type: ignore[index]
            (float(e[0]), float(e[1])),  # type: ignore[index]
            str(action["assignment"]),
        )


# The pydantic context key under which a plan file's writer and reader pass
# :class:`DesignRoots` (see :meth:`DesignFile._recorded` and :meth:`DesignFile._restored`).
ROOTS = "design_roots"
RootName = Literal["folder", "flat_folder", "builtin"]


@dataclass(frozen=True)
class DesignRoots:
    """The folders a plan file names design files relative to, by name: the spec's design
    folder, Flat-Folder's cache, the package's built-in designs. A plan file (and so a
    release) records no absolute path; a job that loads it finds each file under the folder
    of that name on its own machine (its ``$SHREDFOLD_CACHE``, its spec's folder)."""

    folders: dict[str, Path]

    def record(self, path: str) -> tuple[str, str]:
        """``path``'s root and its path under it (the innermost root that holds it)."""
        target = Path(path).resolve()
        for name, folder in sorted(self.folders.items(), key=lambda kv: -len(str(kv[1].resolve()))):
            base = folder.resolve()
            if target.is_relative_to(base):
                return name, target.relative_to(base).as_posix()
        raise ValueError(f"{path}: a design file under none of the design folders ({', '.join(sorted(self.folders))})")

    def restore(self, root: str, rel: str) -> str:
        if root not in self.folders:
            raise ValueError(f"a design file recorded under {root!r}, a folder this spec does not name")
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ValueError(f"{rel!r}: a design file recorded outside its folder {root!r}")
        return str(self.folders[root] / rel)


class DesignFile(BaseModel):
    """Where a design's bytes are: an absolute path on this machine (not part of any key: a
    moved folder keeps its designs' keys; a plan file records it under a named root, see
    :class:`DesignRoots`) and the SHA-256 of the bytes read at plan time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    sha256: str

    @property
    def format(self) -> Literal["fold", "cp"]:
        return "cp" if self.path.endswith(".cp") else "fold"

    @model_serializer(mode="wrap")
    def _recorded(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        roots = (info.context or {}).get(ROOTS)
        if isinstance(roots, DesignRoots):
            out["root"], out["path"] = roots.record(self.path)
        return out

    @model_validator(mode="before")
    @classmethod
    def _restored(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or "root" not in data:
            return data
        roots = (info.context or {}).get(ROOTS)
        if not isinstance(roots, DesignRoots):
            raise ValueError("a design file recorded under a named folder, read without the plan's folders")
        rest = {k: v for k, v in data.items() if k != "root"}
        rest["path"] = roots.restore(str(data["root"]), str(data.get("path", "")))
        return rest


class Design(BaseModel):
    """One design of the benchmark: its key, where it comes from, its category, counts and
    tier; no geometry.

    The benchmark's value, not the engine's: plans and their items hold designs, plan files
    record them, keys are made of their keys, and planning Flat-Folder's 366 must not
    arrange 366 patterns. So it is a pydantic model that names its pattern (the file's
    SHA-256, or the fold sequence) without holding it. It is not a ``CreasePattern`` (read
    on demand), not a ``FoldFrame`` (it keeps the file's hash, not its contents) and not a
    ``FoldState`` (targets are solved once in their own stage).

    The one path to the engine's values: :meth:`pattern` for the crease pattern (the file
    read by ``read_pattern``, or the sequence replayed); :func:`replay` of :meth:`steps`
    for the states of a sequence; ``targets.target_state`` for the folded target.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    key: str
    source: Literal["builtin", "procedural", "folder", "flat_folder"]
    category: str
    origin: DesignFile | None = None  # the file; None for a procedural design (its sequence)
    sequence: tuple[dict[str, Any], ...] | None = None
    vertices: int
    creases: int
    tier: str = ""  # set by the catalogue from the spec's thresholds; Flat-Folder's designs carry the paper's

    def pattern(self) -> CreasePattern:
        """The crease pattern: the file read as the engine reads it (fitted to the unit
        square, which leaves a sheet already on it untouched), else the fold sequence's last
        state."""
        if self.origin is not None:
            return _file_pattern(self.origin.path, self.origin.sha256)
        if self.sequence is None:
            raise ValueError(f"design {self.id} has neither a file nor a fold sequence")
        return _sequence_pattern(json.dumps(self.sequence, sort_keys=True))

    def steps(self) -> list[SimpleFold] | None:
        return None if self.sequence is None else [SimpleFold.from_action(a) for a in self.sequence]


def builtin_folder() -> Path:
    """The package's built-in design files."""
    from importlib import resources

    return Path(str(resources.files("shredfold.origami_bench") / "builtin"))


def read_design_bytes(origin: DesignFile) -> bytes:
    """The design file's bytes, checked against the SHA-256 its plan read."""
    try:
        data = Path(origin.path).read_bytes()
    except OSError as exc:
        raise DesignFileError(f"{origin.path}: cannot read the design file ({exc.strerror}); plan again") from None
    if sha256_bytes(data) != origin.sha256:
        raise DesignFileError(f"{origin.path}: the design file changed since it was planned (SHA-256 {origin.sha256[:12]}…); plan again")
    return data


# A few patterns per process: a job reads each of its designs' patterns many times (prefix
# states, targets), and the largest of Flat-Folder's take a second to arrange.
@lru_cache(maxsize=8)
def _file_pattern(path: str, sha256: str) -> CreasePattern:
    from shredfold.origami import read_pattern

    origin = DesignFile(path=path, sha256=sha256)
    text = read_design_bytes(origin).decode("utf-8")
    return read_pattern(text, origin.format, fit=True)


@lru_cache(maxsize=8)
def _sequence_pattern(sequence: str) -> CreasePattern:
    return replay([SimpleFold.from_action(a) for a in json.loads(sequence)])[-1].pattern


def replay(steps: list[SimpleFold], start: FoldState | None = None) -> list[FoldState]:
    """Every state of a sequence, the blank sheet first; raises if a step is rejected."""
    from shredfold.origami import FoldState, fold, square_sheet

    states = [start or square_sheet()]
    for i, s in enumerate(steps):
        new = fold(states[-1], s.start, s.end, s.assignment)
        if not isinstance(new, FoldState):
            raise ValueError(f"step {i} of the sequence is rejected: {new.reason}: {new.detail}")
        states.append(new)
    return states


def tier_of(vertices: int, creases: int, t: TierThresholds) -> str:
    if vertices >= t.hard_vertices or creases >= t.hard_creases:
        return "hard"
    if vertices >= t.medium_vertices or creases >= t.medium_creases:
        return "medium"
    return "easy"


def file_design_key(sha256: str, fmt: str) -> str:
    """A file design's key: its bytes (the pattern, and a FOLD file's fold sequence, are read
    from them) and how they are read."""
    return content_key("origami_design", DESIGN_VERSION, {"file": sha256, "format": fmt})


def sequence_design_key(sequence: Any) -> str:
    """A procedural design's key: its fold sequence (the pattern is the sequence replayed)."""
    return content_key("origami_design", DESIGN_VERSION, {"sequence": sequence})
