"""The synthesizer registry and the shared table-top compositor."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import ndimage

from shredfold.shred import synth as synth_mod
from shredfold.shred.synth import Compositing, Scrap, compose, get_synthesizer, register
from shredfold.spec import SynthesisSettings


def _blob_scrap(rng: np.random.Generator, size: int) -> Scrap:
    """A random convex-ish blob of paper with a grey shadow ring, like a real scrap."""
    pad = 10
    h = w = size + 2 * pad
    yy, xx = np.mgrid[0:h, 0:w]
    r = size / 2 * rng.uniform(0.6, 1.0)
    paper = (yy - h / 2) ** 2 / rng.uniform(0.5, 1.5) + (xx - w / 2) ** 2 <= r**2
    shadow = ndimage.binary_dilation(paper, iterations=6) & ~paper
    img = np.zeros((h, w, 4), np.uint8)
    img[paper] = (240, 238, 230, 255)
    img[shadow, 3] = 100
    return Scrap(image=img, paper=paper, origin=(pad, pad))


@pytest.fixture(scope="module")
def scraps() -> list[Scrap]:
    rng = np.random.default_rng(0)
    return [_blob_scrap(rng, int(s)) for s in rng.integers(40, 200, 20)]


def _paper_count(table, scraps) -> np.ndarray:
    h, w = table.image.shape[:2]
    count = np.zeros((h, w), np.int32)
    for (x, y), s in zip(table.placements, scraps, strict=True):
        sh, sw = s.paper.shape
        assert x >= 0 and y >= 0 and x + sw <= w and y + sh <= h  # wholly on the table
        count[y : y + sh, x : x + sw] += s.paper
    return count


@pytest.mark.parametrize("gap", [0, 24])
def test_paper_never_overlaps_paper(scraps, gap: int) -> None:
    settings = SynthesisSettings(composite_gap=gap)
    table = compose(scraps, np.random.default_rng(1), settings)
    count = _paper_count(table, scraps)
    assert count.max() == 1
    assert count.sum() == sum(int(s.paper.sum()) for s in scraps)
    if gap:
        # Paper of different scraps keeps at least ``gap`` px apart.
        h, w = count.shape
        ids = np.zeros((h, w), np.int32)
        for k, ((x, y), s) in enumerate(zip(table.placements, scraps, strict=True)):
            sh, sw = s.paper.shape
            ids[y : y + sh, x : x + sw][s.paper] = k + 1
        for k in range(1, len(scraps) + 1):
            dist = ndimage.distance_transform_edt(ids != k)
            others = (ids > 0) & (ids != k)
            assert dist[others].min() >= gap


def test_composite_shows_table_paper_and_shadow(scraps) -> None:
    settings = SynthesisSettings()
    table = compose(scraps, np.random.default_rng(2), settings)
    img = table.image
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    count = _paper_count(table, scraps)
    paper_px = img[count == 1]
    table_px = img[count == 0]
    assert np.abs(paper_px.mean(axis=0) - (240, 238, 230)).max() < 2
    assert np.abs(np.median(table_px, axis=0) - settings.table).max() < 12
    # The table is cropped to the heap: not mostly empty.
    assert count.mean() > 0.25


def test_placement_is_deterministic(scraps) -> None:
    a = compose(scraps, np.random.default_rng(3), SynthesisSettings())
    b = compose(scraps, np.random.default_rng(3), SynthesisSettings())
    assert a.placements == b.placements and np.array_equal(a.image, b.image)


def test_unknown_mode_is_a_clear_error() -> None:
    class Fake:
        mode = "nope"

    with pytest.raises(ValueError, match="unknown synthesizer mode 'nope'"):
        get_synthesizer(Fake())  # type: ignore[arg-type]


def test_a_new_mode_plugs_in_by_registering(monkeypatch) -> None:
    monkeypatch.setattr(synth_mod, "_REGISTRY", dict(synth_mod._REGISTRY))

    @register("test-mode")
    class Echo(Compositing):
        mode = "test-mode"
        version = 1

        def __init__(self, settings: SynthesisSettings) -> None:
            self.settings = settings

        def params(self) -> dict:
            return {}

        def scraps(self, pieces, rng):
            return []

    settings = SynthesisSettings().model_copy(update={"mode": "test-mode"})
    synth = get_synthesizer(settings)
    assert isinstance(synth, Echo) and isinstance(synth, synth_mod.Synthesizer)
    with pytest.raises(ValueError, match="already registered"):
        register("test-mode")(type("Other", (), {}))


def test_flat_mode_never_imports_bpy() -> None:
    code = (
        "import sys\n"
        "from shredfold.spec import SynthesisSettings\n"
        "from shredfold.shred.sample_key import sample_key\n"
        "from shredfold.shred.synth import get_synthesizer\n"
        "get_synthesizer(SynthesisSettings())\n"
        "assert 'bpy' not in sys.modules and 'shredfold.shred.blender' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
