"""Scraps turned level by their text lines, and the quarter turns the photograph solver
tries where the levelling cannot tell lines from columns."""

from __future__ import annotations

import numpy as np
import pytest
from paper_photos import LATIN, PAPER, page

from shredfold.shred.solvers.jigsaw.geometry import apply, rigid
from shredfold.shred.solvers.jigsaw.level import (
    Levelled,
    level,
    line_pitch,
    quarter_turn,
    turn_from_level,
)


def scrap(rgb: np.ndarray, degrees: float) -> np.ndarray:
    """``rgb`` as an opaque RGBA scrap turned ``degrees`` on a transparent canvas."""
    import cv2

    h, w = rgb.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    side = int(np.hypot(h, w)) + 4
    m[:, 2] += (side - w) / 2, (side - h) / 2
    rgba = np.dstack([rgb, np.full((h, w), 255, np.uint8)])
    return cv2.warpAffine(rgba, m, (side, side), flags=cv2.INTER_LINEAR)


@pytest.fixture(scope="module")
def prose() -> Levelled:
    return level(scrap(page(LATIN).rgb[120:420, 40:520], 27.0), 0)


@pytest.mark.parametrize("quarters", [1, 2, 3])
def test_a_turned_reading_is_the_same_scrap_turned(prose: Levelled, quarters: int) -> None:
    turned = prose.turned(quarters)
    assert turned.quarter == quarters
    h, w = prose.shape
    assert turned.shape == ((w, h) if quarters % 2 else (h, w))
    # A pixel of the levelled frame lands where the turn says, holding the same ink.
    move = turn_from_level(prose, quarters)
    ys, xs = np.nonzero(prose.ink > 0.5)
    pts = np.column_stack([xs, ys])[:: max(1, len(xs) // 500)].astype(float)
    at = np.rint(apply(move, pts)).astype(int)
    assert np.array_equal(turned.ink[at[:, 1], at[:, 0]], prose.ink[pts[:, 1].astype(int),
                                                                    pts[:, 0].astype(int)])
    # Its pose is the levelled pose and the turn; its edges are turned with it.
    assert np.allclose(turned.pose, move @ prose.pose)
    for a, b in zip(prose.edges, turned.edges, strict=True):
        assert np.allclose(apply(move, np.array([a.p0, a.p1])), np.array([b.p0, b.p1]))
    # Four quarter turns are none.
    again = prose.turned(4)
    assert again.quarter == 0 and np.allclose(again.pose, prose.pose)


def test_turn_from_level_reads_from_a_turned_reading_too(prose: Levelled) -> None:
    # Measured from a reading already turned once, the map is still from the unturned one.
    once = prose.turned(1)
    assert np.allclose(turn_from_level(once, 3), turn_from_level(prose, 3))


def test_prose_lines_up_along_its_lines_only(prose: Levelled) -> None:
    assert prose.strength > 1.5
    assert not prose.across
    # Levelled: its lines run across the frame, one pitch (1.6 body sizes) apart.
    pitch = line_pitch([prose.ink])
    assert pitch is not None and abs(pitch - 1.6 * 22) <= 1.5


def test_columns_of_figures_leave_the_quarter_turn_open() -> None:
    # A scrap of a table: short figures in columns, rows no more peaky than columns.
    from PIL import Image, ImageDraw, ImageFont

    from shredfold.shred.fonts import DEJAVU_DIR

    font = ImageFont.truetype(str(DEJAVU_DIR / "DejaVuSerif.ttf"), 22)
    im = Image.new("RGB", (420, 300), PAPER)
    draw = ImageDraw.Draw(im)
    for r in range(5):
        for c in range(3):
            draw.text((30 + 140 * c, 30 + 52 * r), f"{60 + 7 * r + c}.{r}", font=font,
                      fill=(17, 17, 17))
    lv = level(scrap(np.asarray(im), -12.0), 3)
    assert lv.index == 3 and lv.across
    # Whichever way it was levelled, it lies square: its turn is the scrap's own (as
    # cv2 turns it) up to quarter turns.
    turned = np.degrees(np.arctan2(lv.pose[1, 0], lv.pose[0, 0]))
    assert abs((turned + 12.0 + 45.0) % 90.0 - 45.0) < 1.0, turned


def test_rigid_turns_match_quarter_turns() -> None:
    # A quarter turn is a rigid motion: no scale, a right angle.
    q = quarter_turn((30, 50))
    assert np.allclose(q[:2, :2] @ q[:2, :2].T, np.eye(2))
    assert np.isclose(np.degrees(np.arctan2(q[1, 0], q[0, 0])) % 360, 270.0)
    assert np.allclose(rigid(0.0)[:2, :2], np.eye(2))


def column_of_figures(figures: list[str], size: int, width: int, left: int, top: int,
                      step: int) -> Levelled:
    """A scrap of a table holding one column of ``figures`` (DejaVu Serif, ``size`` px,
    ``step`` px apart), turned 8 degrees and levelled: its column is peakier than any of
    its short rows, so the ink alone levels it on its side."""
    from PIL import Image, ImageDraw, ImageFont

    from shredfold.shred.fonts import DEJAVU_DIR

    font = ImageFont.truetype(str(DEJAVU_DIR / "DejaVuSerif.ttf"), size)
    im = Image.new("RGB", (width, 2 * top + step * len(figures)), PAPER)
    draw = ImageDraw.Draw(im)
    for r, text in enumerate(figures):
        draw.text((left, top + step * r), text, font=font, fill=(17, 17, 17))
    return level(scrap(np.asarray(im), 8.0), 0)


def read(levelled: Levelled) -> str:
    """What the recogniser reads on the scrap's drawing, twice its size."""
    from PIL import Image

    from shredfold.shred.ocr import reader
    from shredfold.shred.solvers.jigsaw.level import drawing

    return " ".join(ln.text for ln in reader.read_lines(Image.fromarray(drawing(levelled, 2.0))))


def test_a_column_of_figures_levelled_on_its_side_is_settled_by_reading_it() -> None:
    from shredfold.shred.ocr.orient import level_confidence
    from shredfold.shred.solvers.jigsaw.level import settled

    figures = ["78.2", "76.6", "76.7", "75.3", "73.4", "72.2"]
    lv = column_of_figures(figures, 22, 150, 40, 30, 52)
    assert not any(f in read(lv) for f in figures)  # on its side: read as nothing
    up = settled(lv, level_confidence, 2.0)
    assert up.quarter == 0 and not up.across
    # Level now, either way up (the half turn is settled later, on the assembled page).
    got = read(up) + " | " + read(up.turned(2))
    assert sum(f in got for f in figures) >= 4, got
    # Turned a quarter from the levelling: its pose is the levelled one turned.
    assert np.allclose(up.pose, turn_from_level(lv, 1) @ lv.pose)


def test_a_column_of_short_figures_the_patch_cannot_read_is_settled_by_reading_it_whole() -> None:
    # Two-digit figures a row apart: levelled on its side by its one column, and turned a
    # quarter each figure is a box about as tall as it is wide, which the quick look at
    # the inkiest patch does not read. Read whole, each figure is a line of its own.
    from shredfold.shred.ocr.orient import level_confidence, whole_confidence
    from shredfold.shred.solvers.jigsaw.level import settled

    figures = ["72", "75", "77", "79", "81", "82", "84"]
    lv = column_of_figures(figures, 26, 140, 45, 20, 56)
    patch_only = settled(lv, level_confidence, 2.0)
    assert patch_only.up is None
    assert sum(f in read(patch_only) for f in figures) <= 1  # still on its side
    whole = settled(lv, level_confidence, 2.0, whole_confidence)
    assert whole.quarter == 0 and not whole.across
    got = read(whole) + " | " + read(whole.turned(2))
    assert sum(f in got for f in figures) >= 5, got


@pytest.mark.parametrize(("along", "side", "turned", "up"), [
    ((0.5, 0.2), (17.0, 11.0), True, None),  # a quarter clearly, which way up not
    ((0.5, 0.2), (2.0, 16.0), True, 2),
    ((30.0, 3.0), (1.0, 0.0), False, 0),
    ((3.0, 1.0), (0.0, 0.0), False, None),  # too little read: left as it was
    ((9.0, 2.0), (6.0, 1.0), False, None),  # no turn clearly better: left as it was
])
def test_a_whole_reading_settles_a_scrap_only_where_one_turn_clearly_wins(
        prose: Levelled, along: tuple[float, float], side: tuple[float, float], turned: bool,
        up: int | None) -> None:
    from shredfold.shred.solvers.jigsaw.level import read_whole

    open_ = Levelled(prose.index, 0, prose.pose, prose.paper, prose.ink, prose.edges,
                     prose.strength, True)
    shapes: list[tuple[int, ...]] = []

    def whole(rgb: np.ndarray) -> tuple[float, float]:
        shapes.append(rgb.shape[:2])
        return along if len(shapes) == 1 else side

    got = read_whole(open_, whole)
    assert shapes[1] == shapes[0][::-1]  # the second reading is of the drawing turned a quarter
    settled_ = turned or along[0] == 30.0
    assert got.up == up
    assert got.across is not settled_
    assert np.allclose(got.pose, (turn_from_level(open_, 1) if turned else np.eye(3)) @ open_.pose)


@pytest.mark.parametrize(("halves", "up"), [((12.0, 1.0), 0), ((1.0, 12.0), 2), ((6.0, 4.0), None),
                                             ((3.0, 0.0), None)])
def test_a_clear_reading_says_which_way_up_the_scrap_is(prose: Levelled, halves: tuple[float, float],
                                                        up: int | None) -> None:
    from shredfold.shred.solvers.jigsaw.level import settled

    got = settled(prose, lambda rgb: halves)
    assert got.up == up
    # Turned, the scrap needs that many fewer quarter turns to stand upright.
    if up is not None:
        assert got.turned(2).up == (up + 2) % 4 and got.turned(1).up == (up - 1) % 4



def test_a_few_lines_of_cjk_are_levelled_by_their_rows_and_columns_together() -> None:
    # Four lines of CJK, turned 39.1 degrees: their ink also lines up along a slant of the
    # character grid, 5.4 degrees off the lines, more peakily than along the lines.
    from paper_photos import CJK

    from shredfold.shred.solvers.jigsaw.ink import line_angle

    rgba = scrap(page(CJK, cjk=True).rgb[173:263, 519:695], 39.1)
    paper = rgba[..., 3] >= 128

    def off(degrees: float) -> float:
        return abs((degrees + 39.1 + 45.0) % 90.0 - 45.0)

    assert off(line_angle(rgba, paper).degrees) > 4.0
    assert off(line_angle(rgba, paper, square=True).degrees) < 1.0
    lv = level(rgba, 0)
    assert off(-float(np.degrees(np.arctan2(lv.pose[1, 0], lv.pose[0, 0])))) < 1.0
