"""OCR of pages and shredded pieces with RapidOCR (PP-OCRv4 detection + recognition, ONNX
models run by OpenVINO, see :mod:`.runtime`).

A thin layer over :class:`rapidocr_onnxruntime.RapidOCR` shared by the built-in OCR model
and the jigsaw/search agents:

* :func:`prepare` turns a piece (RGBA paper on a transparent background, maybe with a drop
  shadow; or an RGB composite on a table top; or a shaded 3D render) into a binary image
  of black text on white;
* :func:`read_lines` returns the recognised boxes in reading order;
* :func:`read_text` joins them into text for a domain: prose rows joined by newlines,
  code with its indentation rebuilt from the glyph positions, table rows with cells
  separated by ``" | "``.

Engine settings, and why (measured on text rendered with DejaVu and Noto Sans CJK):

* one thread (ONNX Runtime's intra- and inter-op, which RapidOCR still loads; OpenVINO's,
  see :mod:`.runtime`): Snakemake runs one job per core, and the default (a thread per core
  in every session) oversubscribes the machine;
* detection at native resolution (``det_limit_type="max"``: images up to 2000 px on the
  long side, RapidOCR's own limit, are not resized). The default upscales the *short*
  side to 736 px, which blows a 1000x190 strip up to 3900x740: 5x slower, and it splits
  lines into overlapping boxes that repeat or drop characters;
* no text-direction classifier: our pieces are upright, and the classifier turned lines
  of 20 px English upside down (NED 0.05 -> 0.37);
* recognition one crop at a time (``rec_batch_num=1``): with one thread, batching only
  pads crops to the widest in the batch, and each new batch shape costs the runtime a
  re-plan (a page took 20 CPU-s with batches of 6, 16 with 1, under ONNX Runtime).

Around the engine we add what the measurements asked for: upscaling of small text
(:data:`MIN_BOX_HEIGHT`); erasing table rules (whose cells then give the table's reading
order) and dark areas that are not text (the table top around a piece in a composite); a
second look at short marks the detector misses ("}" alone on a line); and crops widened
past the detector's tight edges. We call RapidOCR's detector and recogniser separately
(``engine()(…, use_rec=False)`` and ``engine().text_rec``) to do that; both are stable in
the pinned 1.4.4.

The engine is created lazily, once per process (importing RapidOCR and OpenVINO and
compiling the two models: ~1.1 s). Timing on one core (bench/default_profile.py, the default
spec's N = 16 items): 5.6-11.8 CPU-s for a jigsaw-ocr item (one page read, plus the solve),
7-15 CPU-s for an ocr-islands item (16 scraps, each turned and read).
"""

from __future__ import annotations

import statistics
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import cv2
import numpy as np
from PIL import Image

from shredfold.shred.ocr import ENGINE_PARAMS
from shredfold.shred.ocr.rows import group_rows, indents

if TYPE_CHECKING:
    from rapidocr_onnxruntime import RapidOCR

__all__ = ["OcrLine", "engine", "half_turn_scores", "prepare", "read_lines", "read_text", "ENGINE_PARAMS"]

Kind = Literal["prose", "code", "table"]

_engine: RapidOCR | None = None
_engine_lock = threading.Lock()


def engine() -> RapidOCR:
    """The process-wide RapidOCR engine, created on first use."""
    global _engine
    with _engine_lock:
        if _engine is None:
            from rapidocr_onnxruntime import RapidOCR

            from shredfold.shred.ocr.runtime import attach

            _engine = RapidOCR(**ENGINE_PARAMS)
            attach(_engine)
        return _engine


@dataclass(frozen=True)
class OcrLine:
    """One recognised text box: its text, axis-aligned box (x0, y0, x1, y1) in pixels of
    the input image, and the recogniser's confidence in [0, 1]."""

    text: str
    box: tuple[float, float, float, float]
    score: float
    # x centres of the connected ink blobs in the box, left to right (input-image pixels);
    # code indentation is measured on them (see _char_width).
    glyphs: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


def prepare(image: Image.Image, scale: float = 1.0, binarize: bool = True) -> np.ndarray:
    """Binary uint8 array (H, W) of black text on white, ready for the engine (without
    ``binarize``, the flat-fielded grey: step 4 left out).

    1. Grayscale (ITU-R 601 luma); for RGBA, everything that is not paper becomes white:
       alpha below 62% (the transparent surround and the drop shadow, which would
       otherwise binarise into a black band along the edge) is white, and the paper's
       anti-aliased rim is blended over white by how far its alpha is above that level.
    2. Flat-field: divide by a local background estimate (a 51 px maximum filter, then a
       51 px box blur). Shading across a 3D-rendered scrap, grey paper, and the table top
       and shadows around pieces in an RGB composite all become white, while strokes
       thinner than the window (text up to ~100 px) stay dark.
    3. Optionally resize by ``scale`` (bicubic, before thresholding so edges stay sharp).
    4. Otsu threshold, unless the image holds too little contrast to contain ink (blank
       paper would otherwise turn its noise into speckles).

    Measured with this module's pipeline on 49 rendered pieces (English 14-28 px, code
    16-24 px, Chinese 18-28 px, headings 60-90 px; on white, RGBA with a drop shadow, on a
    brown table top, faded with noise and blur, shaded 100%->45%), mean NED: grey 0.039,
    grey + percentile stretch 0.036, grey + Otsu 0.049 (0.23 on shaded pieces), grey +
    adaptive threshold 0.006 (but 0.13-0.18 on 120-160 px headings on a table top),
    flat-field 0.036, flat-field + Otsu 0.008. Binarising mostly helps the recogniser keep
    the spaces between words.
    """
    grey = _flat_field(_grey(image))
    if scale != 1.0:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    return _binarize(grey) if binarize else grey


# Alpha at or below this fraction is shadow, not paper: the synthesizers draw shadows as
# black at up to ~45% opacity and paper opaque (shredfold.shred.solvers.jigsaw.contour uses the same).
_PAPER_LEVEL = 0.62


def _grey(image: Image.Image) -> np.ndarray:
    if image.mode not in ("RGBA", "LA", "PA") and "transparency" not in image.info:
        return np.asarray(image.convert("L"), dtype=np.uint8)
    rgba = np.asarray(image.convert("RGBA"), dtype=np.float32)
    grey = rgba[..., :3] @ np.float32([0.299, 0.587, 0.114])
    lo = _PAPER_LEVEL * 255.0
    paper = np.clip((rgba[..., 3] - lo) / (255.0 - lo), 0.0, 1.0)
    return np.clip(grey * paper + 255.0 * (1.0 - paper), 0, 255).astype(np.uint8)


_BACKGROUND_WINDOW = 51
INK_SPAN = 32  # grey levels: ink this close to the paper is none (blank paper)


def _flat_field(grey: np.ndarray) -> np.ndarray:
    k = _BACKGROUND_WINDOW
    background = cv2.dilate(grey, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    background = cv2.blur(background, (k, k))
    flat = grey.astype(np.float32) * 255.0 / np.maximum(background, 1).astype(np.float32)
    return np.clip(flat, 0, 255).astype(np.uint8)


def _binarize(grey: np.ndarray) -> np.ndarray:
    threshold, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = grey[grey <= threshold]
    light = grey[grey > threshold]
    # Otsu always splits; on blank paper the two classes are both paper.
    if dark.size == 0 or light.size == 0 or float(light.mean()) - float(dark.mean()) < 32:
        return grey
    return binary


def _ink(array: np.ndarray) -> np.ndarray:
    """Where ``array`` (binary, or the flat-fielded grey read unbinarised) holds ink: darker
    than halfway from the paper to the darkest ink (128 on a binary image).

    A fixed level would do for a binary image only: on the grey of a page drawn from a
    photograph the ink of small type is light (the darkest strokes of the ShredBench
    authors' 12 px code at 167 of 255), and the short marks, ink boxes and rules found on
    this mask would all be missed. Otsu's level, halfway between the classes' means, makes
    dark type's strokes bolder than they are and runs its letters together."""
    paper = float(np.median(array))
    dark = array[array < paper - INK_SPAN]
    if dark.size == 0:  # blank paper
        return np.zeros(array.shape, bool)
    # Of the ink only, so a scrap holding a single short mark keeps it.
    darkest = float(np.percentile(dark, 5))
    return array < 0.5 * (paper + darkest)


def _detect(array: np.ndarray) -> np.ndarray:
    boxes, _ = engine()(array, use_det=True, use_cls=False, use_rec=False)
    return np.asarray(boxes or [], dtype=np.float32).reshape(-1, 4, 2)


def _crop(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The quadrilateral warped to an upright rectangle.

    Unlike RapidOCR's own crop, a tall box is not turned 90 degrees: our text lines are
    horizontal, and a lone ")" or "}" of code makes a tall box that must stay upright.
    """
    width = int(max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[2] - quad[3])))
    height = int(max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2])))
    width, height = max(width, 1), max(height, 1)
    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    return cv2.warpPerspective(
        image, matrix, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC
    )


def _row_neighbours(boxes: np.ndarray, i: int) -> np.ndarray:
    """Indices of the boxes on the same text row as box i (vertical overlap >= half)."""
    y0, y1 = boxes[:, 1], boxes[:, 3]
    overlap = np.minimum(y1, y1[i]) - np.maximum(y0, y0[i])
    same = overlap >= 0.5 * np.minimum(y1 - y0, y1[i] - y0[i])
    same[i] = False
    return np.flatnonzero(same)


def _widen(quads: np.ndarray, margins: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Each box widened along its baseline by up to ``margins[i]`` px on either side, but
    never past half the gap to the next box on its row."""
    boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
    out = quads.copy()
    for i, quad in enumerate(quads):
        left = right = float(margins[i])
        for j in _row_neighbours(boxes, i):
            if boxes[j, 2] <= boxes[i, 0]:
                left = min(left, (boxes[i, 0] - boxes[j, 2]) / 2)
            elif boxes[j, 0] >= boxes[i, 2]:
                right = min(right, (boxes[j, 0] - boxes[i, 2]) / 2)
            else:
                left = right = 0.0
        direction = quad[1] - quad[0]
        direction = direction / max(float(np.linalg.norm(direction)), 1e-6)
        out[i, [0, 3]] -= direction * left
        out[i, [1, 2]] += direction * right
    out[..., 0] = out[..., 0].clip(0, shape[1] - 1)
    out[..., 1] = out[..., 1].clip(0, shape[0] - 1)
    return out


# How far a crop is widened beyond its box, in text heights (see _short_marks).
_DETECTED_MARGIN = 0.5
_RECOVERED_MARGIN = 1.0


def _box_of(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _short_marks(
    ink: np.ndarray, quads: np.ndarray, height: float
) -> tuple[np.ndarray, np.ndarray]:
    """Boxes and crop margins (px) for recognition, fixing the detector's short marks.

    The detector is unreliable on isolated short marks, and code is full of them: a line
    holding only "}" is often missed, or boxed tighter than the glyph. Ink is joined into
    word clusters (glyphs less than half a text height apart). Then:

    * a detected box narrower than 1.5 text heights is replaced by the bounding box of
      the ink clusters it touches;
    * an ink cluster that no detected box touches and that has the height of text
      (0.45-1.6 text heights: not a speck, a rule or a shadow edge) gets a box of its
      own, and the recogniser's confidence threshold rejects what is not text.

    Both kinds get 0.4 text heights of padding above and below and a crop margin of one
    text height, because the recogniser reads a lone "}" far more reliably with blank
    space around it (measured: "}" at 24 px is read as "1" in a tight crop, as "}" with
    a margin of one text height). Other detected boxes get half a text height of margin,
    which recovers a small last mark their edge often cuts off (a Chinese full stop).
    """
    join = max(1, int(0.5 * height))
    grouped = cv2.dilate(ink.astype(np.uint8), np.ones((1, join), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(grouped, connectivity=8)
    stats = stats.astype(np.float64)
    stats[:, 2] -= join - 1  # undo the horizontal dilation
    stats[:, 0] += (join - 1) // 2

    def window(quad: np.ndarray) -> np.ndarray:
        x0, y0 = np.floor(quad.min(axis=0)).astype(int).clip(0)
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
        return labels[y0:y1, x0:x1]

    pad = 0.4 * height
    out, margins, touched = [], [], {0}
    for quad in quads:
        inside = set(np.unique(window(quad)).tolist()) - {0}
        touched |= inside
        width = float(quad[:, 0].max() - quad[:, 0].min())
        if width < 1.5 * height and inside:
            xs0, ys0, ws, hs = (stats[sorted(inside), k] for k in range(4))
            x0, y0, x1, y1 = xs0.min(), ys0.min(), (xs0 + ws).max(), (ys0 + hs).max()
            if 0.45 * height <= y1 - y0 <= 1.6 * height:
                out.append(_box_of(x0, y0 - pad, x1, y1 + pad))
                margins.append(_RECOVERED_MARGIN * height)
                continue
        out.append(quad.tolist())
        margins.append(_DETECTED_MARGIN * height)
    for label in range(1, count):
        x, y, w, h = stats[label, :4]
        if label in touched or not (0.45 * height <= h <= 1.6 * height) or w > 40 * height:
            continue
        out.append(_box_of(x, y - pad, x + w, y + h + pad))
        margins.append(_RECOVERED_MARGIN * height)
    return np.asarray(out, np.float32).reshape(-1, 4, 2), np.asarray(margins)


def _ink_box(ink: np.ndarray, quad: np.ndarray) -> tuple[int, int, int, int] | None:
    """Tight box (x0, y0, x1, y1) of the ink inside the quad's bounding rectangle."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    ys, xs = np.nonzero(ink[max(y0, 0) : y1, max(x0, 0) : x1])
    if xs.size == 0:
        return None
    return (
        max(x0, 0) + xs.min(),
        max(y0, 0) + ys.min(),
        max(x0, 0) + xs.max() + 1,
        max(y0, 0) + ys.max() + 1,
    )


def _recognize(array: np.ndarray, quads: np.ndarray, scale: float) -> list[OcrLine]:
    """Recognise the detected boxes (refined by :func:`_short_marks`), each crop widened
    along its baseline by its margin but never past half the gap to a row neighbour."""
    ink = _ink(array)
    height = _text_height(quads)
    boxes, margins = _short_marks(ink, quads, height)
    quads = _widen(boxes, margins, array.shape)

    ocr = engine()
    bgr = cv2.cvtColor(array, cv2.COLOR_GRAY2BGR)
    results, _ = ocr.text_rec([_crop(bgr, quad) for quad in quads])
    results = list(results)
    # The recogniser's reading of a lone mark swings with the crop ("}" reads as "}",
    # "）" or "1" depending on the margins): read short marks from a second, tighter crop
    # too and keep the more confident reading.
    short = np.flatnonzero(margins > _DETECTED_MARGIN * height)
    if short.size:
        tighter, half = boxes.copy(), margins.copy()
        tighter[short, 0:2, 1] += 0.2 * height
        tighter[short, 2:4, 1] -= 0.2 * height
        half[short] /= 2
        tighter = _widen(tighter, half, array.shape)[short]
        again, _ = ocr.text_rec([_crop(bgr, quad) for quad in tighter])
        for i, result in zip(short, again, strict=True):
            if result[1] > results[i][1]:
                results[i] = result
    lines = []
    for quad, (text, score, *_) in zip(quads, results, strict=True):
        text = text.strip()
        if not text or float(score) < ocr.text_score:
            continue
        box = _ink_box(ink, quad) or (*quad.min(axis=0), *quad.max(axis=0))
        glyphs = _glyph_centres(ink, box) / scale
        x0, y0, x1, y1 = (float(v) / scale for v in box)
        lines.append(OcrLine(text, (x0, y0, x1, y1), float(score), tuple(glyphs.tolist())))
    return lines


# Boxes read as they are and turned a half turn to tell which way up a patch is: the widest
# ones (the most characters), each cut to HALF_TURN_CLIP text heights. The recogniser scales
# every crop to 48 px high and pads it to at least 320 px wide, so a crop up to ~7 heights
# wide costs the least, and a whole 700 px line about six times that.
HALF_TURN_BOXES = 6
HALF_TURN_CLIP = 8.0
# Readings are weighed by len(text) * score ** HALF_TURN_POWER. Upside-down code keeps many
# characters that look alike turned ("{}", "()", "=", ";"): its crops read at 0.5-0.85
# confidence, upright ones at 0.9-1.0, so plain len * score told them apart by only ~30%.
HALF_TURN_POWER = 4


def half_turn_scores(image: Image.Image) -> tuple[float, float]:
    """How confidently the text of ``image`` reads as it is, and turned a half turn.

    A cheap stand-in for reading the image both ways up: one detection, then the
    :data:`HALF_TURN_BOXES` widest boxes, cut short, recognised as cropped and turned
    180 degrees (the detector finds the same lines either way up). Readings the engine
    would drop (score under its ``text_score``) count nothing. Text lines that run up the
    image make tall boxes or boxes of single glyphs, which are not read: scores of zero
    say "turn a quarter" (or "no text").
    """
    array = prepare(image)
    quads = _detect(array)
    if len(quads) == 0:
        return 0.0, 0.0
    widths = quads[:, :, 0].max(axis=1) - quads[:, :, 0].min(axis=1)
    heights = quads[:, :, 1].max(axis=1) - quads[:, :, 1].min(axis=1)
    # Lines running up the image are boxed glyph by glyph (tall or square boxes): not worth
    # reading, and they would read as nothing much.
    wide = np.flatnonzero(widths >= 2 * heights)
    pick = wide[np.argsort(-widths[wide], kind="stable")[:HALF_TURN_BOXES]]
    if pick.size == 0:
        return 0.0, 0.0
    bgr = cv2.cvtColor(array, cv2.COLOR_GRAY2BGR)
    crops = [_crop(bgr, quads[i]) for i in pick]
    crops = [c[:, : max(1, int(HALF_TURN_CLIP * c.shape[0]))] for c in crops]
    ocr = engine()
    results, _ = ocr.text_rec(crops + [np.ascontiguousarray(np.rot90(c, 2)) for c in crops])
    totals = [0.0, 0.0]
    for j, (text, score, *_) in enumerate(results):
        if float(score) >= ocr.text_score:
            totals[j >= len(crops)] += len(text.strip()) * float(score) ** HALF_TURN_POWER
    return totals[0], totals[1]


def _glyph_centres(ink: np.ndarray, box: tuple[float, ...]) -> np.ndarray:
    """x centres of the connected ink blobs inside ``box``, sorted; specks skipped."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    window = ink[max(y0, 0) : y1, max(x0, 0) : x1].astype(np.uint8)
    if window.size == 0:
        return np.zeros(0)
    count, _, stats, _ = cv2.connectedComponentsWithStats(window, connectivity=8)
    keep = stats[1:count, cv2.CC_STAT_AREA] >= 3
    return np.sort(
        stats[1:count, cv2.CC_STAT_LEFT][keep]
        + stats[1:count, cv2.CC_STAT_WIDTH][keep] / 2
        + max(x0, 0)
    )


def _text_height(quads: np.ndarray) -> float:
    return float(np.median(quads[:, :, 1].max(axis=1) - quads[:, :, 1].min(axis=1)))


Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class _Reading:
    lines: list[OcrLine]
    # Cells of a ruled table, (x0, y0, x1, y1) in input pixels; empty when no grid.
    cells: list[Box] = field(default_factory=list)


def _read(image: Image.Image, binarize: bool = True) -> _Reading:
    """Detect; if the text is small, upscale and detect again; erase table rules (keeping
    the cells they bound); then recognise."""
    array = prepare(image, binarize=binarize)
    quads = _detect(array)
    if len(quads) == 0:
        return _Reading([])
    scale = _upscale(_text_height(quads), array.shape)
    if scale != 1.0:
        array = prepare(image, scale, binarize)
        quads = _detect(array)
        if len(quads) == 0:
            return _Reading([])
    height = _text_height(quads)
    horizontal, vertical = _rules(array, height)
    cells: list[Box] = []
    if horizontal.any() and vertical.any():
        cells = [
            (x0 / scale, y0 / scale, x1 / scale, y1 / scale)
            for x0, y0, x1, y1 in _cells(horizontal | vertical, height)
        ]
    not_text = cv2.dilate(horizontal | vertical, np.ones((3, 3), np.uint8)) | _blobs(array, height)
    if not_text.any():
        array = np.where(not_text > 0, np.uint8(255), array)
        quads = _detect(array)
        if len(quads) == 0:
            return _Reading([], cells)
    return _Reading(_recognize(array, quads, scale), cells)


# Text whose detected boxes are shorter than MIN_BOX_HEIGHT px is upscaled so they are
# UPSCALE_TO px tall (at most 2x, and not past 2000 px, where RapidOCR's detector would
# shrink it again): at 16 px monospace the recogniser drops spaces and misreads 1/l, at
# 1.5x it does not. Above 28 px the gain did not pay for the second detection pass.
MIN_BOX_HEIGHT = 28.0
UPSCALE_TO = 32.0
MAX_UPSCALE = 2.0
_MAX_SIDE = 2000


def _upscale(height: float, shape: tuple[int, ...]) -> float:
    if height >= MIN_BOX_HEIGHT:
        return 1.0
    scale = min(MAX_UPSCALE, UPSCALE_TO / max(height, 1.0), _MAX_SIDE / max(shape))
    return scale if scale > 1.05 else 1.0


def _rules(array: np.ndarray, height: float) -> tuple[np.ndarray, np.ndarray]:
    """Masks of straight horizontal and vertical lines: longer than three text heights,
    thinner than a third of one.

    Table borders touch the text of their cells: the recogniser reads a border next to
    "Qty" as "L" and the detector merges a lone "7" with its cell's border. No glyph
    stroke is three text heights long, so erasing these lines leaves the text; the
    thickness limit keeps the edge of a dark area (see :func:`_blobs`) from counting as
    a table border.
    """
    ink = _ink(array).astype(np.uint8)
    length = max(int(3 * height), 8)
    width = max(int(height / 3), 2)

    def lines(along: tuple[int, int], across: tuple[int, int]) -> np.ndarray:
        long = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones(along, np.uint8))
        thick = cv2.morphologyEx(long, cv2.MORPH_OPEN, np.ones(across, np.uint8))
        return long * (thick == 0)

    return lines((1, length), (width, 1)), lines((length, 1), (1, width))


def _blobs(array: np.ndarray, height: float) -> np.ndarray:
    """Mask of dark connected areas taller and wider than three text heights: not text.

    In an RGB composite the table top next to a piece binarises to a dark band (the
    flat-field's background window still sees the bright paper there); its jagged edge
    would be read as a column of "1"s. Glyphs, even of a heading twice the body size,
    are smaller; a table's ruling is such an area too, and is erased anyway.
    """
    ink = _ink(array).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    big = (stats[:, cv2.CC_STAT_WIDTH] > 3 * height) & (stats[:, cv2.CC_STAT_HEIGHT] > 3 * height)
    big[0] = False
    return big[labels].astype(np.uint8)


def _cells(rules: np.ndarray, height: float) -> list[tuple[int, int, int, int]]:
    """Boxes of the regions enclosed by ruling lines, within the lines' bounding box.

    The rules are thickened by a pixel first, so that one drawn with a one-pixel break
    still encloses; regions under a text height on either side are the gaps between
    double rules, not cells.
    """
    ys, xs = np.nonzero(rules)
    x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
    grid = cv2.dilate(rules[y0:y1, x0:x1], np.ones((3, 3), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(
        (grid == 0).astype(np.uint8), connectivity=4
    )
    return [
        (x0 + x, y0 + y, x0 + x + w, y0 + y + h)
        for x, y, w, h, _ in stats[1:count]
        if w >= height and h >= height
    ]


def read_lines(image: Image.Image, *, binarize: bool = True) -> list[OcrLine]:
    """Recognised text boxes in reading order: rows top to bottom, left to right in a row.

    ``binarize=False`` reads the flat-fielded grey instead of a black-and-white image: for
    a page drawn from a photograph, whose thin grey serif strokes one threshold for the
    whole page (set by a heavy heading's black) breaks apart (the ShredBench authors'
    composites, text NED 0.047/0.028/0.009 binarized, 0.031/0.021/0.010 grey; a render of
    their scene with a two-line title 0.43 -> 0.39, whose remaining errors are missing scraps)."""
    return [box for row in group_rows(_read(image, binarize).lines) for box in row]


def _char_width(rows: list[list[OcrLine]]) -> float | None:
    """Width of one character column of a monospaced font, in pixels.

    In a monospaced font every glyph sits centred in a cell of the same width, so the
    centres of the ink blobs on the whole piece lie on one grid of pitch ``w`` (indents
    are whole cells too). First guess: the median distance between neighbouring blob
    centres inside a box (most neighbours are adjacent letters; blobs of one glyph, like
    the dot of an "i", are closer than a third of a text height and skipped). Then the
    pitch within +-15% of the guess that best aligns all centres, i.e. the maximum of
    ``|sum_k exp(2 pi i x_k / w)|`` (a Rayleigh periodogram): it uses every glyph on the
    piece, so over 80 columns it resolves ``w`` to about 1/300.

    Independent of the recognised text (which drops spaces), so a misread line does not
    skew the indentation of the others. None when too little was read.
    """
    boxes = [b for row in rows for b in row if len(b.glyphs) >= 2]
    if not boxes:
        return None
    height = statistics.median(b.height for b in boxes)
    steps = np.concatenate([np.diff(b.glyphs) for b in boxes])
    steps = steps[steps > height / 3]
    if steps.size == 0:
        return None
    guess = float(np.median(steps))
    centres = np.concatenate([np.asarray(b.glyphs) for b in boxes])
    if centres.size < 8:
        return guess
    candidates = np.linspace(0.85 * guess, 1.15 * guess, 601)
    phases = np.exp(2j * np.pi * centres[None, :] / candidates[:, None])
    return float(candidates[np.argmax(np.abs(phases.sum(axis=1)))])


def _indents(rows: list[list[OcrLine]]) -> list[int]:
    """Leading spaces of each row, by :func:`.rows.indents`: a row starts at its first
    glyph's centre (its box's left edge when no glyph was found)."""
    starts = [row[0].glyphs[0] if row[0].glyphs else row[0].box[0] for row in rows]
    return indents(starts, _char_width(rows))


def _table_rows(lines: list[OcrLine], cells: list[Box]) -> list[str]:
    """Rows of a ruled table in :func:`shredfold.tables.table_text`'s reading order.

    Each text box belongs to the cell holding its centre; a cell's text is its boxes in
    reading order joined by spaces (a wrapped cell becomes one line). Cells whose top
    edges are level form a row, left to right, joined by " | " (empty cells included,
    all-empty rows dropped); a merged cell belongs to the row where it starts. Text
    outside the grid comes before or after it, by position.
    """
    held: list[list[OcrLine]] = [[] for _ in cells]
    above: list[OcrLine] = []
    below: list[OcrLine] = []
    top = min(cell[1] for cell in cells)
    for line in lines:
        cx, cy = (line.box[0] + line.box[2]) / 2, (line.box[1] + line.box[3]) / 2
        for i, (x0, y0, x1, y1) in enumerate(cells):
            if x0 <= cx < x1 and y0 <= cy < y1:
                held[i].append(line)
                break
        else:
            (above if cy < top else below).append(line)

    level = 0.5 * statistics.median(line.height for line in lines)
    rows: list[list[int]] = []
    for i in sorted(range(len(cells)), key=lambda i: cells[i][1]):
        if rows and cells[i][1] - cells[rows[-1][0]][1] <= level:
            rows[-1].append(i)
        else:
            rows.append([i])

    def text(boxes: list[OcrLine]) -> str:
        return " ".join(box.text for row in group_rows(boxes) for box in row)

    out = [" ".join(box.text for box in row) for row in group_rows(above)]
    for row in rows:
        texts = [text(held[i]) for i in sorted(row, key=lambda i: cells[i][0])]
        if any(texts):
            out.append(" | ".join(texts))
    out += [" ".join(box.text for box in row) for row in group_rows(below)]
    return out


def read_text(image: Image.Image, kind: Kind = "prose", *, binarize: bool = True) -> str:
    """The text on ``image``, one line per text row.

    * ``prose``: the boxes of a row joined by one space; rows joined by newlines.
    * ``code``: as prose, and each row starts with as many spaces as its first glyph is
      columns to the right of the first glyph of the least indented row on the image
      (column width from :func:`_char_width`, measured on the ink, not the text). The
      indentation is therefore relative to the least indented visible line: on a piece
      cut from the middle of a function that is not column 0 of the file.
    * ``table``: for a ruled table, one line per table row with cells joined by
      ``" | "``, in the order of :func:`shredfold.tables.table_text` (see
      :func:`_table_rows`). Without both horizontal and vertical rules, boxes in a text
      row are joined by ``" | "`` when the gap between them is wider than the row's
      height (a column gap), else by a space (a detector split inside a cell).
    """
    reading = _read(image, binarize)
    if not reading.lines:
        return ""
    if kind == "table" and reading.cells:
        return "\n".join(_table_rows(reading.lines, reading.cells))
    rows = group_rows(reading.lines)

    def join(row: list[OcrLine]) -> str:
        if kind != "table":
            return " ".join(b.text for b in row)
        parts = [row[0].text]
        for prev, box in zip(row, row[1:], strict=False):
            gap = box.box[0] - prev.box[2]
            parts.append((" | " if gap > max(prev.height, box.height) else " ") + box.text)
        return "".join(parts)

    if kind != "code":
        return "\n".join(join(row) for row in rows)
    return "\n".join(" " * n + join(row) for n, row in zip(_indents(rows), rows, strict=True))
