"""The table model: table (lit or shadowed) told from paper, by the photo's own statistics."""

from __future__ import annotations

import numpy as np

from shredfold.shred.solvers.jigsaw.tabletop import classify, split

TABLE = np.array([92.0, 74.0, 58.0])
PAPER = np.array([244.0, 241.0, 233.0])


def table_top(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A grainy table, a sheet on it casting a shadow to its right, ink on the sheet."""
    h, w = 240, 320
    img = np.broadcast_to(TABLE, (h, w, 3)).copy()
    img *= 1.0 + 0.03 * rng.standard_normal((h, w, 1))
    yy, xx = np.mgrid[:h, :w]
    sheet = (yy >= 60) & (yy < 180) & (xx >= 80) & (xx < 220)
    shadow = (yy >= 66) & (yy < 186) & (xx >= 220) & (xx < 230)
    img[shadow] *= 0.5
    img[sheet] = PAPER
    ink = sheet & (yy % 12 < 3) & (xx > 90) & (xx < 210)
    img[ink] = (24.0, 24.0, 28.0)
    img += 1.5 * rng.standard_normal(img.shape)
    rgb = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    return rgb, {"table": ~sheet & ~shadow, "shadow": shadow, "paper": sheet & ~ink, "ink": ink}


def test_table_and_its_shadows_are_table_and_the_paper_is_not() -> None:
    rgb, parts = table_top(np.random.default_rng(0))
    coloured, dark = classify(rgb)
    assert coloured[parts["table"]].mean() > 0.99
    assert coloured[parts["shadow"]].mean() > 0.99
    assert not coloured[parts["paper"]].any() and not dark[parts["paper"]].any()
    # Black ink is as dark as the shadow but neutral against a brown table: mostly told
    # apart by its hue (what is not, the segmenter's ink rules give back to the paper).
    assert (coloured | dark)[parts["ink"]].mean() < 0.3


def test_the_brightness_split_falls_between_two_modes_and_is_absent_for_one() -> None:
    rng = np.random.default_rng(1)
    table = rng.normal(0.0, 0.05, 20000)
    paper = rng.normal(1.0, 0.03, 8000)
    cut = split(np.concatenate([table, paper]))
    assert cut is not None and 0.2 < cut < 0.85
    assert split(rng.normal(0.0, 0.05, 20000)) is None  # a bare table: no paper mode
    bands = np.sin(rng.uniform(0, 2 * np.pi, 20000))  # wood grain: broad, not two modes
    assert split(bands + rng.normal(0.0, 0.2, 20000)) is None
