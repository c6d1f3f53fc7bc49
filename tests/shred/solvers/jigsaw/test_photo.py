"""Photographs made the ShredBench authors' way (:mod:`paper_photos`): curled straight-cut
scraps on grey, segmented, put back together from their text lines and straight edges,
read the right way up and answered as Markdown."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from paper_photos import CJK, LATIN, Page, Photo, page, photograph
from rapidfuzz.distance import Levenshtein

from shredfold.shred.solvers.jigsaw.assemble import PieceShape
from shredfold.shred.solvers.jigsaw.contour import load_scrap
from shredfold.shred.solvers.jigsaw.geometry import apply
from shredfold.shred.solvers.jigsaw.photo import STRAIGHT_SHARE, solve_photo, straight_share
from shredfold.shred.solvers.jigsaw.read import read
from shredfold.shred.solvers.jigsaw.segment import Segment, segment
from shredfold.shred.solvers.jigsaw.solve import Cluster, Solution


@pytest.fixture(scope="module")
def latin() -> Page:
    return page(LATIN)


def matched(p: Photo, segs: list[Segment]) -> list[tuple[int, float]]:
    """Per segment: the scrap it is, and their IoU."""
    out = []
    for s in segs:
        x0, y0, x1, y1 = s.box
        ious = []
        for m in p.masks:
            inter = int((m[y0:y1, x0:x1] & s.mask).sum())
            ious.append(inter / (int(m.sum()) + s.area - inter))
        out.append((int(np.argmax(ious)), max(ious)))
    return out


def test_curled_scraps_on_grey_are_cut_out_bulges_and_all(latin: Page) -> None:
    p = photograph(latin, 6, seed=1)
    segs = segment(p.rgb)
    found = matched(p, segs)
    assert sorted(k for k, _ in found) == list(range(6))
    assert min(iou for _, iou in found) >= 0.95, found


def touching_scraps(table: int, ink: int, *extra: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Two scraps with grey "text" on a grey table, the left one's curled corner reaching
    over to the right one (a narrow neck of paper), and ``extra`` scraps (polygons): the
    photograph and each scrap's mask."""
    rgb = np.full((400, 700, 3), table, np.uint8)
    left = np.array([[40, 60], [330, 90], [300, 330], [60, 300]], np.int32)
    right = np.array([[360, 40], [660, 70], [640, 340], [380, 310]], np.int32)
    truth = []
    for poly in (left, right, *extra):
        m = np.zeros(rgb.shape[:2], np.uint8)
        cv2.fillPoly(m, [poly], 1)
        truth.append(m.astype(bool))
    cv2.fillPoly(truth[0].view(np.uint8), [np.array([[320, 150], [368, 160], [368, 176], [318, 172]],
                                                     np.int32)], 1)
    for m in truth:
        rgb[m] = (245, 243, 239)
        ys, xs = np.nonzero(m)
        for y in range(ys.min() + 30, ys.max() - 20, 24):  # lines of grey "text"
            row = m[y] & (np.arange(rgb.shape[1]) % 9 < 5)
            row[: xs.min() + 25] = False
            row[xs.max() - 25 :] = False
            rgb[y : y + 6][:, row] = ink
    noise = np.random.default_rng(0).normal(0, 2.0, rgb.shape)  # a photograph's grain
    return np.clip(rgb + noise, 0, 255).astype(np.uint8), truth


def assert_found(segs: list[Segment], truth: list[np.ndarray]) -> None:
    assert len(segs) == len(truth)
    for s, m in zip(sorted(segs, key=lambda s: s.box[0]), truth, strict=True):
        x0, y0, x1, y1 = s.box
        inter = int((m[y0:y1, x0:x1] & s.mask).sum())
        assert inter / (int(m.sum()) + s.area - inter) >= 0.95


@pytest.mark.parametrize(("table", "ink"), [
    (150, 95),  # dark type on a mid-grey table
    # Small grey type (code on its tinted block, photographed and reduced) on a darker
    # grey: lighter than the photo-wide ink level, dark only against its own paper.
    (90, 180),
])
def test_two_scraps_whose_curled_rims_touch_are_told_apart(table: int, ink: int) -> None:
    rgb, truth = touching_scraps(table, ink)
    assert_found(segment(rgb), truth)


def test_a_sliver_beside_two_touching_scraps_is_a_scrap() -> None:
    # 2,100 px: 3 % of the larger scrap, but under 2 % of the region the two touching
    # scraps make before they are told apart.
    sliver = np.array([[450, 355], [550, 355], [450, 395]], np.int32)
    rgb, truth = touching_scraps(150, 95, sliver)
    assert_found(segment(rgb), truth)


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_a_straight_cut_page_is_put_back_together(latin: Page, seed: int) -> None:
    p = photograph(latin, 6, seed=seed)
    segs = segment(p.rgb)
    scraps = [s.rgba for s in segs]
    assert straight_share(scraps) >= STRAIGHT_SHARE
    sol = solve_photo(scraps)
    assert [len(c.members) for c in sol.clusters] == [6]
    (cluster,) = sol.clusters
    # Page px -> cluster frame, through each scrap: one and the same map for all (a scrap
    # a few px off would read its letters across the seam).
    maps = []
    for k, (which, _) in enumerate(matched(p, segs)):
        x0, y0 = segs[k].box[:2]
        maps.append(cluster.poses[k] @ np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]])
                    @ p.poses[which])
    probe = np.array([[40.0, 40.0], [720.0, 60.0], [380.0, 500.0]])
    worst = max(float(np.abs(apply(m, probe) - apply(maps[0], probe)).max()) for m in maps)
    assert worst <= 5.0, worst


def turned_page(pg: Page) -> Solution:
    """The page as one assembled cluster lying upside down."""
    rgba = np.dstack([pg.rgb[::-1, ::-1], np.full(pg.rgb.shape[:2], 255, np.uint8)])
    scrap = load_scrap(np.ascontiguousarray(rgba))
    shape = PieceShape(scrap.outline, [])
    return Solution([scrap], [shape], None, [Cluster([0], {0: np.eye(3)})])  # type: ignore[arg-type]


def plain(text: str) -> str:
    return "".join(text.replace("#", "").replace("*", "").split())


@pytest.mark.parametrize("blocks", [LATIN, CJK], ids=["latin-serif", "cjk"])
def test_an_assembled_page_lying_upside_down_is_read_the_right_way_up(blocks: list) -> None:
    from shredfold.shred.ocr import reader as ocr
    from shredfold.shred.ocr.orient import quarter_turn

    pg = page(blocks, cjk=blocks is CJK)
    text = read(turned_page(pg), None, ocr.read_lines, quarter_turn).text
    got, want = plain(text), plain(pg.source)
    assert Levenshtein.normalized_distance(got, want) < 0.1, text


@pytest.mark.slow
def test_jigsaw_ocr_answers_the_papers_protocol_with_the_pages_markdown(latin: Page) -> None:
    from shredfold.metrics.text import ned_raw
    from shredfold.models.builtin.jigsaw import JigsawOcr
    from shredfold.shred.prompts import paper_request
    from shredfold.spec import ModelConfig

    p = photograph(latin, 6, seed=0)
    model = JigsawOcr(ModelConfig(id="jigsaw-ocr", adapter="jigsaw-ocr",
                                  images={"mode": "composite"}))  # type: ignore[arg-type]
    answer = model.complete(paper_request(p.data, item=None)).text
    assert answer.startswith("# Harbour Ferry Returns\n\n**Date:** 2025-12-21\n\n"), answer
    assert ned_raw(answer, latin.source) < 0.05, answer


@pytest.mark.slow
def test_ocr_islands_reads_each_straight_cut_scrap_upright_as_markdown(latin: Page) -> None:
    from shredfold.models.builtin.ocr_islands import OcrIslands
    from shredfold.shred.prompts import paper_request
    from shredfold.spec import ModelConfig

    p = photograph(latin, 6, seed=0)
    model = OcrIslands(ModelConfig(id="ocr-islands", adapter="ocr-islands",
                                   images={"mode": "composite"}))  # type: ignore[arg-type]
    answer = model.complete(paper_request(p.data, item=None)).text
    words = [w.strip(".,:*#") for w in answer.split()]
    longer = [w for w in words if len(w) >= 5]
    # Scraps read upside down would give next to no words of the page.
    assert len(longer) >= 15 and sum(w in latin.source for w in longer) >= 0.8 * len(longer), answer
    assert "\n\n" in answer  # one Markdown block (or more) per scrap


def test_a_page_read_as_nothing_on_its_side_is_read_at_another_quarter_turn() -> None:
    from shredfold.shred.ocr import reader as ocr

    pg = page(CJK, cjk=True)
    side = np.ascontiguousarray(np.rot90(pg.rgb, 1))
    rgba = np.dstack([side, np.full(side.shape[:2], 255, np.uint8)])
    scrap = load_scrap(rgba)
    sol = Solution([scrap], [PieceShape(scrap.outline, [])], None,  # type: ignore[arg-type]
                   [Cluster([0], {0: np.eye(3)})])
    # A turner that takes the page on its side for upright, as CJK text's columns may.
    text = read(sol, None, ocr.read_lines, lambda rgb: 0).text
    assert Levenshtein.normalized_distance(plain(text), plain(pg.source)) < 0.1, text


def test_scraps_read_the_right_way_up_are_joined_only_the_right_way_up(latin: Page) -> None:
    from dataclasses import replace

    from shredfold.shred.solvers.jigsaw.level import level, line_pitch
    from shredfold.shred.solvers.jigsaw.photo import all_seams

    p = photograph(latin, 6, seed=0)
    flat = [level(s.rgba, k) for k, s in enumerate(segment(p.rgb))]
    pitch = line_pitch([lv.ink for lv in flat]) or 30.0
    free = all_seams(flat, pitch)
    assert {s.turn_j for s in free} >= {0, 2}
    # Say scraps 0 and 1 were read upright and upside down as levelled.
    told = [replace(lv, up=0) if k == 0 else replace(lv, up=2) if k == 1 else lv
            for k, lv in enumerate(flat)]
    seams = all_seams(told, pitch)
    between = [s for s in seams if {s.i, s.j} == {0, 1}]
    assert between and all(s.turn_j == 2 for s in between)
    # Pairs with a scrap not read so are untouched.
    assert len([s for s in seams if 0 not in (s.i, s.j) or 1 not in (s.i, s.j)]) == len(
        [s for s in free if 0 not in (s.i, s.j) or 1 not in (s.i, s.j)])


def test_a_cluster_stands_the_way_its_scraps_read() -> None:
    from dataclasses import replace

    from shredfold.shred.solvers.jigsaw.geometry import rigid
    from shredfold.shred.solvers.jigsaw.photo import upright_turn

    lv = replace(level_stub(), up=0)
    half = rigid(np.pi)
    # Two scraps upright as levelled, laid upside down in the cluster; one unread.
    assert upright_turn([lv, lv, replace(lv, up=None)], [half, half, np.eye(3)]) == 2
    # One upside down as levelled, laid turned: upright in the cluster.
    assert upright_turn([replace(lv, up=2)], [half]) == 0
    # A quarter turn (np.rot90 once) into the cluster: three more put it back.
    assert upright_turn([lv], [rigid(-np.pi / 2)]) == 3
    # Votes split evenly, or none: the reader tells.
    assert upright_turn([lv, replace(lv, up=2)], [np.eye(3), np.eye(3)]) is None
    assert upright_turn([replace(lv, up=None)], [np.eye(3)]) is None


def level_stub():
    from shredfold.shred.solvers.jigsaw.level import Levelled

    z = np.zeros((4, 4), np.float32)
    return Levelled(0, 0, np.eye(3), z, z, [], 1.0, False)
