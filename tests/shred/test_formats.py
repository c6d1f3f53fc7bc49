"""How sample images are stored: a palette piece keeps its outline and shadow, the
composite a JPEG that looks like the paper's once scaled, all byte-stable."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from shredfold.shred.formats import (
    COMPOSITE_FILE,
    composite_jpeg,
    encode_many,
    piece_names,
    piece_png,
)
from shredfold.shred.presentation import PAPER_JPEG, paper_image


def scrap(seed: int = 0) -> np.ndarray:
    """A noisy paper square with dark text strokes, a soft rim and a shadow ramp around it."""
    rng = np.random.default_rng(seed)
    h = w = 120
    img = np.zeros((h, w, 4), np.uint8)
    yy, xx = np.mgrid[:h, :w]
    d = np.maximum(np.abs(yy - 60), np.abs(xx - 60))  # square rings around the centre
    paper = d < 40
    img[paper, :3] = np.clip(rng.normal((240, 236, 226), 2.0, (int(paper.sum()), 3)), 0, 255)
    img[paper & (yy % 12 < 3) & (xx % 7 < 4), :3] = (20, 20, 24)  # ink
    img[paper, 3] = 255
    rim = d == 40
    img[rim, :3], img[rim, 3] = (200, 196, 190), 170  # paper's soft edge over its shadow
    shadow = (d > 40) & (d < 52)
    img[shadow, 3] = (115 * (52 - d[shadow]) / 12).astype(np.uint8)  # black, fading out
    return img


def decode(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGBA")).astype(int)


def test_a_piece_keeps_its_outline_and_shadow_exactly_where_they_were() -> None:
    src = scrap()
    data = piece_png(src)
    with Image.open(io.BytesIO(data)) as im:
        assert (im.format, im.mode) == ("PNG", "P") and "transparency" in im.info
    back = decode(data)
    a, b = src[..., 3].astype(int), back[..., 3]
    assert ((a == 0) == (b == 0)).all() and ((a == 255) == (b == 255)).all()
    shadow = (a > 0) & (a < 255) & (src[..., :3].max(axis=2) == 0)
    assert (back[shadow, :3] == 0).all() and np.abs(a[shadow] - b[shadow]).max() <= 2
    rim = (a > 0) & (a < 255) & ~shadow
    assert np.abs(a[rim] - b[rim]).max() <= 8
    paper = a == 255
    ink = paper & (src[..., 0] < 60)
    assert np.abs(back[ink, :3] - src[ink, :3]).max() <= 12  # text stays text
    assert np.abs(back[paper, :3] - src[paper, :3]).mean() < 4.0  # the noise is what goes


def test_fewer_bytes_than_lossless_and_the_same_bytes_twice() -> None:
    src = scrap(1)
    buf = io.BytesIO()
    Image.fromarray(src).save(buf, format="PNG", compress_level=9)
    assert len(piece_png(src)) < len(buf.getvalue()) / 2
    assert piece_png(src) == piece_png(src.copy())
    rgb = np.ascontiguousarray(src[..., :3])
    assert encode_many([(piece_png, src), (composite_jpeg, rgb)]) == [piece_png(src), composite_jpeg(rgb)]


def test_a_fully_opaque_or_fully_transparent_piece() -> None:
    opaque = scrap()[30:90, 30:90]
    assert (decode(piece_png(opaque))[..., 3] == 255).all()
    empty = np.zeros((9, 7, 4), np.uint8)
    assert (decode(piece_png(empty)) == 0).all()


def test_the_composite_is_a_jpeg_and_the_papers_rendition_is_derived_from_it() -> None:
    rgb = np.ascontiguousarray(scrap()[..., :3])
    data = composite_jpeg(rgb)
    assert COMPOSITE_FILE.endswith(".jpg") and data[:3] == b"\xff\xd8\xff"
    with Image.open(io.BytesIO(data)) as im:
        assert (im.format, im.mode, im.size) == ("JPEG", "RGB", (120, 120))
        assert PAPER_JPEG["quality"] == 95 and "exif" not in im.info
    sent = paper_image(data)
    with Image.open(io.BytesIO(sent)) as im:
        assert im.format == "JPEG" and max(im.size) == 2048
    assert paper_image(data) == sent


def test_the_composite_is_smaller_than_the_papers_jpeg_and_looks_the_same_scaled() -> None:
    rgb = np.ascontiguousarray(scrap(2)[..., :3])
    rgb = np.ascontiguousarray(np.tile(rgb, (20, 20, 1)))  # 2400 px: scaled down when sent
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, **PAPER_JPEG)
    paper, ours = buf.getvalue(), composite_jpeg(rgb)
    assert len(ours) < 0.8 * len(paper)
    assert np.abs(decode(ours)[..., :3] - rgb).mean() < 2.0
    # what a model of the paper's protocol is sent, from either source
    sent = decode(paper_image(ours)) - decode(paper_image(paper))
    assert np.abs(sent).mean() < 1.5  # white noise of 2 levels here; a page has less


def test_piece_names_sort_in_presented_order() -> None:
    assert piece_names(3) == ["pieces/00.png", "pieces/01.png", "pieces/02.png"]
    assert piece_names(120)[:2] == ["pieces/000.png", "pieces/001.png"]
