"""OrigamiBench's jobs' memory, in MB before :mod:`shredfold.stages.resources` adds its
margin: measured peaks (``bench/job_memory_notes.md``) that grow with the pictures'
``image_size``; a design's validation with the time it is given; SS's scoring with torch."""

from __future__ import annotations

from shredfold.spec import ResolvedSpec
from shredfold.tasks.base import Cell, ItemSet

ORIGAMI_SET_MB = 330  # MCQ pictures and full-step targets at 256 px
ORIGAMI_SET_PER_MPX = 500.0  # …and per megapixel of image_size² beyond that
# A user's design validated by its own job: the layer solver's memory follows no measure of
# the design (Dragon HP, 1550 vertices: 483 MB; Shrimp v2, 1529: 5716 MB when its 60 s ran
# out), only the time it is given: per second of validate_timeout_s, the most measured (300
# Japanese Spiny Lobster v2: 11 GB after 100 s, bench/origami_scale_notes.md).
VALIDATE_BASE_MB = 200  # a small design's whole job (194 MB measured)
VALIDATE_PER_S = 110.0
ORIGAMI_AGENT_MB = 320
ORIGAMI_SCORE_MB = 300
SS_SCORE_MB = 2000  # torch and a ViT-B-32 CLIP model for SS (its weights held twice on load)
# A score job that computes SS runs torch on this many threads (OMP_NUM_THREADS).
SS_THREADS = 2


def _size(spec: ResolvedSpec) -> int:
    ob = spec.spec.origami
    return ob.image_size if ob is not None else 256


def set_mb(item_set: ItemSet, spec: ResolvedSpec) -> float:
    ob = spec.spec.origami
    if ob is not None and item_set.labels.get("task") == "validate":
        return VALIDATE_BASE_MB + VALIDATE_PER_S * ob.designs.validate_timeout_s
    size = _size(spec)
    return ORIGAMI_SET_MB + ORIGAMI_SET_PER_MPX * max(size * size - 256 * 256, 0) / 1e6


def query_mb(cell: Cell, spec: ResolvedSpec) -> float | None:
    """Its in-process agents' memory (None: a model behind an endpoint)."""
    return ORIGAMI_AGENT_MB if cell.model.adapter.startswith("origami-") else None


def request_mpx(cell: Cell, spec: ResolvedSpec) -> float:
    return 5 * _size(spec) ** 2 / 1e6  # an MCQ item's five pictures


def ss(cell: Cell, spec: ResolvedSpec) -> bool:
    """Whether the cell's score job computes SS (CLIP weights named in the spec)."""
    ob = spec.spec.origami
    if cell.task != "origami_fullstep" or ob is None:
        return False
    return ob.clip.checkpoint is not None or ob.clip.pretrained is not None


def score_mb(cell: Cell, spec: ResolvedSpec) -> float:
    return SS_SCORE_MB if ss(cell, spec) else ORIGAMI_SCORE_MB


def score_threads(cell: Cell, spec: ResolvedSpec) -> int:
    return SS_THREADS if ss(cell, spec) else 1
