"""Origami engine: FOLD I/O, crease patterns, flat-foldability and folded-state drawing.

A pure library: values in, values out. The interactive environment builds on
:func:`fold`, :func:`crease` and :func:`solve_layers`.
"""

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
from .pattern import CreasePattern

# Bump when any output (layer orders, counts, drawings, rejection reasons) changes meaning.
ENGINE_VERSION = "3"  # 3: noisy designs: stable overlap scale, looser Kawasaki; 2: physical stacking

__all__ = [
    "ENGINE_VERSION",
    "CreasePattern",
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
    "silhouette_mask",
    "solve_layers",
    "square_sheet",
    "state_from_pattern",
    "unfold",
    "write_fold",
]
