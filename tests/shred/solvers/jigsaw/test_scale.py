"""Reading the size of the text off scraps, and enlarging scraps cut from a reduced photo."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image
from table_photos import photo

from shredfold.shred.sample import load_public
from shredfold.shred.solvers.jigsaw.scale import TARGET_PITCH, enlarge, enlargement, line_pitch
from shredfold.shred.solvers.jigsaw.segment import scrap_images


def lined_scrap(pitch: float, degrees: float = 0.0, size: int = 400, seed: int = 0,
                blank: float = 0.0) -> np.ndarray:
    """An RGBA scrap of paper with rows of word-like ink blobs ``pitch`` px apart (each
    row left blank with probability ``blank``), turned by ``degrees``, on a transparent
    surround."""
    rng = np.random.default_rng(seed)
    rgb = np.full((size, size, 3), 240, np.uint8)
    height = max(2, int(0.6 * pitch))
    y = 20.0
    while y + height < size - 20:
        x = 20 + int(rng.integers(0, 30))
        if rng.random() < blank:
            x = size
        while x < size - 60:
            w = int(rng.integers(15, 50))
            cv2.rectangle(rgb, (x, int(y)), (x + w, int(y) + height), (30, 30, 30), -1)
            x += w + int(rng.integers(8, 20))
        y += pitch
    alpha = np.zeros((size, size), np.uint8)
    cv2.circle(alpha, (size // 2, size // 2), int(0.48 * size), 255, -1)
    rgba = np.dstack([rgb, alpha])
    turn = cv2.getRotationMatrix2D((size / 2, size / 2), degrees, 1.0)
    rgba = cv2.warpAffine(rgba, turn, (size, size), flags=cv2.INTER_LINEAR)
    rgba[rgba[..., 3] == 0] = 0
    return rgba


@pytest.mark.parametrize("pitch", [12.0, 17.5, 35.0, 44.0])
@pytest.mark.parametrize("degrees", [0.0, 33.0, 90.0])
def test_the_line_pitch_is_read_off_the_ink(pitch: float, degrees: float) -> None:
    scraps = [lined_scrap(pitch, degrees, seed=k) for k in range(3)]
    assert line_pitch(scraps) == pytest.approx(pitch, rel=0.04)


def test_blank_lines_and_short_lines_do_not_double_the_pitch() -> None:
    # Code and paragraphs: many rows blank, the rest of any length.
    scraps = [lined_scrap(17.5, blank=0.4, seed=k) for k in range(6)]
    assert line_pitch(scraps) == pytest.approx(17.5, rel=0.04)


def test_blank_scraps_have_no_pitch_and_are_left_alone() -> None:
    blank = lined_scrap(1000.0)  # no line fits on it
    assert line_pitch([blank]) is None
    assert enlargement([blank]) == 1.0


def test_small_text_is_enlarged_to_the_target_pitch_and_large_text_never_reduced() -> None:
    assert enlargement([lined_scrap(17.5)]) == pytest.approx(TARGET_PITCH / 17.5, rel=0.04)
    assert enlargement([lined_scrap(44.0)]) == 1.0


def test_an_enlarged_scrap_keeps_its_colours_and_its_clear_surround() -> None:
    scrap = lined_scrap(20.0)
    big = enlarge(scrap, 2.0)
    assert big.shape == (800, 800, 4)
    assert (big[big[..., 3] == 0] == 0).all()
    # Paper well inside stays paper-coloured: the black of the surround does not bleed in.
    opaque = big[..., 3] == 255
    assert np.percentile(big[..., :3][opaque].mean(axis=1), 90) >= 235
    assert line_pitch([big]) == pytest.approx(40.0, rel=0.04)
    assert enlarge(scrap, 1.0) is scrap


def test_scraps_of_a_photo_come_back_at_least_at_the_target_size(news6: Path) -> None:
    pieces = [np.asarray(Image.open(io.BytesIO(b)).convert("RGBA"))
              for b in load_public(news6).pieces]
    full = line_pitch(pieces)
    assert full is not None
    # At the stored size: as large as the pieces (enlarged only if they are small too).
    same = scrap_images([photo(news6, jpeg=95).data])
    assert line_pitch(same) == pytest.approx(max(full, TARGET_PITCH), rel=0.04)
    # Reduced as the paper presents it (text at under half its size): back to the target.
    reduced = scrap_images([photo(news6, jpeg=95, scale=0.45).data])
    assert len(reduced) == 6
    assert line_pitch(reduced) == pytest.approx(TARGET_PITCH, rel=0.04)
