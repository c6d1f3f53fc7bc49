"""Design sources for OrigamiBench: the built-in FOLD set, procedural sequences, a folder.

A :class:`Design` is a crease pattern normalised to the unit square, with its complexity tier
(from vertex and crease counts), its semantic category and, where one is known, the simple
fold sequence that makes it (the ground truth the oracle replays). Reading file designs needs
no engine work; procedural designs are generated once and cached in the store by key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict

from shredfold.spec import DesignSources, OrigamiBenchSpec, TierThresholds
from shredfold.store import Store, content_key

from . import ENGINE_VERSION, FoldState, read_cp
from .pattern import CreasePattern
from .procedural import SimpleFold, random_sequence, replay

DESIGN_VERSION = 1
PROCEDURAL_STAGE, PROCEDURAL_VERSION = "origami_procedural", 1
SEQUENCE_KEY = "shredfold:fold_sequence"
CATEGORY_KEY = "shredfold:category"

Segment = tuple[tuple[float, float], tuple[float, float]]


class Design(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    key: str
    source: Literal["builtin", "procedural", "folder"]
    category: str
    segments: tuple[Segment, ...]
    assignments: str
    sequence: tuple[dict[str, Any], ...] | None = None
    vertices: int
    creases: int
    tier: str = ""

    def pattern(self) -> CreasePattern:
        return CreasePattern.from_segments(np.asarray(self.segments, float), list(self.assignments))

    def steps(self) -> list[SimpleFold] | None:
        return None if self.sequence is None else [SimpleFold.from_action(a) for a in self.sequence]

    def target_state(self) -> FoldState:
        """The folded target: the replayed sequence where there is one, else the pattern."""
        from . import state_from_pattern

        steps = self.steps()
        if steps is not None:
            return replay(steps)[-1]
        return state_from_pattern(self.pattern())


def tier_of(vertices: int, creases: int, t: TierThresholds) -> str:
    if vertices >= t.hard_vertices or creases >= t.hard_creases:
        return "hard"
    if vertices >= t.medium_vertices or creases >= t.medium_creases:
        return "medium"
    return "easy"


def _design_key(segments: Iterable[Segment], assignments: str, sequence: Any) -> str:
    return content_key(
        "origami_design",
        DESIGN_VERSION,
        {"segments": [list(map(list, s)) for s in segments], "assignments": assignments, "sequence": sequence},
    )


def _normalise(segs: np.ndarray) -> np.ndarray:
    """Scale and translate so the pattern's bounding box is the unit square (longer side)."""
    lo = segs.reshape(-1, 2).min(axis=0)
    span = float((segs.reshape(-1, 2).max(axis=0) - lo).max()) or 1.0
    return np.round((segs - lo) / span, 12)


def _counts(segs: np.ndarray, assign: str) -> tuple[int, int]:
    pts = np.round(segs.reshape(-1, 2), 9)
    return len(np.unique(pts, axis=0)), sum(a != "B" for a in assign)


def design_from_file(
    path_or_name: str, text: str, source: Literal["builtin", "folder"], category: str | None
) -> Design:
    """A design from FOLD (``.fold``) or ORIPA (``.cp``) text."""
    meta: dict[str, Any] = {}
    if path_or_name.endswith(".cp"):
        raw = read_cp(text)
        segs = np.array([[p, q] for p, q, _ in raw], float)
        assign = "".join(a for _, _, a in raw)
    else:
        from . import read_fold

        fold = read_fold(text)  # validates; errors name the field
        meta = json.loads(text)
        frame = fold.key_frame
        v = np.asarray(frame.vertices_coords, float)
        e = np.asarray(frame.edges_vertices, int)
        segs, assign = v[e], "".join(frame.edges_assignment)
    segs = _normalise(segs)
    sequence = meta.get(SEQUENCE_KEY)
    seq = tuple(sequence) if sequence else None
    if category is None:
        category = meta.get(CATEGORY_KEY) or _first_class(meta) or "uncategorised"
    n_v, n_c = _counts(segs, assign)
    segments = tuple(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))) for a, b in segs)
    return Design(
        id=f"{source}/{Path(path_or_name).stem}",
        key=_design_key(segments, assign, list(seq) if seq else None),
        source=source,
        category=category,
        segments=segments,
        assignments=assign,
        sequence=seq,
        vertices=n_v,
        creases=n_c,
    )


def _first_class(meta: dict[str, Any]) -> str | None:
    generic = {"singleModel", "multiModel", "animation", "diagrams", "creasePattern", "foldedForm"}
    for field in ("file_classes", "frame_classes"):
        for c in meta.get(field) or []:
            if c not in generic:
                return str(c)
    return None


def builtin_designs() -> list[Design]:
    folder = resources.files("shredfold.origami") / "builtin"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith((".fold", ".cp")):
            out.append(design_from_file(entry.name, entry.read_text(encoding="utf-8"), "builtin", None))
    return out


def folder_designs(folder: Path, categories: Path | None) -> list[Design]:
    mapping: dict[str, str] = {}
    if categories is not None:
        mapping = {str(k): str(v) for k, v in (yaml.safe_load(categories.read_text()) or {}).items()}
    out = []
    for p in sorted(folder.rglob("*")):
        if p.suffix in (".fold", ".cp") and p.is_file():
            out.append(design_from_file(p.name, p.read_text(encoding="utf-8"), "folder", mapping.get(p.stem)))
    return out


def procedural_designs(src: DesignSources, seed: int, store: Store | None) -> list[Design]:
    """``src.procedural`` designs from seeded random sequences; cached in ``store`` by key."""
    params = {
        "count": src.procedural,
        "folds": list(src.procedural_folds),
        "seed": seed,
        "engine": ENGINE_VERSION,
    }
    key = content_key(PROCEDURAL_STAGE, PROCEDURAL_VERSION, params)
    if store is not None and store.has(PROCEDURAL_STAGE, key):
        return [Design.model_validate(d) for d in store.get_json(PROCEDURAL_STAGE, key)]
    out = [_procedural(i, src, seed) for i in range(src.procedural)]
    if store is not None:
        store.put_json(PROCEDURAL_STAGE, key, [d.model_dump(mode="json") for d in out])
    return out


def _procedural(i: int, src: DesignSources, seed: int) -> Design:
    item_key = content_key("origami_procedural_design", PROCEDURAL_VERSION, {"seed": seed, "index": i})
    rng = np.random.default_rng(int(item_key[:16], 16))
    lo, hi = src.procedural_folds
    seq = random_sequence(rng, int(rng.integers(lo, hi + 1)))
    final = replay(seq)[-1]
    segs = final.pattern.segments
    assign = "".join(final.pattern.assignments.tolist())
    segments = tuple(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))) for a, b in segs)
    actions = tuple(s.as_action() for s in seq)
    n_v, n_c = _counts(segs, assign)
    return Design(
        id=f"procedural/{i:03d}",
        key=_design_key(segments, assign, list(actions)),
        source="procedural",
        category="procedural",
        segments=segments,
        assignments=assign,
        sequence=actions,
        vertices=n_v,
        creases=n_c,
    )


def load_designs(ob: OrigamiBenchSpec, seed: int, store: Store | None = None) -> list[Design]:
    """Every design of the spec, each with its tier; order: built-in, procedural, folder."""
    src = ob.designs
    designs: list[Design] = []
    if src.builtin:
        designs += _builtin_cached()
    if src.procedural:
        designs += procedural_designs(src, seed, store)
    if src.folder is not None:
        designs += folder_designs(src.folder, src.categories)
    return [d.model_copy(update={"tier": tier_of(d.vertices, d.creases, ob.tiers)}) for d in designs]


@cache
def _builtin_cached() -> tuple[Design, ...]:
    return tuple(builtin_designs())


# ---------------------------------------------------------------- the built-in set's source

_T = float(np.tan(np.pi / 8))

# Simple models and bases as fold sequences on the unit square (folded-plane coordinates:
# the layers left of start -> end turn over). `author_builtin` writes them as FOLD files.
BUILTIN_SEQUENCES: dict[str, list[tuple[tuple[float, float], tuple[float, float], str]]] = {
    "book-fold": [((0.5, 0.0), (0.5, 1.0), "V")],
    "diagonal-fold": [((0.0, 0.0), (1.0, 1.0), "V")],
    "cupboard-fold": [((0.25, 0.0), (0.25, 1.0), "V"), ((0.75, 1.0), (0.75, 0.0), "V")],
    "kite-base": [((1.0, _T), (0.0, 0.0), "V"), ((0.0, 0.0), (_T, 1.0), "V")],
    "quarter-square": [((0.5, 0.0), (0.5, 1.0), "V"), ((0.5, 0.5), (1.0, 0.5), "M")],
    "double-triangle": [((0.0, 0.0), (1.0, 1.0), "V"), ((1.0, 0.0), (0.5, 0.5), "V")],
    "corner-fold": [((0.5, 0.0), (0.0, 0.5), "V")],
    "blintz-half": [((0.5, 0.0), (0.0, 0.5), "V"), ((0.5, 1.0), (1.0, 0.5), "V")],
    "blintz-base": [
        ((0.5, 0.0), (0.0, 0.5), "V"),
        ((1.0, 0.5), (0.5, 0.0), "V"),
        ((0.5, 1.0), (1.0, 0.5), "V"),
        ((0.0, 0.5), (0.5, 1.0), "V"),
    ],
    "ice-cream-cone": [
        ((1.0, _T), (0.0, 0.0), "V"),
        ((0.0, 0.0), (_T, 1.0), "V"),
        ((1.0, 0.55), (0.55, 1.0), "M"),
    ],
    "house": [
        ((0.5, 0.0), (0.5, 1.0), "V"),
        ((0.5, 0.75), (0.75, 1.0), "V"),
    ],
}

# Classic bases given only as crease patterns (collapses, not simple folds): no sequence.
BUILTIN_PATTERNS: dict[str, list[tuple[tuple[float, float], tuple[float, float], str]]] = {
    "waterbomb-base": [
        ((0, 0), (0.5, 0.5), "M"), ((0.5, 0.5), (1, 1), "M"), ((1, 0), (0.5, 0.5), "M"),
        ((0.5, 0.5), (0, 1), "M"), ((0, 0.5), (0.5, 0.5), "V"), ((0.5, 0.5), (1, 0.5), "V"),
    ],
    "preliminary-base": [
        ((0, 0.5), (0.5, 0.5), "M"), ((0.5, 0.5), (1, 0.5), "M"), ((0.5, 0), (0.5, 0.5), "M"),
        ((0.5, 0.5), (0.5, 1), "M"), ((0, 0), (0.5, 0.5), "V"), ((0.5, 0.5), (1, 1), "V"),
    ],
}


def author_builtin(folder: Path) -> list[Path]:
    """Write the built-in FOLD files (run by hand when the sources above change)."""
    from . import state_from_pattern, write_fold

    written = []
    border = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]
    for name, raw in BUILTIN_SEQUENCES.items():
        seq = [SimpleFold(p, q, a) for p, q, a in raw]
        pattern = replay(seq)[-1].pattern
        meta = {SEQUENCE_KEY: [s.as_action() for s in seq]}
        written.append(_write(folder, name, pattern, meta, write_fold))
    for name, creases in BUILTIN_PATTERNS.items():
        segs = [*(s for s in border), *((p, q) for p, q, _ in creases)]
        pattern = CreasePattern.from_segments(np.asarray(segs, float), ["B"] * 4 + [a for *_, a in creases])
        if not state_from_pattern(pattern).flat_foldable:
            raise ValueError(f"built-in pattern {name} does not fold flat")
        written.append(_write(folder, name, pattern, {}, write_fold))
    return written


def _write(folder: Path, name: str, pattern: CreasePattern, extra: dict[str, Any], write_fold: Any) -> Path:
    frame = pattern.to_fold_frame()
    text = json.loads(write_fold(frame))
    text.update({"file_title": name, "file_creator": "shredfold", CATEGORY_KEY: "geometry", **extra})
    path = folder / f"{name}.fold"
    path.write_text(json.dumps(text, indent=1) + "\n", encoding="utf-8")
    return path
