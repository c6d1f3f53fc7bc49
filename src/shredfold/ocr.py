"""OCR of pages and shredded pieces with RapidOCR (PP-OCRv4 detection + recognition, ONNX).

A thin layer over :class:`rapidocr_onnxruntime.RapidOCR` that the built-in OCR model and
the jigsaw/search agents share:

* :func:`prepare` turns a piece (RGBA paper on a transparent background, maybe with a drop
  shadow, or an RGB composite on a table top) into a grey image of dark text on white;
* :func:`read_lines` returns the recognised lines in reading order, with boxes;
* :func:`read_text` joins them into text for a domain: prose lines joined by newlines,
  code with its indentation rebuilt from the boxes' x positions, table rows with cells
  separated by ``" | "``.

Engine settings, and why (measured on rendered DejaVu/Noto CJK text, see tests/test_ocr.py):

* one ONNX Runtime thread (intra- and inter-op): Snakemake runs one job per core, and the
  default (all cores per session) oversubscribes the machine;
* detection at native resolution (``det_limit_type="max"``; images are at most 2000 px on
  their long side, RapidOCR's own limit). The default upscales the *short* side to 736 px,
  which blows a 1000x190 strip up to 3900x740: 5x slower, and it splits lines into
  overlapping boxes that repeat or drop characters;
* no text-direction classifier: our pieces are upright, and the classifier turned lines
  of 20 px English text upside down (NED 0.05 -> 0.37).

The engine is created lazily, once per process (loading the models takes ~0.3 s).
"""

from __future__ import annotations

import statistics
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import cv2
import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from rapidocr_onnxruntime import RapidOCR

__all__ = ["OcrLine", "engine", "prepare", "read_lines", "read_text", "ENGINE_PARAMS"]

Kind = Literal["prose", "code", "table"]

# Everything that changes what the engine returns; part of any cache key built on OCR.
ENGINE_PARAMS: dict[str, object] = {
    "intra_op_num_threads": 1,
    "inter_op_num_threads": 1,
    "det_limit_type": "max",
    "use_cls": False,
    "rec_batch_num": 1,
}

_engine: RapidOCR | None = None
_engine_lock = threading.Lock()


def engine() -> RapidOCR:
    """The process-wide RapidOCR engine, created on first use."""
    global _engine
    with _engine_lock:
        if _engine is None:
            from rapidocr_onnxruntime import RapidOCR

            _engine = RapidOCR(**ENGINE_PARAMS)
        return _engine


@dataclass(frozen=True)
class OcrLine:
    """One recognised text box: its text, axis-aligned box (x0, y0, x1, y1) in pixels of
    the input image, and the recogniser's confidence in [0, 1]."""

    text: str
    box: tuple[float, float, float, float]
    score: float

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


def prepare(image: Image.Image, scale: float = 1.0) -> np.ndarray:
    """Binary uint8 array (H, W) of black text on white, ready for the engine.

    1. Transparent pixels become white: the RGBA piece is composited over white by its
       alpha, so the background outside the paper reads as paper, not as ink.
    2. Grayscale (ITU-R 601 luma).
    3. Flat-field: divide by a local background estimate (a 51 px grey closing, then a
       box blur). Shading across a 3D-rendered scrap, a drop shadow, grey paper and a
       table-top colour around a piece all become white, while strokes thinner than the
       window (text up to ~100 px) stay dark.
    4. Optionally resize by ``scale`` (bicubic, before thresholding so edges stay sharp).
    5. Otsu threshold, unless the image holds too little contrast to contain ink (blank
       paper would otherwise turn its noise into speckles).

    Measured on 52 rendered pieces (English 14–28 px, code 16–24 px, Chinese 18–28 px;
    white, RGBA with shadow, on a brown table top, faded+noisy, and shaded 100%→45%), mean
    NED: colour as is 0.031, grey 0.040, grey+percentile stretch 0.051, grey+Otsu 0.074
    (fails on shading: 0.33), grey+adaptive threshold 0.013, flat-field+Otsu 0.010.
    Binarising mostly helps the recogniser keep the spaces between words.
    """
    grey = _flat_field(_grey(image))
    if scale != 1.0:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    return _binarize(grey)


def _grey(image: Image.Image) -> np.ndarray:
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    return np.asarray(image.convert("L"), dtype=np.uint8)


_BACKGROUND_WINDOW = 51


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


# Text whose detected boxes are shorter than this (px) is upscaled before recognition:
# at 16 px monospace the recogniser drops spaces and misreads 1/l, at 1.5x it does not.
MIN_BOX_HEIGHT = 32.0
MAX_UPSCALE = 2.0


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


def _recognize(array: np.ndarray, quads: np.ndarray, scale: float) -> list[OcrLine]:
    ocr = engine()
    bgr = cv2.cvtColor(array, cv2.COLOR_GRAY2BGR)
    results, _ = ocr.text_rec([_crop(bgr, quad) for quad in quads])
    lines = []
    for quad, (text, score, *_) in zip(quads, results, strict=True):
        text = text.strip()
        if text and float(score) >= ocr.text_score:
            x0, y0 = quad.min(axis=0) / scale
            x1, y1 = quad.max(axis=0) / scale
            lines.append(OcrLine(text, (float(x0), float(y0), float(x1), float(y1)), float(score)))
    return lines


def _raw_lines(image: Image.Image) -> list[OcrLine]:
    array = prepare(image)
    quads = _detect(array)
    if len(quads) == 0:
        return []
    scale = 1.0
    height = float(np.median(quads[:, :, 1].max(axis=1) - quads[:, :, 1].min(axis=1)))
    if height < MIN_BOX_HEIGHT:
        scale = min(MAX_UPSCALE, MIN_BOX_HEIGHT / max(height, 1.0))
        array = prepare(image, scale)
        quads = _detect(array)
    return _recognize(array, quads, scale)


def _group_rows(boxes: list[OcrLine]) -> list[list[OcrLine]]:
    """Boxes grouped into text rows, top to bottom; each row left to right.

    A box joins a row when it overlaps the row's vertical extent by at least half of the
    smaller of the two heights (half, so that a neighbouring line's ascenders and
    descenders touching it does not merge two lines).
    """
    rows: list[tuple[float, float, list[OcrLine]]] = []
    for box in sorted(boxes, key=lambda b: (b.box[1] + b.box[3]) / 2):
        y0, y1 = box.box[1], box.box[3]
        if rows:
            r0, r1, members = rows[-1]
            overlap = min(r1, y1) - max(r0, y0)
            if overlap >= 0.5 * min(r1 - r0, y1 - y0):
                members.append(box)
                rows[-1] = (min(r0, y0), max(r1, y1), members)
                continue
        rows.append((y0, y1, [box]))
    return [sorted(members, key=lambda b: b.box[0]) for _, _, members in rows]


def read_lines(image: Image.Image) -> list[OcrLine]:
    """Recognised text boxes in reading order: rows top to bottom, left to right in a row."""
    return [box for row in _group_rows(_raw_lines(image)) for box in row]


def _columns(text: str) -> int:
    # East Asian wide characters take two columns of a monospaced font.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def char_width(boxes: list[OcrLine]) -> float | None:
    """Width of one character column (one space) in pixels, from the recognised boxes.

    For each box, box width / number of columns of its text (wide CJK characters count
    two); the median over boxes of 4 columns or more (shorter ones are dominated by the
    detector's margin). With a monospaced font every column is one space wide, so this
    is the width of a space. None when nothing usable was read.
    """
    widths = [
        (b.box[2] - b.box[0]) / _columns(b.text) for b in boxes if _columns(b.text) >= 4
    ]
    if not widths:
        widths = [(b.box[2] - b.box[0]) / _columns(b.text) for b in boxes if b.text]
    return statistics.median(widths) if widths else None


def read_text(image: Image.Image, kind: Kind = "prose") -> str:
    """The text on ``image``, one line per text row.

    * ``prose``: the boxes of a row joined by one space; rows joined by newlines.
    * ``code``: as prose, and each row starts with ``round((x0 - x0_min) / w)`` spaces,
      where ``x0_min`` is the leftmost row start on the image and ``w`` is
      :func:`char_width`. The indentation is therefore relative to the least indented
      line that is visible — on a piece cut from the middle of a function that is not
      column 0 of the file.
    * ``table``: boxes in a row are joined by ``" | "`` when the gap between them is wider
      than the row's height (a column gap), else by a space (a detector split inside a
      cell).
    """
    rows = _group_rows(_raw_lines(image))
    if not rows:
        return ""

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

    width = char_width([b for row in rows for b in row])
    left = min(row[0].box[0] for row in rows)
    out = []
    for row in rows:
        indent = round((row[0].box[0] - left) / width) if width else 0
        out.append(" " * indent + join(row))
    return "\n".join(out)
