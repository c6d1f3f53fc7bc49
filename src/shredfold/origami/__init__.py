"""Origami engine: FOLD I/O, crease patterns, flat-foldability and folded-state drawing.

A pure library: values in, values out; it imports nothing of the harness (a test holds it
to that). The benchmark built on it lives in :mod:`shredfold.origami_bench`.

Its data: where Flat-Folder and Rabbit Ear keep one FOLD object and add fields to it as they
compute them, this engine keeps one immutable value per stage of that computation, each
with one way to the next: a file as written (``FoldFile`` / ``FoldFrame``) -> the arranged
sheet (``CreasePattern``: ``read_pattern`` from text, ``CreasePattern.from_fold`` from a
frame) -> the folded, layered model (``FoldState``: ``state_from_pattern``), and back to a
file by ``CreasePattern.to_fold_frame`` and ``write_fold``. Each stage costs (arranging:
up to a second; ordering layers: seconds) and its result is shared by states, caches and
episodes, which one object that grows would not allow. OrigamiBench's ``Design`` names a
pattern (a file's SHA-256 or a fold sequence) without holding one. Each type's docstring
says why it is not one of the others.

The names below load their module on first use, so that ``ENGINE_VERSION`` (which enters
content keys at plan time) costs no geometry import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Bump when any output (layer orders, counts, drawings, rejection reasons) changes meaning.
# 5: affine maps applied element by element, not by BLAS (the same last bits on every processor).
ENGINE_VERSION = "5"

_EXPORTS = {
    "FoldState": "actions",
    "FoldStep": "actions",
    "Rejection": "actions",
    "crease": "actions",
    "fold": "actions",
    "square_sheet": "actions",
    "state_from_pattern": "actions",
    "unfold": "actions",
    "draw_crease_pattern": "draw",
    "draw_folded": "draw",
    "silhouette_mask": "draw",
    "FoldFile": "fold_format",
    "FoldFormatError": "fold_format",
    "FoldFrame": "fold_format",
    "read_cp": "fold_format",
    "read_fold": "fold_format",
    "write_fold": "fold_format",
    "FoldedGeometry": "folded",
    "fold_geometry": "folded",
    "folded_silhouette": "folded",
    "LayerResult": "layers",
    "solve_layers": "layers",
    "LocalReport": "local",
    "VertexViolation": "local",
    "check_local": "local",
    "CreasePattern": "pattern",
    "read_pattern": "pattern",
}

if TYPE_CHECKING:
    from .actions import (
        FoldState,
        FoldStep,
        Rejection,
        crease,
        fold,
        square_sheet,
        state_from_pattern,
        unfold,
    )
    from .draw import draw_crease_pattern, draw_folded, silhouette_mask
    from .fold_format import FoldFile, FoldFormatError, FoldFrame, read_cp, read_fold, write_fold
    from .folded import FoldedGeometry, fold_geometry, folded_silhouette
    from .layers import LayerResult, solve_layers
    from .local import LocalReport, VertexViolation, check_local
    from .pattern import CreasePattern, read_pattern


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "CreasePattern",
    "ENGINE_VERSION",
    "FoldFile",
    "FoldFormatError",
    "FoldFrame",
    "FoldState",
    "FoldStep",
    "FoldedGeometry",
    "LayerResult",
    "LocalReport",
    "Rejection",
    "VertexViolation",
    "check_local",
    "crease",
    "draw_crease_pattern",
    "draw_folded",
    "fold",
    "fold_geometry",
    "folded_silhouette",
    "read_cp",
    "read_fold",
    "read_pattern",
    "silhouette_mask",
    "solve_layers",
    "square_sheet",
    "state_from_pattern",
    "unfold",
    "write_fold",
]
