"""The images of a request as a built-in model reads them: bounded in pixels and memory.

The one place where built-in models decode what they are sent (``ocr-islands`` and
``jigsaw-ocr``; the oracle and the origami agents read no image): an API endpoint, a served
model or a hostile client may send any PNG, and a transparent 9400 × 9400 one cost 2.9 GB
and 37 s before it was bounded here.

- Each image's size is read from its header, before anything is decoded: one over
  :data:`MAX_IMAGE_PIXELS`, or a request over :data:`MAX_REQUEST_PIXELS` in all, is refused
  (a :class:`~shredfold.calls.ModelCallError` naming the image and the bound: the item fails,
  ``shredfold serve`` answers 422).
- A request of more than :data:`MAX_PIXELS` in all is reduced to that, every image by the
  same factor (their relative scale is what a jigsaw solver matches), one image decoded at a
  time. Requests within it (every sample the pipeline makes) are read as they are.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from shredfold.calls import ModelCallError

if TYPE_CHECKING:
    import numpy as np

MAX_IMAGE_PIXELS = 64_000_000  # as an outside sample's image: a 64-megapixel photograph
MAX_REQUEST_PIXELS = 256_000_000
MAX_PIXELS = 40_000_000  # what a model reads in all (the segmenter's own bound for a photo)


def image_sizes(images: Sequence[bytes], who: str) -> list[tuple[int, int]]:
    """Each image's (width, height) from its header; refused past the bounds."""
    from PIL import Image

    sizes = []
    for k, data in enumerate(images, 1):
        try:
            with Image.open(io.BytesIO(data)) as im:
                w, h = im.size
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise ModelCallError(f"{who}: image {k} is not a readable image ({exc})") from None
        if w * h > MAX_IMAGE_PIXELS:
            raise ModelCallError(
                f"{who}: image {k} is {w}x{h} = {w * h:,} pixels, over the {MAX_IMAGE_PIXELS:,}-pixel "
                "bound of the built-in models; refused before decoding"
            )
        sizes.append((w, h))
    total = sum(w * h for w, h in sizes)
    if total > MAX_REQUEST_PIXELS:
        raise ModelCallError(
            f"{who}: the request's {len(sizes)} images hold {total:,} pixels, over the "
            f"{MAX_REQUEST_PIXELS:,}-pixel bound of the built-in models; refused before decoding"
        )
    return sizes


def bounded(images: Sequence[bytes], who: str, max_pixels: int = MAX_PIXELS) -> list[bytes]:
    """The images, checked, and reduced together to ``max_pixels`` in all when they hold
    more (each re-encoded as PNG, alpha kept); otherwise the very bytes given."""
    from PIL import Image

    sizes = image_sizes(images, who)
    total = sum(w * h for w, h in sizes)
    if total <= max_pixels:
        return list(images)
    f = math.sqrt(max_pixels / total)
    out = []
    for data, (w, h) in zip(images, sizes, strict=True):
        with Image.open(io.BytesIO(data)) as im:
            im.draft(None, (max(1, int(w * f)), max(1, int(h * f))))  # JPEG: decode at a fraction
            keep = "RGBA" if im.mode in ("RGBA", "LA", "PA", "P") or "transparency" in im.info else "RGB"
            small = im.convert(keep).resize((max(1, int(w * f)), max(1, int(h * f))), Image.Resampling.BOX)
        buf = io.BytesIO()
        small.save(buf, format="PNG", compress_level=1)
        out.append(buf.getvalue())
    return out


def request_scraps(images: Sequence[bytes], who: str,
                   ) -> tuple[list[np.ndarray], list[int | None]]:
    """The scraps a request shows, read within the bounds above, and for each the image it
    was cut out of (None: sent cut out), as :func:`shredfold.shred.solvers.jigsaw.segment.request_scraps`
    gives them: at the size shown (a solver enlarges them as it reads them best)."""
    from shredfold.shred.solvers.jigsaw.segment import request_scraps as cut

    try:
        return cut(bounded(images, who))
    except ValueError as exc:
        raise ModelCallError(f"{who}: {exc}") from exc
