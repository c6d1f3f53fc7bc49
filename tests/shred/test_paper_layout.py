"""The authors' packing, re-done in numpy: their crop, the turned packing masks, and the
nearest-to-centre search (hand-checked cases)."""

from __future__ import annotations

import math

import numpy as np

from shredfold.shred.modes import PAPER_SCENE
from shredfold.shred.paper_layout import _spot, pack, packing_mask, their_crop


def test_their_crop_is_the_mask_extent_plus_two_before_and_one_after():
    page = np.zeros((100, 200, 4), np.uint8)
    page[..., 0] = np.arange(200)[None, :]  # x in red, to see which page pixels came along
    box = page[20:60, 50:120].copy()
    box[..., 3] = 0
    box[10:30, 5:40, 3] = 255  # the mask: page rows 30..49, columns 55..89
    crop = their_crop(box, (50, 20), (200, 100), pad=2)
    # Their slice [min - 2, max + 2): two rows/columns before the mask, one after.
    assert (crop.x0, crop.y0) == (53, 28)
    assert crop.size == (89 + 2 - 53, 49 + 2 - 28)
    assert crop.mask[2:-1, 2:-1].min() == 255 and crop.mask[:2].max() == 0 and crop.mask[-1].max() == 0
    assert list(crop.rgb[0, :3, 0]) == [53, 54, 55]  # the page's own pixels, not masked


def test_their_crop_stops_at_the_page_and_repeats_the_box_edge():
    box = np.zeros((30, 40, 4), np.uint8)
    box[..., 1] = 7
    box[:, :, 3] = 255  # the piece fills its box, which touches the page's top-left corner
    crop = their_crop(box, (0, 0), (40, 30), pad=2)
    assert (crop.x0, crop.y0) == (0, 0) and crop.size == (40, 30)
    assert crop.mask.min() == 255  # at the page's border the mask reaches the crop's edge
    inner = np.zeros((30, 40, 4), np.uint8)
    inner[5:25, 5:35, 3] = 255
    inner[..., 1] = 9
    grown = their_crop(inner[3:27, 3:37], (3, 3), (40, 30), pad=4)
    assert (grown.x0, grown.y0) == (1, 1) and grown.mask[:4].max() == 0
    assert grown.rgb[0, 0, 1] == 9  # beyond the piece's box: its edge pixels repeated


def test_packing_mask_turns_about_the_centre_and_keeps_the_area():
    mask = np.zeros((200, 400), np.uint8)
    mask[:, :200] = 255  # left half
    flat, size = packing_mask(mask, 0.0, 0.1, 0)
    assert size == (400, 200) and flat.shape == (20, 40)
    assert flat[:, :20].all() and not flat[:, 20:].any()
    turned, size = packing_mask(mask, 90.0, 0.1, 0)
    assert size == (200, 400) and turned.shape == (40, 20)
    # Counter-clockwise on screen: the left half goes to the bottom.
    assert turned[20:].all() and not turned[:20].any()
    padded, _ = packing_mask(mask, 0.0, 0.1, 30)
    # Grown 3 cells (30 px), and, as their np.roll growth wraps, the left column's growth
    # reappears on the right edge.
    assert padded[:, :23].all() and padded[:, 37:].all() and not padded[:, 23:37].any()
    turned45, size = packing_mask(np.full((100, 100), 255, np.uint8), 45.0, 0.1, 0)
    assert size[0] == size[1] in (142, 143) and turned45.shape == (14, 14)  # Pillow's expand
    assert turned45[7, 7] and not turned45[0, 0]  # a diamond: middle full, corners empty


def test_spot_takes_the_nearest_free_position_on_the_step_grid():
    canvas = np.zeros((80, 80), bool)
    canvas[28:52, 30:50] = True  # the middle is taken: every free spot is >= 10 cells out
    shape = np.ones((4, 4), bool)
    x, y = _spot(canvas, shape, (0, 80, 0, 80), 4)
    assert not canvas[y : y + 4, x : x + 4].any()
    free = [(a, b) for b in range(0, 77, 4) for a in range(0, 77, 4)
            if not canvas[b : b + 4, a : a + 4].any()]
    d2 = {(a, b): (a + 2 - 40) ** 2 + (b + 2 - 40) ** 2 for a, b in free}
    best = min(d2.values())
    assert best >= 100 and d2[(x, y)] == best
    # Ties go to the first row-major position (their loop keeps the first strict minimum).
    assert (x, y) == min((p for p in free if d2[p] == best), key=lambda p: (p[1], p[0]))
    # By hand: just above the taken block, centred (d² = 2² + 14² = 200); the spot just left
    # of it, (24, 36), is as near but comes later row by row.
    assert (x, y) == (36, 24)


def test_spot_stops_at_the_first_position_closer_than_ten_cells():
    canvas = np.zeros((40, 40), bool)
    shape = np.ones((4, 4), bool)
    # Centre 20, piece centres at top-left + 2. Row by row, the first spot with d² < 100 is
    # (12, 12) (d² = 6² + 6² = 72; row 8 has dy² = 100): it wins, though (16, 16) (d² = 8)
    # is nearer, because their loop breaks there.
    assert _spot(canvas, shape, (0, 40, 0, 40), 4) == (12, 12)


def test_pack_places_every_piece_apart_largest_nearest_the_middle():
    rng = np.random.default_rng(0)
    masks = []
    for w, h in ((400, 300), (120, 90), (260, 200), (80, 300), (150, 150)):
        m = np.zeros((h, w), np.uint8)
        m[2:-1, 2:-1] = 255
        masks.append(m)
    angles = [float(a) for a in rng.uniform(-180, 180, len(masks))]
    placed = pack(masks, angles, np.random.default_rng(1))
    assert [p.angle for p in placed] == angles
    low, high = PAPER_SCENE["height"]
    assert all(low <= p.z <= high for p in placed)
    ppm = PAPER_SCENE["pixels_per_meter"]
    # No two pieces' turned rectangles may come closer than the packing padding allows to overlap.
    from shapely import affinity
    from shapely.geometry import box

    rects = []
    for m, p in zip(masks, placed, strict=True):
        h, w = m.shape
        r = box(-w / 2, -h / 2, w / 2, h / 2)
        r = affinity.rotate(r, p.angle, origin=(0, 0))
        rects.append(affinity.translate(r, p.x * ppm, p.y * ppm))
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            assert rects[i].intersection(rects[j]).area < 0.02 * min(rects[i].area, rects[j].area)
    # The largest went in first, at the middle of their canvas (side: their estimate from
    # the grown masks' cells): their search takes the first spot, row by row, whose centre
    # is closer than 10 cells to the middle (a cell more for the turned size's rounding).
    down = PAPER_SCENE["packing_downsample"]
    shapes = [packing_mask(m, a, down, PAPER_SCENE["packing_padding"])[0] for m, a in zip(masks, angles, strict=True)]
    estimated = int(math.sqrt(sum(int(s.sum()) for s in shapes) / PAPER_SCENE["packing_area_share"]))
    side = max(int(estimated * 1.5), max(max(s.shape) for s in shapes) * 2)
    largest = int(np.argmax([s.sum() for s in shapes]))
    cell = 1 / down / ppm
    off = math.hypot(placed[largest].x - side / 2 * cell, placed[largest].y + side / 2 * cell)
    assert off < 11 * cell
    again = pack(masks, angles, np.random.default_rng(1))
    assert again == placed
