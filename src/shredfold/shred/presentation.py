"""How a sample is shown under the paper's protocol: the table-top photograph as JPEG
(quality 95), its longest side scaled to 2048 px — as the ShredBench authors sent it.

The same bytes for the same composite on every machine with the pinned Pillow: fixed
resampling filter, quality, chroma subsampling, no metadata.
"""

from __future__ import annotations

import io

PAPER_LONGEST_SIDE = 2048
PAPER_JPEG = {"format": "JPEG", "quality": 95, "subsampling": 2, "optimize": False, "progressive": False}


def paper_image(composite: bytes) -> bytes:
    """The composite as the paper's models saw it, from the stored one (a JPEG of these
    options at full size, :mod:`.formats`; any image Pillow reads)."""
    from PIL import Image

    with Image.open(io.BytesIO(composite)) as img:
        rgb = img.convert("RGB")
    w, h = rgb.size
    scale = PAPER_LONGEST_SIDE / max(w, h)
    if scale != 1:
        rgb = rgb.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    rgb.save(buf, **PAPER_JPEG)
    return buf.getvalue()
