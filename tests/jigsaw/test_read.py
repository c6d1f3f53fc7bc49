from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from shredfold.jigsaw.read import PROBE, best_quarter_turn


@dataclass(frozen=True)
class Seen:
    text: str
    box: tuple[float, float, float, float]
    score: float


def page() -> np.ndarray:
    """A drawing whose only ink is a band of 'text' and, below it, a mark at the left: the
    band reads as well either way up in the probe; the mark tells which way is up."""
    rgb = np.full((400, 900, 3), 255, np.uint8)
    rgb[40:60, 50:850] = 0
    rgb[300:340, 20:60] = 0
    return rgb


def reader(image: Image.Image) -> list[Seen]:
    """A recogniser that reads a probe patch as confidently both ways up (upside-down
    garbage often does), and a whole drawing well only when the mark is at its lower left."""
    px = np.asarray(image.convert("L"))
    if px.shape[0] <= PROBE[1]:
        return [Seen("x" * 20, (0, 0, 1, 1), 0.9)]
    h, w = px.shape
    upright = px[h // 2 :, : w // 4].mean() < px[h // 2 :, 3 * w // 4 :].mean()
    return [Seen("x" * 20, (0, 0, 1, 1), 0.9 if upright else 0.5)]


def test_a_near_tie_in_the_probe_is_settled_by_the_whole_drawing() -> None:
    assert best_quarter_turn(page(), reader) == 0
    assert best_quarter_turn(np.ascontiguousarray(np.rot90(page(), 2)), reader) == 2
