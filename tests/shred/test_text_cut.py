"""Cuts in which every piece holds text: drawn again from the same generator until no
scrap is bare paper, the same pieces for the same key."""

from __future__ import annotations

import numpy as np

from shredfold.corpus.document import Document
from shredfold.shred.glyphs import page_glyphs
from shredfold.shred.text_cut import TRIES, bare_pieces, cut_holding_text
from shredfold.shred.voronoi import cut
from shredfold.spec import RenderSettings

# a listing of short, indented lines with blank stretches: its page (cut to the content's
# width) still has bare paper at the ends of lines and between the blocks
LISTING = Document(
    doc_id="listing",
    domain="code_python",
    text="".join("    " * (i % 3) + f"value_{i} = compute({i})\n" + ("\n\n\n" if i % 6 == 0 else "") for i in range(30)),
)
SETTINGS = RenderSettings(width=900, code_font_size=16)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_plain_cuts_of_a_listing_leave_bare_scraps() -> None:
    glyphs = page_glyphs(LISTING, SETTINGS)
    bare = [bare_pieces(cut(glyphs.width, glyphs.height, 16, _rng(s), 0.5), glyphs.boxes) for s in range(8)]
    assert sum(bare) >= 3  # the case the text cut is for


def test_the_text_cut_leaves_none_and_is_reproducible() -> None:
    glyphs = page_glyphs(LISTING, SETTINGS)
    for seed in range(8):
        pieces = cut_holding_text(glyphs.width, glyphs.height, 16, _rng(seed), 0.5, glyphs.boxes)
        assert len(pieces) == 16 and bare_pieces(pieces, glyphs.boxes) == 0
        again = cut_holding_text(glyphs.width, glyphs.height, 16, _rng(seed), 0.5, glyphs.boxes)
        assert [p.wkt for p in pieces] == [p.wkt for p in again]


def test_with_fewer_characters_than_pieces_one_plain_cut_is_taken() -> None:
    boxes = np.array([[10.0, 10.0, 20.0, 20.0]])
    assert [p.wkt for p in cut_holding_text(400, 400, 4, _rng(1), 0.5, boxes)] == [
        p.wkt for p in cut(400, 400, 4, _rng(1), 0.5)
    ]


def test_when_no_draw_is_clean_the_fewest_bare_pieces_win() -> None:
    # all text in one corner: 16 pieces cannot all reach it
    boxes = np.array([[5.0 + i, 5.0, 6.0 + i, 6.0] for i in range(20)])
    best = cut_holding_text(800, 800, 16, _rng(2), 0.5, boxes)
    rng = _rng(2)
    draws = [bare_pieces(cut(800, 800, 16, rng, 0.5), boxes) for _ in range(TRIES)]
    assert bare_pieces(best, boxes) == min(draws) > 0
