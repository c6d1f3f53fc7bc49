"""Full-step targets of designs without a fold sequence (Flat-Folder's): the solved folded
state, drawn whole inside the fixed view."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shredfold.metrics.shape import VIEW
from shredfold.origami import folded_silhouette, state_from_pattern
from shredfold.origami_bench.designs import design_from_file
from shredfold.origami_bench.env import silhouette
from shredfold.origami_bench.targets import solve_target, target_state

SIZE = 256
# 035 and 054 fold to models that, left where their first face lies, reach past the view
DESIGNS = ("035_tachioripa_kamehameha.fold", "054_tanakaoripa_Hexagon.fold", "067_traditionaloripa_damashi_bune.fold")


@pytest.mark.parametrize("name", DESIGNS)
def test_a_flat_folder_target_is_its_whole_folded_state(shared_dir: Path, tmp_path: Path, name: str) -> None:
    path = shared_dir / "flat-folder" / "instagram" / name
    design = design_from_file(path, "flat_folder")
    assert design.sequence is None
    state = target_state(design)
    assert state.flat_foldable
    outline = folded_silhouette(state.geometry)
    lo_x, lo_y, hi_x, hi_y = outline.bounds
    assert VIEW[0] < lo_x and VIEW[1] < lo_y and hi_x < VIEW[2] and hi_y < VIEW[3]
    # the same model as the pattern folds, only moved: same outline area, same layers
    assert outline.area == pytest.approx(folded_silhouette(state_from_pattern(design.pattern()).geometry).area)
    mask = silhouette(state, SIZE)
    # nothing cut off: the drawn outline keeps clear of the picture's edge, and is as tall and
    # as wide as the model (to a pixel or two)
    assert not (mask[0].any() or mask[-1].any() or mask[:, 0].any() or mask[:, -1].any())
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    per_pixel = (VIEW[2] - VIEW[0]) / SIZE
    assert (rows[-1] - rows[0] + 1) * per_pixel == pytest.approx(hi_y - lo_y, abs=3 * per_pixel)
    assert (cols[-1] - cols[0] + 1) * per_pixel == pytest.approx(hi_x - lo_x, abs=3 * per_pixel)

    solve_target(design, SIZE, tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["flat_foldable"] and meta["sequence"] is None and meta["design_key"] == design.key
    assert np.array_equal(np.load(tmp_path / "silhouette.npy"), mask)
    assert (tmp_path / "target.png").read_bytes().startswith(b"\x89PNG")


def test_a_design_known_flat_without_a_layer_order_keeps_its_exact_silhouette(
    shared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As for 300 Japanese Spiny Lobster v2 (known flat from Flat-Folder's results, beyond this
    # engine's budget): no layer solve; the silhouette GS compares is the solved target's.
    from shredfold.origami_bench import known

    path = shared_dir / "flat-folder" / "instagram" / DESIGNS[0]
    design = design_from_file(path, "flat_folder")
    fact = known.of(design)
    assert fact is not None and fact.layer_order
    for name in ("solved", "unsolved"):
        (tmp_path / name).mkdir()
    solve_target(design, SIZE, tmp_path / "solved")
    beyond = fact.model_copy(update={"layer_order": False, "decided_by": "flat-folder"})
    monkeypatch.setattr(known, "of", lambda d: beyond)
    monkeypatch.setattr("shredfold.origami_bench.targets.target_state", lambda d: pytest.fail("the layer order was solved"))
    solve_target(design, SIZE, tmp_path / "unsolved")
    meta = json.loads((tmp_path / "unsolved" / "meta.json").read_text())
    assert meta["layer_order"] is False and meta["flat_foldable"] and not (tmp_path / "unsolved" / "state.fold").exists()
    assert np.array_equal(np.load(tmp_path / "unsolved" / "silhouette.npy"), np.load(tmp_path / "solved" / "silhouette.npy"))
    assert (tmp_path / "unsolved" / "target.png").read_bytes().startswith(b"\x89PNG")
