"""Design sources for OrigamiBench: the built-in FOLD set, procedural sequences, a folder.

Each source gives :class:`~shredfold.origami_bench.design.Design` values: where a design's
crease pattern comes from (its file, named by SHA-256, or its fold sequence), its semantic
category and, where one is known, the simple fold sequence that makes it (the ground truth
the oracle replays). A file design's key is its bytes, so reading a folder parses each file
only for its counts and metadata (none at all for Flat-Folder's designs, whose counts the
package ships); procedural designs replay their sequences with the engine, so
:mod:`.catalogue` caches what a spec's sources give.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import yaml

from shredfold.origami.fold_format import read_cp, read_fold
from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.design import (
    FORMATS,
    Design,
    DesignFile,
    DesignFileError,
    SimpleFold,
    builtin_folder,
    file_design_key,
    replay,
    sequence_design_key,
)
from shredfold.origami_bench.flat_folder import Match
from shredfold.origami_bench.known import known_problem
from shredfold.spec import DesignSources
from shredfold.store import content_key, sha256_bytes

if TYPE_CHECKING:
    from shredfold.origami import CreasePattern

SEQUENCE_KEY = "shredfold:fold_sequence"
CATEGORY_KEY = "shredfold:category"
PROCEDURAL_VERSION = 1
T = TypeVar("T")


class DesignError(ValueError):
    """A design file that cannot be used; the message names the file and the cause."""


def progress(items: Iterable[T], what: str, total: int | None = None) -> Iterator[T]:
    """``items`` with a progress bar on stderr once they take more than two seconds."""
    from tqdm import tqdm

    return iter(tqdm(items, desc=what, total=total, delay=2, unit="design", leave=False, dynamic_ncols=True))


def design_from_file(
    path: Path,
    source: Literal["builtin", "folder", "flat_folder"],
    category: str | None = None,
    *,
    data: bytes | None = None,
) -> Design:
    """A design from a FOLD (``.fold``) or ORIPA (``.cp``) file (its bytes ``data``, when
    they are read already).

    The file is parsed here only for what planning needs (its counts, its category and fold
    sequence metadata, and that it reads at all); the pattern is read from the file again
    when an engine needs it (:meth:`Design.pattern`)."""
    fmt = FORMATS.get(path.suffix)
    if fmt is None:
        raise DesignError(f"{path}: not a design file (.fold or .cp)")
    if data is None:
        data = path.read_bytes()
    text = data.decode("utf-8")
    meta: dict[str, Any] = {}
    if fmt == "cp":
        raw = read_cp(text)
        vertices, creases = len({p for seg in raw for p in seg[:2]}), sum(a != "B" for *_, a in raw)
    else:
        read_fold(text)  # validates; errors name the field
        meta = json.loads(text)
        vertices, creases = ff.fold_counts(meta)
    sequence = meta.get(SEQUENCE_KEY)
    if category is None:
        category = meta.get(CATEGORY_KEY) or _first_class(meta) or "uncategorised"
    sha = sha256_bytes(data)
    return Design(
        id=f"{source}/{path.stem}",
        key=file_design_key(sha, fmt),
        source=source,
        category=category,
        origin=DesignFile(path=str(path.resolve()), sha256=sha),
        sequence=tuple(sequence) if sequence else None,
        vertices=vertices,
        creases=creases,
    )


def _first_class(meta: dict[str, Any]) -> str | None:
    generic = {"singleModel", "multiModel", "animation", "diagrams", "creasePattern", "foldedForm"}
    for field in ("file_classes", "frame_classes"):
        for c in meta.get(field) or []:
            if c not in generic:
                return str(c)
    return None


def builtin_designs() -> list[Design]:
    folder = builtin_folder()
    return [
        design_from_file(p, "builtin")
        for p in sorted(folder.iterdir(), key=lambda p: p.name)
        if p.suffix in FORMATS
    ]


def flat_fold_problem(design: Design, timeout: float) -> str | None:
    """Why a design cannot be a target (None when the solver finds a flat-folded state)."""
    from shredfold.origami import solve_layers

    try:
        result = solve_layers(design.pattern(), limit=1, timeout=timeout)
    except DesignFileError:
        raise  # the file changed or went since the plan: not a verdict on the design
    except Exception as exc:  # noqa: BLE001 - an untrusted file must not crash the plan
        return f"the engine could not read its crease pattern ({type(exc).__name__}: {exc})"[:300]
    if result.status == "ok":
        return None
    if result.status == "timeout":
        return f"undecided: the layer solver found no flat-folded state within {timeout:g} s"
    why = f"{result.reason}: {result.detail}" if result.detail else result.reason
    return f"does not fold flat ({why})"[:300]


def flat_folder_design(match: Match, path: Path, data: bytes, category: str | None = None) -> Design:
    """One of Flat-Folder's designs, recognised by its bytes: its category from
    ``categories.yaml`` (unless one is given) and its tier from ``tiers.yaml`` on the FOLD
    file's own counts (the manifest's for a pinned file: nothing is parsed)."""
    sha = sha256_bytes(data)
    if match.revision is None:
        vertices, creases = match.entry.vertices, match.entry.creases
    else:  # a later upstream revision: its own counts
        vertices, creases = ff.fold_counts(json.loads(data))
    return Design(
        id=f"flat_folder/{match.entry.stem}",
        key=file_design_key(sha, "fold"),
        source="flat_folder",
        category=category or match.entry.category,
        origin=DesignFile(path=str(path.resolve()), sha256=sha),
        vertices=vertices,
        creases=creases,
        tier=ff.tier(vertices, creases),
    )


def design_files(folder: Path) -> list[Path]:
    """The design files under ``folder``, in a stable order."""
    return [p for p in sorted(folder.rglob("*")) if p.suffix in FORMATS and p.is_file()]


def folder_designs(
    folder: Path, categories: Path | None, validate_timeout: float | None = None, *, flat_folder_only: bool = False
) -> tuple[list[Design], list[DesignError]]:
    """Every ``.fold`` / ``.cp`` file under ``folder``, and the files that cannot be used.

    One bad file does not hide the others: each failure is returned with its file name, so a
    plan can report all of them at once. A file whose bytes are one of Flat-Folder's designs
    (:mod:`.flat_folder`) is that design, with its category and tier, and the package knows
    whether it folds flat (:mod:`.known`); with ``flat_folder_only`` any other
    file is an error. With ``validate_timeout`` every other design must also fold flat (one
    layer order found within that many seconds), checked here, one after the other (scripts
    and tests; a plan leaves that to parallel jobs).
    """
    mapping: dict[str, str] = {}
    if categories is not None:
        mapping = {str(k): str(v) for k, v in (yaml.safe_load(categories.read_text()) or {}).items()}
    known = ff.manifest()
    out: list[Design] = []
    errors: list[DesignError] = []
    files = design_files(folder)
    inside = folder.resolve()
    for p in progress(files, f"reading designs in {folder}"):
        if not p.resolve().is_relative_to(inside):  # plans name design files within their folder
            errors.append(DesignError(f"{p}: a link that leaves the design folder {folder}"))
            continue
        try:
            data = p.read_bytes()
            match = known.identify(data) if p.suffix == ".fold" else None
            if match is not None:
                design = flat_folder_design(match, p, data, mapping.get(p.stem))
                problem = known_problem(sha256_bytes(data))
            elif flat_folder_only:
                errors.append(DesignError(
                    f"{p}: SHA-256 {sha256_bytes(data)} is not one of Flat-Folder's designs at "
                    f"{known.commit[:7]}; run `shredfold designs fetch` again"
                ))  # fmt: skip
                continue
            else:
                design = design_from_file(p, "folder", mapping.get(p.stem), data=data)
                problem = None if validate_timeout is None else flat_fold_problem(design, validate_timeout)
        except (ValueError, UnicodeDecodeError) as exc:
            errors.append(DesignError(f"{p}: {exc}"))
            continue
        if problem is not None:
            errors.append(DesignError(f"{p}: {problem}"))
        else:
            out.append(design)
    return out, errors


def procedural_designs(src: DesignSources, seed: int) -> list[Design]:
    """``src.procedural`` designs from seeded random sequences (engine work: the catalogue
    caches them)."""
    return [procedural_design(i, src, seed) for i in progress(range(src.procedural), "making procedural designs")]


def procedural_design(i: int, src: DesignSources, seed: int) -> Design:
    """The ``i``-th procedural design of a spec with seed ``seed`` (``procedural/{i:03d}``)."""
    from shredfold.origami_bench.procedural import random_sequence

    item_key = content_key("origami_procedural_design", PROCEDURAL_VERSION, {"seed": seed, "index": i})
    rng = np.random.default_rng(int(item_key[:16], 16))
    lo, hi = src.procedural_folds
    seq = random_sequence(rng, int(rng.integers(lo, hi + 1)))
    final = replay(seq)[-1].pattern
    actions = tuple(s.as_action() for s in seq)
    return Design(
        id=f"procedural/{i:03d}",
        key=sequence_design_key(list(actions)),
        source="procedural",
        category="procedural",
        sequence=actions,
        vertices=len(final.vertices),
        creases=int((final.assignments != "B").sum()),
    )


@cache
def builtin_cached() -> tuple[Design, ...]:
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
    from shredfold.origami import CreasePattern, state_from_pattern

    written = []
    border = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]
    for name, raw in BUILTIN_SEQUENCES.items():
        seq = [SimpleFold(p, q, a) for p, q, a in raw]
        pattern = replay(seq)[-1].pattern
        meta = {SEQUENCE_KEY: [s.as_action() for s in seq]}
        written.append(_write(folder, name, pattern, meta))
    for name, creases in BUILTIN_PATTERNS.items():
        segs = [*(s for s in border), *((p, q) for p, q, _ in creases)]
        pattern = CreasePattern.from_segments(np.asarray(segs, float), ["B"] * 4 + [a for *_, a in creases])
        if not state_from_pattern(pattern).flat_foldable:
            raise ValueError(f"built-in pattern {name} does not fold flat")
        written.append(_write(folder, name, pattern, {}))
    return written


def _write(folder: Path, name: str, pattern: CreasePattern, extra: dict[str, Any]) -> Path:
    from shredfold.origami.fold_format import fold_object

    fold = fold_object(pattern.to_fold_frame())
    fold.update({"file_title": name, "file_creator": "shredfold", CATEGORY_KEY: "geometry", **extra})
    path = folder / f"{name}.fold"
    path.write_text(json.dumps(fold, indent=1) + "\n", encoding="utf-8")
    return path
