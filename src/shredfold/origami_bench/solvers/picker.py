"""An image-only multiple-choice picker: which option is the reference after one more fold?

It reads nothing but the five pictures of a request (the reference, then options A to D),
in the fixed frame every OrigamiBench picture uses, and reasons as a person with a ruler
would:

- a simple fold turns every layer on one side of a line onto the other, so afterwards
  nothing lies on the far side: the fold line is a supporting line of the new outline, one of
  the edges of its convex hull. For each option and each hull edge, the reference is folded
  along that line (its pixels reflected) and the outline compared with the option's;
- where the fold moved nothing (the kept side, away from where the flap lands) the option
  must show exactly the reference's pixels;
- several options can be one fold of the reference — a fold along a nearby line, or the same
  line with the other assignment, is one too, and the associative prompt does not say which
  fold was made. Then the picker prefers the fold a person would choose (a line through two
  corners of the reference's outline, or one laying a corner onto another), the option that
  another option continues by one more fold (the next step of the same sequence), and a
  valley (the flap in front) over a mountain.

When the prompt names the fold (the causal variant, :func:`predict_fold`), no guessing is
needed: the reference is folded along the named line in its pixels (the flap reflected and
turned over; on top for a valley, under the layers that stay for a mountain) and the option
closest to that prediction is chosen.

Pure: PNG bytes (and the step read from the prompt) in, an option index and the evidence out.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from shredfold.origami import affine

BACKGROUND = 255  # the drawings' white
MAX_SIDE = 2048  # pixels; the benchmark's pictures are 256 (bounded work on any request)
PIXEL_TOLERANCE = 32  # a channel difference below this is the same colour (the drawing is exact)
MIN_EDGE_PX = 5.0  # hull edges shorter than this are pixel steps, not fold lines
EDGE_BAND_PX = 3.0  # pixels this close to where the flap lands may carry its edge lines
OFFSETS_PX = (-1.0, -0.5, 0.0, 0.5)  # the hull runs through pixel centres; the crease is near
# an option whose fit is this close to the best option's is a fold of the reference too (the
# answers' fits of the default spec's causal items range 0.91..1, their look-alikes' alike)
TIE = 0.05
CONTINUED = 0.94  # an option this well explained as one fold of another continues it
CORNER_PX = 3.0  # a fold line "through a corner" passes this close to it
SEARCH_STRIDE = 2  # lines are ranked on every other pixel ...
SEARCH_KEEP = 3  # ... and the best few checked at full resolution
# the pictures' frame as the view note states it: the region (-0.5, -0.5)..(1.5, 1.5), y up,
# inside a margin of 5% of the side; the paper's two sides are the drawing's cream and blue
VIEW_LO, VIEW_SPAN, VIEW_MARGIN = -0.5, 2.0, 0.05
FRONT, BACK = (250, 235, 200), (120, 160, 210)


@dataclass(frozen=True)
class Picture:
    rgb: np.ndarray  # (H, W, 3) int16
    mask: np.ndarray  # (H, W) bool: paper (not background)


@dataclass(frozen=True)
class FoldFit:
    """How well ``after`` is one fold of ``before``, along the best hull line of ``after``."""

    score: float  # outline IoU times the share of kept pixels that agree; 0 when no line fits
    point: np.ndarray  # a point of the fold line (pixels, x right, y down)
    normal: np.ndarray  # unit normal pointing to the side that stays
    valley: bool  # the flap shows in front (the landing area changed), not hidden behind


NO_FIT = FoldFit(0.0, np.zeros(2), np.array([1.0, 0.0]), False)


def decode(png: bytes) -> Picture:
    """A picture's pixels; ``ValueError`` naming the cause for anything but a sane image."""
    try:
        img = Image.open(io.BytesIO(png))
        if max(img.size) > MAX_SIDE:  # read from the header, before any pixel is decoded
            raise ValueError(f"a picture of {img.size[0]}x{img.size[1]} pixels (at most {MAX_SIDE} a side)")
        rgb = np.asarray(img.convert("RGB"), dtype=np.int16)
    except (OSError, SyntaxError) as exc:  # what Pillow raises on bytes that are no image
        raise ValueError(f"not a readable image ({type(exc).__name__})") from None
    return Picture(rgb, np.any(rgb != BACKGROUND, axis=2))


def _grid(shape: tuple[int, int]) -> np.ndarray:
    rows, cols = np.indices(shape, dtype=np.float64)
    return np.stack([cols, rows], axis=-1)  # (H, W, 2) pixel centres as (x, y)


@dataclass(frozen=True)
class _Samples:
    """Every ``stride``-th pixel centre of a picture, where a folded outline is sampled:
    x and y as contiguous arrays (the arithmetic of a fold runs on them at full speed;
    a strided (H, W, 2) view was most of its cost), and the picture's pixels there."""

    x: np.ndarray  # (h, w) float64
    y: np.ndarray
    mask: np.ndarray  # (h, w) bool: the picture's paper at those centres

    @classmethod
    def of(cls, mask: np.ndarray, stride: int = 1) -> _Samples:
        rows, cols = np.indices(mask.shape, dtype=np.float64)
        pick = (slice(None, None, stride), slice(None, None, stride))
        return cls(np.ascontiguousarray(cols[pick]), np.ascontiguousarray(rows[pick]), mask[pick])


def hull_lines(mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(point, inward unit normal) of every long edge of the outline's convex hull."""
    pts = np.argwhere(mask)[:, ::-1].astype(np.float32)  # (x, y)
    if len(pts) < 3:
        return []
    hull = cv2.convexHull(pts)
    poly = cv2.approxPolyDP(hull, 1.0, True).reshape(-1, 2).astype(np.float64)
    centre = pts.mean(axis=0)
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        d = b - a
        length = float(np.hypot(*d))
        if length < MIN_EDGE_PX:
            continue
        n = np.array([-d[1], d[0]]) / length
        if affine.dot2(centre - a, n) < 0:
            n = -n
        out.append((a, n))
    return out


def _fold(before: np.ndarray, at: _Samples, p: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``before`` folded along the line (p, n), sampled at the points ``at``: the outline,
    where the flap lands, and ``s`` (signed distance to the line, positive on the side that
    stays)."""
    s = (at.x - p[0]) * n[0] + (at.y - p[1]) * n[1]
    stays = s > 0
    twice = 2 * s
    h, w = before.shape
    cx = np.rint(at.x - twice * n[0]).astype(np.int64)
    cy = np.rint(at.y - twice * n[1]).astype(np.int64)
    inside = stays & (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
    landed = np.zeros(s.shape, bool)
    landed[inside] = np.take(before, cy[inside] * w + cx[inside])
    return stays & (at.mask | landed), landed, s


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b).max(axis=-1) <= PIXEL_TOLERANCE


def fold_fit(before: Picture, after: Picture) -> FoldFit:
    """The best simple fold taking ``before`` to ``after``, and how well it explains it.

    Lines are searched on every other pixel (a quarter of the work; a line's outline IoU
    barely changes), the best one is then checked at full resolution."""
    if before.mask.shape != after.mask.shape or np.count_nonzero(before.mask ^ after.mask) == 0:
        return NO_FIT  # no fold leaves the outline as it was
    full, coarse = _Samples.of(before.mask), _Samples.of(before.mask, SEARCH_STRIDE)
    target = after.mask[::SEARCH_STRIDE, ::SEARCH_STRIDE]
    lines = [(a - off * n, n) for a, n in hull_lines(after.mask) for off in OFFSETS_PX]
    if not lines:
        return NO_FIT
    ious = [_iou(_fold(before.mask, coarse, p, n)[0], target) for p, n in lines]
    best = NO_FIT
    for i in np.argsort(ious, kind="stable")[::-1][:SEARCH_KEEP]:
        p, n = lines[int(i)]
        outline, landed, s = _fold(before.mask, full, p, n)
        near = cv2.dilate(landed.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
        kept = before.mask & (s > EDGE_BAND_PX) & ~near
        agree = float(_same(before.rgb[kept], after.rgb[kept]).mean()) if kept.any() else 1.0
        score = _iou(outline, after.mask) * agree
        if score > best.score:
            best = FoldFit(score, p, n, _valley(before, after, landed))
    return best


def _valley(before: Picture, after: Picture, landed: np.ndarray) -> bool:
    """Whether the flap shows in front: where it lands on paper, the picture changed."""
    core = cv2.erode(landed.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool) & before.mask
    if not core.any():
        core = landed & before.mask
    if not core.any():
        return True  # the flap lands beyond the paper: front and behind look alike
    return float(_same(before.rgb[core], after.rgb[core]).mean()) < 0.9


def outline_corners(mask: np.ndarray) -> np.ndarray:
    """Corners of the outline (a polygon fitted to the mask's outer contours), pixels."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = [cv2.approxPolyDP(c, 1.5, True).reshape(-1, 2) for c in contours if len(c) >= 3]
    return np.concatenate(out).astype(np.float64) if out else np.zeros((0, 2))


def natural(fit: FoldFit, corners: np.ndarray) -> bool:
    """A fold line a person would choose: through two outline corners, or laying one corner
    onto another (the reference's corners)."""
    if len(corners) < 2:
        return False
    s = affine.dot2(corners - fit.point, fit.normal)
    if np.count_nonzero(np.abs(s) <= CORNER_PX) >= 2:
        return True
    mirrored = corners - 2 * s[:, None] * fit.normal
    d = np.hypot(*(mirrored[:, None, :] - corners[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    return bool((d <= 2 * CORNER_PX).any())


@dataclass(frozen=True)
class Choice:
    index: int
    fits: tuple[FoldFit, ...]  # each option as one fold of the reference (image-only choice)
    tied: tuple[int, ...]  # options whose fit is within TIE of the best: all one fold away
    reason: str
    # with a named fold: each option's share of pixels unlike the predicted picture
    misses: tuple[float, ...] = ()


def _to_pixels(pt: Sequence[float], size: int) -> np.ndarray:
    """A frame point (x, y up) as a pixel position (column, row; y down)."""
    scale = size * (1 - 2 * VIEW_MARGIN) / VIEW_SPAN
    lo = size / 2 - scale * (VIEW_LO + VIEW_SPAN / 2)
    return np.array([lo + scale * pt[0], size - lo - scale * pt[1]], dtype=np.float64)


def _paper(rgb: np.ndarray, colour: tuple[int, int, int]) -> np.ndarray:
    return np.abs(rgb - np.array(colour)).max(axis=-1) <= PIXEL_TOLERANCE


def _turned(rgb: np.ndarray, shows: str) -> np.ndarray:
    """A flap's pixels after it turns over (edge lines stay black): ``"other"``, the visible
    layer's other side (front drawn as back and back as front: right for a flap of one
    layer); ``"back"``, the paper's back everywhere (right when the flap's bottom layer is
    the sheet as it lay at the start, front up, as it stays under valley folds)."""
    out = rgb.copy()
    front, back = _paper(rgb, FRONT), _paper(rgb, BACK)
    if shows == "back":
        out[front | back] = BACK
    else:
        out[front], out[back] = BACK, FRONT
    return out


# What a turned flap shows is its bottom layer's underside, which no picture shows; the picker
# tries both of these and keeps the better fit. (A third, the paper's front everywhere, would
# let a mountain's result pass for a valley whose flap matches the layers under it.)
FLAP_SIDES = ("other", "back")


def predict_fold(
    before: Picture, start: Sequence[float], end: Sequence[float], assignment: str, shows: str = "other"
) -> Picture:
    """``before`` after the named simple fold, in its pixels: what lies left of the directed
    line start -> end (frame coordinates) is reflected onto the right side turned over
    (``shows``: which side, :func:`_turned`), in front of the layers that stay for a valley
    ("V"), behind them for a mountain ("M", so it shows only beyond them). The hidden layers'
    own edges are not drawn (a picture shows only the top layer)."""
    h, w = before.mask.shape
    p, q = _to_pixels(start, w), _to_pixels(end, w)
    d = q - p
    length = float(np.hypot(*d))
    if length == 0:
        raise ValueError("the named fold line has two equal points")
    grid = _grid((h, w))
    # n points to the side that stays: in pixels y points down, so the frame's right of p -> q
    n = np.array([-d[1], d[0]]) / length
    side = affine.dot2(grid - p, n)
    stays = side > 0
    src = grid - 2 * side[..., None] * n
    cx, cy = np.rint(src[..., 0]).astype(np.int64), np.rint(src[..., 1]).astype(np.int64)
    inside = stays & (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
    landed = np.zeros((h, w), bool)
    landed[inside] = before.mask[cy[inside], cx[inside]]
    kept = before.mask & stays
    rgb = np.full_like(before.rgb, BACKGROUND)
    rgb[kept] = before.rgb[kept]
    on_top = landed if assignment == "V" else landed & ~kept
    rgb[on_top] = _turned(before.rgb[cy[on_top], cx[on_top]], shows)
    return Picture(rgb, kept | landed)


def _miss(a: Picture, b: Picture) -> float:
    return float((~_same(a.rgb, b.rgb)).mean())


def _pictures(images: Sequence[bytes]) -> tuple[Picture, list[Picture]]:
    if len(images) != 5:
        raise ValueError(f"a multiple-choice request has 5 pictures (the reference, A to D), not {len(images)}")
    ref, *options = [decode(p) for p in images]
    if len({o.mask.shape for o in (ref, *options)}) != 1:
        raise ValueError("the five pictures are not all of one size")
    return ref, options


def choose(images: Sequence[bytes], step: dict[str, object] | None = None) -> Choice:
    """The option (0..3) that is most plausibly the reference after one more fold.

    With a named fold (``step`` as :func:`shredfold.origami_bench.prompts.mcq_step` reads it from
    the prompt): the option closest to :func:`predict_fold`. Otherwise, among the options
    that are one fold of the reference, in this order: a natural fold line, an option that
    another option continues by one fold, a valley, the closest fit (named crease lines are
    in sheet coordinates, which a folded picture does not show, so they take this path too).
    ``ValueError`` when the request does not hold five readable pictures of one size.
    """
    ref, options = _pictures(images)
    if step is not None and step.get("kind") == "fold":
        start, end = step["start"], step["end"]
        wants = [predict_fold(ref, start, end, str(step["assignment"]), shows) for shows in FLAP_SIDES]  # type: ignore[arg-type]
        misses = tuple(min(_miss(w, o) for w in wants) for o in options)
        best = int(np.argmin(misses))
        return Choice(best, (), (best,), "the closest to the named fold", misses)
    return _choose_unnamed(ref, options)


def _choose_unnamed(ref: Picture, options: list[Picture]) -> Choice:
    fits = tuple(fold_fit(ref, o) for o in options)
    top = max(f.score for f in fits)
    tied = tuple(i for i, f in enumerate(fits) if f.score >= top - TIE)
    if len(tied) == 1:
        return Choice(tied[0], fits, tied, "the only option one fold away")
    corners = outline_corners(ref.mask)

    def rank(i: int) -> tuple[int, int, int, float]:
        continued = any(
            fold_fit(options[i], options[j]).score >= CONTINUED for j in range(len(options)) if j != i
        )
        return (int(natural(fits[i], corners)), int(continued), int(fits[i].valley), fits[i].score)

    ranks = {i: rank(i) for i in tied}
    best = max(tied, key=lambda i: ranks[i])
    why = ("a natural fold line", "continued by another option", "a valley")
    # the first criterion that set the chosen option apart from some other tied one
    reason = next(
        (w for k, w in enumerate(why) if ranks[best][k] and any(not ranks[i][k] for i in tied)),
        "the closest fit",
    )
    return Choice(best, fits, tied, reason)
