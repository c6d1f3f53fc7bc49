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

# 2: a design without a fold sequence is drawn centred in the view (Flat-Folder's models
# could fall partly outside it, where their first face put them)
TARGET_STAGE, TARGET_VERSION = "origami_target", 2


def target_state(design: Design) -> FoldState:
    """The folded target: the replayed sequence where there is one, else the pattern folded
    with its outline centred on the sheet's centre (GS ignores where a model lies; the
    picture, over a fixed frame, must hold all of it)."""
    from shredfold.origami import state_from_pattern
    from shredfold.origami_bench.procedural import replay

    steps = design.steps()
    if steps is not None:
        return replay(steps)[-1]
    return centred(state_from_pattern(design.pattern()))


def centred(state: FoldState) -> FoldState:
    """The same folded state moved so its outline's bounding box is centred on the sheet's."""
    import dataclasses

    import numpy as np

    from shredfold.origami import fold_geometry, folded_silhouette

    lo_x, lo_y, hi_x, hi_y = folded_silhouette(state.geometry).bounds
    sheet = state.pattern.vertices
    shift = (sheet.min(axis=0) + sheet.max(axis=0)) / 2 - np.array([lo_x + hi_x, lo_y + hi_y]) / 2
    root = state.geometry.transforms[0].copy()
    root[:2, 2] += shift
    return dataclasses.replace(state, geometry=fold_geometry(state.pattern, root=0, root_transform=root))


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
