"""Full-step targets: a design's folded state, solved once and stored by key.

A target object holds ``target.png`` (what a model is shown), ``silhouette.npy`` (what GS
compares), ``state.fold`` (the solved state) and ``meta.json`` (design, tier, sequence); a
dropped target (its design did not validate) only ``meta.json``, saying why.

A design the package knows to fold flat only from Flat-Folder's results (:mod:`.known`:
this engine finds no layer order within a budget, 300 Japanese Spiny Lobster v2) is not
solved here either: its silhouette, which GS compares, needs no layer order, and its
picture shows the folded faces in the order of their ids (``meta.json``: ``layer_order``
false).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.design import Design, replay
from shredfold.store import content_key

if TYPE_CHECKING:
    from shredfold.origami import FoldedGeometry, FoldState

# 2: a design without a fold sequence is drawn centred in the view
TARGET_STAGE, TARGET_VERSION = "origami_target", 2


def target_state(design: Design) -> FoldState:
    """The folded target: the replayed sequence where there is one, else the pattern folded
    with its outline centred on the sheet's centre (GS ignores where a model lies; the
    picture, over a fixed frame, must hold all of it)."""
    from shredfold.origami import state_from_pattern

    steps = design.steps()
    if steps is not None:
        return replay(steps)[-1]
    return centred(state_from_pattern(design.pattern()))


def centred(state: FoldState) -> FoldState:
    """The same folded state moved so its outline's bounding box is centred on the sheet's."""
    import dataclasses

    return dataclasses.replace(state, geometry=centred_geometry(state.geometry))


def centred_geometry(geometry: FoldedGeometry) -> FoldedGeometry:
    import numpy as np

    from shredfold.origami import fold_geometry, folded_silhouette

    lo_x, lo_y, hi_x, hi_y = folded_silhouette(geometry).bounds
    sheet = geometry.pattern.vertices
    shift = (sheet.min(axis=0) + sheet.max(axis=0)) / 2 - np.array([lo_x + hi_x, lo_y + hi_y]) / 2
    root = geometry.transforms[0].copy()
    root[:2, 2] += shift
    return fold_geometry(geometry.pattern, root=0, root_transform=root)


def target_key(design: Design, size: int, validation: str | None = None) -> str:
    """A target's key; ``validation`` names the validation a user's design needs first (its
    key, not its outcome: the plan does not wait for it)."""
    params: dict[str, object] = {"size": size, "engine": ENGINE_VERSION}
    if validation is not None:
        params["validation"] = validation
    return content_key(TARGET_STAGE, TARGET_VERSION, params, [design.key])


def drop_target(design: Design, why: str, folder: str | Path) -> None:
    """A target object that says why there is no target (its design did not validate)."""
    meta = {"design": design.id, "design_key": design.key, "category": design.category, "tier": design.tier,
            "dropped": why, "engine_version": ENGINE_VERSION}  # fmt: skip
    (Path(folder) / "meta.json").write_text(json.dumps(meta, indent=1))


def solve_target(design: Design, size: int, folder: str | Path) -> None:
    """Solve a design's folded state once: target.png, silhouette.npy, state.fold, meta.json."""
    import numpy as np

    from shredfold.origami import write_fold
    from shredfold.origami_bench import known
    from shredfold.origami_bench.env import render_folded, silhouette

    out = Path(folder)
    fact = known.of(design)
    if fact is not None and not fact.layer_order and fact.problem is None:
        return _unsolved_target(design, size, out)
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


def _unsolved_target(design: Design, size: int, out: Path) -> None:
    """A target whose layer order this engine does not find within a budget (known to fold
    flat from Flat-Folder's results): the silhouette exactly, the picture with each cell's
    face of lowest id on top, no ``state.fold``."""
    import numpy as np

    from shredfold.metrics.shape import VIEW
    from shredfold.origami import draw_folded, fold_geometry, silhouette_mask
    from shredfold.origami_bench.env import png_bytes

    geometry = centred_geometry(fold_geometry(design.pattern()))
    (out / "target.png").write_bytes(png_bytes(draw_folded(geometry, np.zeros((0, 3), np.int64), size=size, bounds=VIEW)))
    np.save(out / "silhouette.npy", np.asarray(silhouette_mask(geometry, size=size, bounds=VIEW), bool))
    meta = {
        "design": design.id,
        "design_key": design.key,
        "category": design.category,
        "tier": design.tier,
        "flat_foldable": True,
        "layer_order": False,
        "sequence": None,
        "engine_version": ENGINE_VERSION,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
