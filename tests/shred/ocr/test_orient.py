"""Scraps are turned upright before OCR, whatever their rotation."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from shredfold.metrics.text import ned
from shredfold.shred.fonts import load_font
from shredfold.shred.ocr import reader as ocr
from shredfold.shred.ocr.orient import quarter_turn, text_angle, upright

CODE = "\n".join(
    [
        "def area(width, height):",
        "    if width < 0 or height < 0:",
        "        raise ValueError(width)",
        "    return width * height",
        "",
        "total = 0",
        "for w in range(3, 9):",
        "    total += area(w, 2 * w)",
        "print(total)",
    ]
)


def code_scrap(angle: float) -> Image.Image:
    font = load_font("mono", 22)
    page = Image.new("RGBA", (520, 300), (250, 248, 242, 255))
    ImageDraw.Draw(page).multiline_text((16, 16), CODE, font=font, fill=(20, 20, 24, 255), spacing=10)
    return page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)


def off_by_quarter_turns(a: float, b: float) -> float:
    """How far two angles are apart, ignoring whole quarter turns."""
    d = (a - b) % 90.0
    return min(d, 90.0 - d)


@pytest.mark.parametrize("angle", [0.0, 100.0, 200.0])
def test_a_rotated_monospace_scrap_reads_back(angle):
    scrap = code_scrap(angle)
    # The ink alone fixes the line direction only up to a quarter turn on monospace text,
    # whose characters line up in columns too ...
    assert off_by_quarter_turns(text_angle(scrap), angle) < 1.0
    # ... and reading a few crops of the inkiest patch in all four turns settles the rest.
    text = ocr.read_text(upright(scrap, turn=quarter_turn), kind="code")
    assert ned(text, CODE, "code") < 0.1, text


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_quarter_turn_undoes_a_quarter_turn(k):
    level = np.asarray(code_scrap(0.0).convert("RGB"))
    # Turned clockwise by k quarters; k counter-clockwise quarter turns put it back.
    assert quarter_turn(np.ascontiguousarray(np.rot90(level, -k))) == k


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_the_quarter_turn_is_looked_at_only_when_the_first_patch_does_not_settle_it(monkeypatch, k):
    # Level text read as it is (k = 0, 2) settles the turn on the first patch; text on its
    # side (k = 1, 3) reads as nothing there, so the patch turned a quarter is read too.
    from shredfold.shred.ocr import orient

    looks: list[tuple[float, float]] = []

    def counted(image: Image.Image) -> tuple[float, float]:
        looks.append(orient_scores(image))
        return looks[-1]

    orient_scores = orient.reader.half_turn_scores
    monkeypatch.setattr(orient.reader, "half_turn_scores", counted)
    level = np.asarray(code_scrap(0.0).convert("RGB"))
    assert quarter_turn(np.ascontiguousarray(np.rot90(level, -k))) == k
    assert len(looks) == (1 if k % 2 == 0 else 2), looks


def test_a_turned_scrap_is_cut_to_its_paper():
    # A 520 x 300 scrap lying at 30 degrees fills less than half of its turned canvas; put
    # level, the transparent corners of that canvas are cut away (the detector's cost goes
    # with the area it looks at), leaving the paper and a thin white margin.
    from shredfold.shred.ocr.orient import PAPER_MARGIN

    scrap = code_scrap(30.0)
    level = upright(scrap)
    assert scrap.size[0] * scrap.size[1] > 1.5 * 520 * 300
    assert abs(level.size[0] - (520 + 2 * PAPER_MARGIN)) <= 4
    assert abs(level.size[1] - (300 + 2 * PAPER_MARGIN)) <= 4


def test_a_blank_scrap_is_left_as_it_is():
    assert quarter_turn(np.full((300, 400, 3), 250, np.uint8)) == 0


def test_a_close_call_is_settled_by_full_readings(monkeypatch):
    # Short crops that read about as well both ways up (as a lone line of lowercase prose
    # does) do not decide; full readings of the patch in all four turns do.
    from shredfold.shred.ocr import orient

    monkeypatch.setattr(orient.reader, "half_turn_scores", lambda image: (5.0, 4.0))
    upside_down = np.asarray(code_scrap(180.0).convert("RGB"))
    assert quarter_turn(np.ascontiguousarray(upside_down)) == 2


def test_a_near_tie_of_the_full_readings_is_settled_by_the_whole_image(monkeypatch):
    # The patch reads as confidently either way up (a line lost at a seam can make
    # upside-down garbage read as well as the text); the whole image, where a mark at the
    # lower left tells which way is up, decides.
    from dataclasses import dataclass

    from shredfold.shred.ocr import orient

    @dataclass(frozen=True)
    class Seen:
        text: str
        box: tuple[float, float, float, float]
        score: float

    def read_lines(image: Image.Image) -> list[Seen]:
        px = np.asarray(image.convert("L"))
        if px.shape[0] <= orient.PROBE[1]:
            return [Seen("x" * 20, (0, 0, 1, 1), 0.9)]
        h, w = px.shape
        mark_lower_left = px[h // 2 :, : w // 4].mean() < px[h // 2 :, 3 * w // 4 :].mean()
        return [Seen("x" * 20, (0, 0, 1, 1), 0.9 if mark_lower_left else 0.5)]

    monkeypatch.setattr(orient.reader, "half_turn_scores", lambda image: (5.0, 4.0))
    monkeypatch.setattr(orient.reader, "read_lines", read_lines)
    page = np.full((400, 900, 3), 255, np.uint8)
    page[40:60, 50:850] = 0  # a band of "text": the probe patch
    page[300:340, 20:60] = 0  # the mark
    assert quarter_turn(page) == 0
    assert quarter_turn(np.ascontiguousarray(np.rot90(page, 2))) == 2
