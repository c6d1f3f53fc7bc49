"""Orientation of a scrap: its text lines' angle from the ink alone (projection profiles),
then which of the four quarter turns reads best."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from shredfold.shred.ocr import reader

if TYPE_CHECKING:
    # An annotation only: jigsaw's words import this package's row rule (.rows).
    from shredfold.shred.solvers.jigsaw.read import Turner

PROBE = (720, 150)  # px: the inkiest patch (w, h) read in each quarter turn


def ink_points(image: Image.Image, max_points: int = 6000) -> np.ndarray:
    """(x, y) of dark pixels on opaque paper, evenly thinned to at most ``max_points``."""
    rgba = np.asarray(image.convert("RGBA"), dtype=np.float32)
    gray = rgba[..., :3].mean(axis=2)
    paper = rgba[..., 3] > 200
    if not paper.any():
        return np.zeros((0, 2))
    level = np.percentile(gray[paper], 90)
    ink = paper & (gray < level - 60)
    ys, xs = np.nonzero(ink)
    pts = np.stack([xs, ys], axis=1).astype(np.float64)
    if len(pts) > max_points:
        pts = pts[:: int(np.ceil(len(pts) / max_points))]
    return pts


def text_angle(image: Image.Image) -> float:
    """Angle in degrees (−90, 90] by which text lines are turned counter-clockwise.

    Text lines make the ink's projection onto the axis normal to them peaky; the angle that
    maximises the sum of squared histogram counts is the line direction. A coarse 1° scan is
    refined at 0.1°. Turning the image clockwise by this angle makes lines horizontal, up to
    a half turn (settled by :func:`upright`).
    """
    pts = ink_points(image)
    if len(pts) < 50:
        return 0.0
    pts = pts - pts.mean(axis=0)

    def score(deg: np.ndarray) -> np.ndarray:
        th = np.deg2rad(deg)[:, None]
        # y' of each ink point in a frame turned by θ (image y points down).
        proj = pts[None, :, 1] * np.cos(th) + pts[None, :, 0] * np.sin(th)
        lo = proj.min()
        bins = ((proj - lo) / 2.0).astype(np.int64)
        out = np.empty(len(deg))
        for i in range(len(deg)):
            counts = np.bincount(bins[i])
            out[i] = float((counts.astype(np.float64) ** 2).sum())
        return out

    coarse = np.arange(-89.0, 91.0, 1.0)
    best = coarse[int(np.argmax(score(coarse)))]
    fine = np.arange(best - 1.0, best + 1.0001, 0.1)
    angle = float(fine[int(np.argmax(score(fine)))])
    if angle <= -90:
        angle += 180
    elif angle > 90:
        angle -= 180
    return angle


def probe(rgb: np.ndarray) -> np.ndarray:
    """The inkiest patch, for the which-way-up test (OCR time grows with the area read)."""
    pw, ph = PROBE
    ink = (rgb.mean(axis=2) < 128).astype(np.float32)
    if ink.shape[0] > ph:
        top = int(np.argmax(np.convolve(ink.sum(axis=1), np.ones(ph), mode="valid")))
        rgb, ink = rgb[top : top + ph], ink[top : top + ph]
    if ink.shape[1] > pw:
        left = int(np.argmax(np.convolve(ink.sum(axis=0), np.ones(pw), mode="valid")))
        rgb = rgb[:, left : left + pw]
    return np.ascontiguousarray(rgb)


# The cheap scores settle the turn when the best leads the runner-up by DECISIVE times and
# rests on at least MIN_EVIDENCE confidently read characters. Closer calls, such as a lone
# line of lowercase prose (which reads upside down almost as confidently: "ash map" turned is
# "dew ɥsɐ"), or a patch with next to no text, are settled as before the shortcut, by full
# readings of the patch in all four turns (about five times the cost; on the default spec's
# code scraps one in five).
DECISIVE = 2.0
MIN_EVIDENCE = 4.0
# The full readings of the patch call a near tie when the half turn of the best reads this
# nearly as well: the patch showed too little (a line lost at a seam can make upside-down
# garbage read as confidently as the text: a Blender news page read upside down, 117.7 to
# 117.0), so the whole image is read both ways and settles it.
TIE_SHARE = 0.9


def quarter_turn(rgb: np.ndarray) -> int:
    """How many counter-clockwise quarter turns (np.rot90) put the text of ``rgb`` upright.

    The ink's line direction is ambiguous by a quarter turn on monospace pages, whose
    characters also line up in columns; so the inkiest patch is looked at as it is and
    turned a quarter, and each is scored both ways up by :func:`reader.half_turn_scores`
    (one detection and a few short crops each); the most confident turn wins, if it wins
    clearly (see :data:`DECISIVE`), else the one whose full reading is most confident.

    The patch turned a quarter is not looked at when the patch as it is already settles
    the turn clearly: its confident readings come from wide boxes, lines that run across
    it, and those run up the patch turned a quarter, where they read as next to nothing.
    On the default spec's 144 scraps at N = 8 and 16 the first look settled 115; the
    quarter turn of those scored at most 0.6 (:data:`MIN_EVIDENCE` is 4), and looking at
    it too gave the same turn on all 115.
    """
    scores = [0.0] * 4
    for k in (0, 1):
        patch = probe(np.ascontiguousarray(np.rot90(rgb, k)))
        scores[k], scores[k + 2] = reader.half_turn_scores(Image.fromarray(patch))
        second, best = sorted(scores)[-2:]
        if best >= MIN_EVIDENCE and best >= DECISIVE * second:
            return int(np.argmax(scores))
    return _most_confident_reading(rgb)


def level_confidence(rgb: np.ndarray) -> tuple[float, float]:
    """How confidently the inkiest patch of ``rgb`` reads with its lines running across
    it, as it is and turned a half turn (:func:`reader.half_turn_scores`; both 0 where
    its lines run up it)."""
    return reader.half_turn_scores(Image.fromarray(probe(rgb)))


def whole_confidence(rgb: np.ndarray) -> tuple[float, float]:
    """How confidently all of ``rgb`` reads, as it is and turned a half turn (two full
    readings: the cost :func:`level_confidence` saves, paid where its patch showed too
    little)."""
    return _confidence(rgb), _confidence(np.ascontiguousarray(np.rot90(rgb, 2)))


def _most_confident_reading(rgb: np.ndarray) -> int:
    scores = [_confidence(probe(np.ascontiguousarray(np.rot90(rgb, k)))) for k in range(4)]
    k = int(np.argmax(scores))
    half = (k + 2) % 4
    if scores[half] >= TIE_SHARE * scores[k] > 0:
        whole = [_confidence(np.ascontiguousarray(np.rot90(rgb, t))) for t in (k, half)]
        k = k if whole[0] >= whole[1] else half
    return k


def _confidence(rgb: np.ndarray) -> float:
    return float(sum(line.score * len(line.text) for line in reader.read_lines(Image.fromarray(rgb))))


def upright(image: Image.Image, turn: Turner | None = None) -> Image.Image:
    """The scrap turned so its text lines are horizontal and the right way up, on white.

    The line direction comes from the ink, up to a quarter turn (monospace characters line
    up in columns too); ``turn`` (e.g. :func:`quarter_turn`) settles the rest; without it
    the result is only level, maybe upside down or on its side.
    """
    angle = text_angle(image)
    rgba = image.convert("RGBA")
    # Pillow's positive angles turn counter-clockwise on screen, as ours do.
    turned = rgba.rotate(-angle, resample=Image.Resampling.BICUBIC, expand=True)
    turned = turned.crop(_paper_box(turned))
    white = Image.new("RGBA", turned.size, (255, 255, 255, 255))
    white.alpha_composite(turned)
    rgb = np.asarray(white.convert("RGB"))
    if turn is not None:
        rgb = np.ascontiguousarray(np.rot90(rgb, turn(rgb)))
    return Image.fromarray(rgb)


# White kept around the paper when a turned scrap is cut to it: more than the detector's
# reach past a line's ink (a few px), so no box touches the edge.
PAPER_MARGIN = 8


def _paper_box(image: Image.Image) -> tuple[int, int, int, int]:
    """The box of ``image``'s paper (alpha > 0) plus :data:`PAPER_MARGIN`, within the image.

    Turning a scrap by its text angle with ``expand`` leaves transparent corners around it,
    up to three quarters of the canvas for a scrap lying at 45 degrees; the OCR's detector
    costs in proportion to the area it looks at, white or not.
    """
    box = image.getchannel("A").getbbox()
    if box is None:
        return (0, 0, *image.size)
    x0, y0, x1, y1 = box
    w, h = image.size
    m = PAPER_MARGIN
    return (max(x0 - m, 0), max(y0 - m, 0), min(x1 + m, w), min(y1 + m, h))
