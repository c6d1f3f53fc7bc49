"""How a sample's images are stored: their file names and encoders, in one place.

Grain, sensor noise and lighting make lossless PNG of the synthesised images large (an
N = 16 flat sample was 18 MB). Stored instead:

- the composite as JPEG with the paper's 4:2:0 chroma at quality 90 (the paper sent 95),
  full size, entropy coding optimised (fitted Huffman tables, progressive scans: bytes,
  not pixels). A model is sent it scaled: to its ``images.max_side`` (1600 px by default,
  1.3-3x smaller than a composite) or, in the paper's protocol, to 2048 px as JPEG 95
  (:func:`~.presentation.paper_image`). Scaled so, a quality 90 and a quality 95 source
  differ by 0.4 and 0.6 grey levels on average (a code page's composite; JPEG 95 itself is
  1 level off the pixels it was given), and the composite is a third smaller. Only the
  built-in OCR models read it at full size (their NED was measured before and after,
  ``bench/sample_size.py``);
- each piece as a 256-colour palette PNG with transparency (:func:`piece_png`): a scrap is
  paper tones and ink, a black shadow of varying opacity and a soft outline between, which
  a palette holds; the per-pixel noise is what it drops (10x fewer bytes). Fully
  transparent and fully opaque pixels stay exactly so, so a scrap's outline is unchanged.

The intact page is not stored (it was 15-20% of a sample and nothing read it): the pieces
put back by ``hidden.json`` are the page, and ``truth.txt`` / ``source.txt`` its text.

The encoders' options enter the sample key (:data:`ENCODING`), so a change gives new keys
rather than different bytes under old ones. No ancillary chunks (no time stamp): equal
keys give equal bytes. Light on import: Pillow is imported by the encoders.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from shredfold.shred.presentation import PAPER_JPEG

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COMPOSITE_FILE",
    "ENCODING",
    "LOSSLESS_PNG",
    "composite_jpeg",
    "encode_many",
    "lossless_png",
    "piece_names",
    "piece_png",
]

COMPOSITE_FILE = "composite.jpg"
COMPOSITE_JPEG: dict[str, Any] = {**PAPER_JPEG, "quality": 90, "optimize": True, "progressive": True}
# zlib level 9 costs little on palette images (1 byte a pixel, long runs).
PIECE_PNG: dict[str, Any] = {
    "colors": 256, "method": "fastoctree", "dither": "none", "compress_level": 9,
    "shadow_levels": 48, "outline_levels": 16, "outline_colours": 4,
}  # fmt: skip
# Images given by a user (outside samples' pieces) are kept exactly.
LOSSLESS_PNG: dict[str, Any] = {"compress_level": 1, "optimize": False}
ENCODING: dict[str, Any] = {"composite": COMPOSITE_JPEG, "pieces": PIECE_PNG}

THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def piece_names(n: int) -> list[str]:
    digits = max(2, len(str(n - 1)))
    return [f"pieces/{k:0{digits}d}.png" for k in range(n)]


def _save(img: Any, **options: Any) -> bytes:
    import io

    buf = io.BytesIO()
    img.save(buf, **options)
    return buf.getvalue()


def _quantise(rgb: np.ndarray, colours: int) -> tuple[np.ndarray, np.ndarray]:
    """N RGB pixels (N x 3 uint8) on at most ``colours`` colours: (palette K x 3, label per
    pixel), by Pillow's quantiser of :data:`PIECE_PNG`."""
    import numpy as np
    from PIL import Image

    q = Image.fromarray(np.ascontiguousarray(rgb.reshape(1, -1, 3))).quantize(
        colours, method=Image.Quantize[PIECE_PNG["method"].upper()], dither=Image.Dither.NONE
    )
    labels = np.asarray(q, dtype=np.int64).reshape(-1)
    palette = np.asarray(q.getpalette()[: 3 * colours], dtype=np.uint8).reshape(-1, 3)
    used, labels = np.unique(labels, return_inverse=True)
    return palette[used], labels


def _levels(values: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (uint8) snapped to at most ``count`` levels: (levels, level per value)."""
    import numpy as np

    distinct, inverse = np.unique(values, return_inverse=True)
    if len(distinct) <= count:
        return distinct, inverse
    lo, hi = int(distinct[0]), int(distinct[-1])
    edges = np.linspace(lo, hi + 1, count + 1)
    bins = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, count - 1)
    centres = np.rint((edges[:-1] + edges[1:] - 1) / 2).astype(np.uint8)
    used, inverse = np.unique(bins, return_inverse=True)
    return centres[used], inverse


def piece_png(rgba: np.ndarray) -> bytes:
    """A scrap (HxWx4 uint8, straight alpha) as a palette PNG with transparency.

    The palette is laid out for what a scrap is: entry 0 fully transparent; the shadow
    (black, 0 < alpha < 255) on up to ``shadow_levels`` opacities; the soft outline (paper
    over its shadow) on ``outline_colours`` colours × ``outline_levels`` opacities; the
    opaque paper and ink on every entry left, by Pillow's fast octree (coarse on the
    paper's noise, which is what it saves)."""
    import numpy as np
    from PIL import Image

    o = PIECE_PNG
    rgb, alpha = rgba[..., :3].reshape(-1, 3), rgba[..., 3].reshape(-1)
    black = rgb.max(axis=1) == 0
    opaque = alpha == 255
    shadow = ~opaque & (alpha > 0) & black
    outline = ~opaque & (alpha > 0) & ~black
    index = np.zeros(alpha.shape, dtype=np.uint8)
    colours: list[np.ndarray] = [np.zeros((1, 3), np.uint8)]
    alphas: list[np.ndarray] = [np.zeros(1, np.uint8)]

    def add(where: np.ndarray, labels: np.ndarray, rgb_: np.ndarray, alpha_: np.ndarray) -> None:
        index[where] = sum(len(a) for a in alphas) + labels
        colours.append(rgb_)
        alphas.append(alpha_)

    if shadow.any():
        levels, labels = _levels(alpha[shadow], o["shadow_levels"])
        add(shadow, labels, np.zeros((len(levels), 3), np.uint8), levels)
    if outline.any():
        tones, tone = _quantise(rgb[outline], o["outline_colours"])
        levels, level = _levels(alpha[outline], o["outline_levels"])
        pairs, labels = np.unique(tone * len(levels) + level, return_inverse=True)
        add(outline, labels, tones[pairs // len(levels)], levels[pairs % len(levels)])
    if opaque.any():
        left = o["colors"] - sum(len(a) for a in alphas)
        palette, labels = _quantise(rgb[opaque], left)
        add(opaque, labels, palette, np.full(len(palette), 255, np.uint8))
    img = Image.fromarray(index.reshape(rgba.shape[:2]), mode="P")
    img.putpalette(np.concatenate(colours).reshape(-1).tolist())
    return _save(img, format="PNG", transparency=np.concatenate(alphas).tobytes(),
                 compress_level=o["compress_level"], optimize=False)  # fmt: skip


def composite_jpeg(rgb: np.ndarray) -> bytes:
    from PIL import Image

    return _save(Image.fromarray(rgb).convert("RGB"), **COMPOSITE_JPEG)


def lossless_png(pixels: np.ndarray) -> bytes:
    from PIL import Image

    return _save(Image.fromarray(pixels), format="PNG", **LOSSLESS_PNG)


def encode_many(jobs: Sequence[tuple[Callable[[np.ndarray], bytes], np.ndarray]]) -> list[bytes]:
    """Encode in threads: Pillow's encoders release the GIL, and encoding is much of a
    sample's time. The bytes do not depend on the thread count."""
    workers = min(len(jobs), THREADS)
    if workers <= 1:
        return [f(a) for f, a in jobs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: job[0](job[1]), jobs))
