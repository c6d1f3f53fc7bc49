"""Table-top photographs with their answer key, built by the benchmark's own sample builder.

A sample folder holds the scraps (``pieces/NN.png``, shadow included) and where each lies
on the table (``hidden.json``: ``placement``), so the same scraps can be laid on another
table top — a wood texture, say — exactly as the compositor lays them. The true masks come
from ``hidden.json``'s polygons and ``composite_matrix``.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from shredfold.corpus.document import Document
from shredfold.shred.formats import COMPOSITE_FILE
from shredfold.shred.sample import load_hidden, make_sample
from shredfold.shred.solvers.jigsaw.scoring import composite_masks
from shredfold.shred.synth import blend
from shredfold.shred.texture import low_frequency
from shredfold.spec import RenderSettings, SynthesisSettings

SMALL = RenderSettings(width=640, margin=40, prose_font_size=20, code_font_size=16,
                       table_font_size=16)

NEWS = """# Harbour ferry returns after repairs

The harbour ferry returned to service on Monday after six weeks of repairs to its hull,
the city transport office said. Morning crossings will run every twenty minutes until the
summer timetable begins.

Commuters who switched to the bridge bus during the repairs said the ferry was faster and
calmer. The office plans a second boat for the evening rush next year if the budget allows.
"""

TABLE = """<table>
<thead><tr><th>Station</th><th>Arrives</th><th>Departs</th><th>Platform</th></tr></thead>
<tbody>
<tr><td>Harbour</td><td>06:58</td><td>07:02</td><td>2</td></tr>
<tr><td>Old Town</td><td>07:11</td><td>07:12</td><td>1</td></tr>
<tr><td>University</td><td>07:20</td><td>07:22</td><td>4</td></tr>
<tr><td>Airport</td><td>07:41</td><td>-</td><td>3</td></tr>
</tbody></table>"""


@dataclass(frozen=True)
class Photo:
    rgb: np.ndarray  # what a model sees (decoded)
    data: bytes  # the encoded image as sent
    masks: list[np.ndarray]  # true mask of every presented scrap, in this photo's pixels
    scale: float  # of this photo against the stored composite


def build(root: Path, name: str, text: str, domain: str, n: int,
          synth: SynthesisSettings | None = None, seed: int = 0) -> Path:
    """A sample folder under ``root`` (made once; later calls find it)."""
    folder = root / name
    if not (folder / "hidden.json").is_file():
        doc = Document(doc_id=name, domain=domain, text=text)  # type: ignore[arg-type]
        make_sample(doc, n, SMALL, synth or SynthesisSettings(), seed, folder)
    return folder


def wood(width: int, height: int, seed: int = 0) -> np.ndarray:
    """A wood-like table top: warped bands of early and late wood, thin dark grain lines
    and fibres along the grain, a little noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    warp = 30.0 * low_frequency(width, height, 400.0, rng)
    warp += 4.0 * low_frequency(width, height, 50.0, rng)
    phase = (y + 0.05 * x + warp) / 9.0
    bands = 0.5 + 0.5 * np.sin(phase + 0.8 * np.sin(phase * 0.31))
    lines = np.exp(-(np.sin(phase * 1.7) ** 2) / 0.015)  # thin dark late-wood lines
    fibre = rng.standard_normal((max(1, height // 2), max(1, width // 24))).astype(np.float32)
    fibre = cv2.resize(fibre, (width, height), interpolation=cv2.INTER_LINEAR)
    light = np.array([182.0, 130.0, 84.0], np.float32)
    dark = np.array([112.0, 72.0, 42.0], np.float32)
    t = np.clip(0.8 * bands - 0.55 * lines + 0.12 * fibre + 0.1, 0.0, 1.0)[..., None]
    out = dark + (light - dark) * t
    out += 3.0 * rng.standard_normal((height, width, 1)).astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def recompose(folder: Path, table: np.ndarray) -> bytes:
    """The sample's scraps laid on ``table`` (HxWx3, the composite's size) where the
    compositor laid them, as PNG."""
    hidden = load_hidden(folder)
    canvas = np.ascontiguousarray(table.copy())
    for p in hidden["presented"]:
        scrap = np.asarray(Image.open(folder / p["file"]).convert("RGBA"))
        x, y = p["placement"]
        blend(canvas, scrap, int(x), int(y))
    buf = io.BytesIO()
    Image.fromarray(canvas).save(buf, format="PNG")
    return buf.getvalue()


def composite_size(folder: Path) -> tuple[int, int]:
    with Image.open(folder / COMPOSITE_FILE) as im:
        return im.size


def photo(folder: Path, *, png: bytes | None = None, jpeg: int | None = None,
          scale: float = 1.0) -> Photo:
    """The sample's composite (or ``png``, the same table laid otherwise), scaled by
    ``scale`` and JPEG-compressed at quality ``jpeg`` when given."""
    data = png if png is not None else (folder / COMPOSITE_FILE).read_bytes()
    with Image.open(io.BytesIO(data)) as im:
        rgb = im.convert("RGB")
    if scale != 1.0:
        size = (math.floor(rgb.width * scale + 0.5), math.floor(rgb.height * scale + 0.5))
        scale = size[0] / rgb.width
        rgb = rgb.resize(size, Image.Resampling.LANCZOS)
    if jpeg is not None:
        buf = io.BytesIO()
        rgb.save(buf, format="JPEG", quality=jpeg)
        data = buf.getvalue()
    elif scale != 1.0:
        buf = io.BytesIO()
        rgb.save(buf, format="PNG")
        data = buf.getvalue()
    with Image.open(io.BytesIO(data)) as im:
        pixels = np.asarray(im.convert("RGB"))
    masks = composite_masks(load_hidden(folder), pixels.shape[:2], scale)
    return Photo(pixels, data, masks, scale)


def best_ious(segments: list, masks: list[np.ndarray]) -> list[tuple[int, float]]:
    """Per true mask: the segment overlapping it most and their IoU."""
    out = []
    for m in masks:
        best = (-1, 0.0)
        for k, s in enumerate(segments):
            x0, y0, x1, y1 = s.box
            inter = int((m[y0:y1, x0:x1] & s.mask).sum())
            if inter:
                iou = inter / (int(m.sum()) + s.area - inter)
                if iou > best[1]:
                    best = (k, iou)
        out.append(best)
    return out
