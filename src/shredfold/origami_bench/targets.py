"""Full-step targets: a design's folded state, solved once and stored by key.

A target object holds ``target.png`` (what a model is shown), ``silhouette.npy`` (what GS
compares), ``state.fold`` (the solved state) and ``meta.json`` (design, tier, sequence).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.design import Design
from shredfold.store import content_key

if TYPE_CHECKING:
    from shredfold.origami import FoldState

TARGET_STAGE, TARGET_VERSION = "origami_target", 1


def target_state(design: Design) -> FoldState:
    """The folded target: the replayed sequence where there is one, else the pattern."""
    from shredfold.origami import state_from_pattern
    from shredfold.origami_bench.procedural import replay

    steps = design.steps()
    if steps is not None:
        return replay(steps)[-1]
    return state_from_pattern(design.pattern())


def target_key(design: Design, size: int) -> str:
    return content_key(TARGET_STAGE, TARGET_VERSION, {"size": size, "engine": ENGINE_VERSION}, [design.key])


def solve_target(design: Design, size: int, folder: str | Path) -> None:
    """Solve a design's folded state once: target.png, silhouette.npy, state.fold, meta.json."""
    import numpy as np

    from shredfold.origami import write_fold
    from shredfold.origami_bench.env import render_folded, silhouette

    out = Path(folder)
    state = target_state(design)
    (out / "target.png").write_bytes(render_folded(state, size))
    np.save(out / "silhouette.npy", silhouette(state, size))
    (out / "state.fold").write_text(write_fold(state.pattern.to_fold_frame(state.layers.face_orders)))
    meta = {
        "design": design.id,
        "design_key": design.key,
        "category": design.category,
        "tier": design.tier,
        "flat_foldable": state.flat_foldable,
        "sequence": list(design.sequence) if design.sequence else None,
        "engine_version": ENGINE_VERSION,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
