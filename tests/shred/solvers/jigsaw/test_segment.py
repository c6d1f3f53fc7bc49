"""Segmenting a photograph of scraps on a table top: every scrap found, with its own mask.

The true masks are drawn from ``hidden.json`` (cut polygons through ``composite_matrix``);
a scrap counts as recovered when exactly one segment overlaps it with IoU >= 0.95.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from table_photos import NEWS, Photo, best_ious, build, composite_size, photo, recompose, wood

from shredfold.shred.formats import COMPOSITE_FILE
from shredfold.shred.sample import load_hidden
from shredfold.shred.solvers.jigsaw.scoring import cluster_errors, crop_truth_pose
from shredfold.shred.solvers.jigsaw.segment import Segment, scrap_images, segment
from shredfold.shred.solvers.jigsaw.solve import solve
from shredfold.spec import SynthesisSettings

IOU_MIN = 0.95


def assert_recovered(p: Photo) -> list[Segment]:
    segs = segment(p.rgb)
    assert len(segs) == len(p.masks)
    matches = best_ious(segs, p.masks)
    assert sorted(k for k, _ in matches) == list(range(len(segs)))  # one segment per scrap
    worst = min(iou for _, iou in matches)
    assert worst >= IOU_MIN, [round(iou, 3) for _, iou in matches]
    return segs


@pytest.mark.parametrize(
    ("jpeg", "scale"),
    [(None, 1.0), (95, 1.0), (80, 1.0), (95, 0.6)],
    ids=["png", "jpeg95", "jpeg80", "jpeg95-scaled"],
)
def test_every_scrap_of_a_flat_composite_is_found(news6: Path, jpeg: int | None,
                                                  scale: float) -> None:
    assert_recovered(photo(news6, jpeg=jpeg, scale=scale))


@pytest.mark.parametrize("jpeg", [95, 80])
def test_ruled_lines_that_reach_a_tear_do_not_split_a_scrap(table6: Path, jpeg: int) -> None:
    # A table's grid lines are dark and thin: the colour of shadowed table, but paper.
    assert_recovered(photo(table6, jpeg=jpeg))


@pytest.mark.parametrize(
    "table",
    [(40, 90, 60), (50, 70, 120), (128, 128, 128), (170, 125, 80), (25, 25, 25)],
    ids=["green-felt", "blue", "grey", "light-wood", "black"],
)
def test_any_plain_table_colour(photos: Path, table: tuple[int, int, int]) -> None:
    folder = build(photos, "news6-" + "-".join(map(str, table)), NEWS, "news_en", 6,
                   SynthesisSettings(table=table))
    assert_recovered(photo(folder, jpeg=90))


def test_a_wood_grain_table(news6: Path) -> None:
    width, height = composite_size(news6)
    png = recompose(news6, wood(width, height))
    assert_recovered(photo(news6, png=png, jpeg=90))


def test_scraps_lying_close_together_stay_apart(photos: Path) -> None:
    folder = build(photos, "news8-gap3", NEWS, "news_en", 8, SynthesisSettings(composite_gap=3))
    assert_recovered(photo(folder, jpeg=95))


@pytest.mark.slow
@pytest.mark.parametrize("jpeg", [None, 95, 80])
def test_every_scrap_of_a_blender_composite_is_found(news6_blender: Path,
                                                     jpeg: int | None) -> None:
    # Crumpled, creased sheets: shaded paper, soft shadows of varying depth.
    assert_recovered(photo(news6_blender, jpeg=jpeg))


@pytest.mark.parametrize("jpeg", [None, 95])
def test_segmented_scraps_reassemble_exactly(news6: Path, jpeg: int | None) -> None:
    p = photo(news6, jpeg=jpeg)
    segs = assert_recovered(p)
    hidden = load_hidden(news6)
    which = {k: i for i, (k, _) in enumerate(best_ious(segs, p.masks))}
    truth = [crop_truth_pose(hidden, which[k], s.box[:2], p.scale) for k, s in enumerate(segs)]
    sol = solve([s.rgba for s in segs])
    assert sol.complete, [len(c.members) for c in sol.clusters]
    (cluster,) = sol.clusters
    errors = cluster_errors(cluster.poses, cluster.members, truth, [s.outline for s in sol.scraps])
    assert max(e[0] for e in errors) <= 3.0 and max(e[1] for e in errors) <= 1.0, errors


def test_a_crop_is_the_photo_with_the_scraps_alpha(news6: Path) -> None:
    p = photo(news6)
    segs = segment(p.rgb)
    assert len(segs) == len(p.masks) == 6  # a loop over nothing would pass on no scraps
    for s in segs:
        x0, y0, x1, y1 = s.box
        assert s.rgba.shape == (y1 - y0, x1 - x0, 4) and s.mask.shape == s.rgba.shape[:2]
        opaque = s.rgba[..., 3] == 255
        assert (s.rgba[..., :3][opaque] == p.rgb[y0:y1, x0:x1][opaque]).all()
        assert (s.rgba[s.rgba[..., 3] == 0] == 0).all()  # nothing of the table leaks out
        assert opaque.sum() > 0.9 * s.area


def test_a_bare_table_has_no_scraps(news6: Path) -> None:
    width, height = composite_size(news6)
    assert segment(wood(width, height)) == []


def test_cut_out_scraps_pass_through_and_photos_are_cut(news6: Path) -> None:
    piece = (news6 / "pieces" / "00.png").read_bytes()
    composite = (news6 / COMPOSITE_FILE).read_bytes()
    kept, *cut = scrap_images([piece, composite])
    assert (kept == np.asarray(Image.open(io.BytesIO(piece)).convert("RGBA"))).all()
    assert len(cut) == 6 and all(c.shape[2] == 4 and c[..., 3].min() == 0 for c in cut)


def test_a_huge_photo_is_reduced_first(news6: Path) -> None:
    composite = (news6 / COMPOSITE_FILE).read_bytes()
    width, height = composite_size(news6)
    full = scrap_images([composite])
    budget = width * height // 4
    reduced = scrap_images([composite], max_pixels=budget)
    assert len(reduced) == len(full) == 6
    # Cut from the photo at half size; enlarged again as its text is then small
    # (jigsaw.scale), but within the same pixel budget.
    assert sum(c.shape[0] * c.shape[1] for c in reduced) <= budget
    for a, b in zip(full, reduced, strict=True):
        assert all(b.shape[side] < 0.9 * a.shape[side] for side in (0, 1))


def test_an_unreadable_image_is_named() -> None:
    with pytest.raises(ValueError, match="image 2 is not a readable image"):
        scrap_images([_png(), b"not an image"])


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(buf, format="PNG")
    return buf.getvalue()


def _request(folder: Path, images: list[bytes], composite: bool):
    from shredfold.shred.prompts import build_request

    return build_request(kind="prose", lang="en", n=6, images=images, composite=composite,
                         item=None)


@pytest.mark.slow
def test_jigsaw_ocr_reads_a_photograph_of_the_scraps(news6: Path) -> None:
    from shredfold.metrics.text import ned
    from shredfold.models.builtin.jigsaw import JigsawOcr
    from shredfold.shred.sample import load_truth
    from shredfold.spec import ModelConfig

    model = JigsawOcr(ModelConfig(id="jigsaw-ocr", adapter="jigsaw-ocr",
                                  images={"mode": "composite"}))  # type: ignore[arg-type]
    answer = model.complete(_request(news6, [photo(news6, jpeg=95).data], True)).text
    assert ned(answer, load_truth(news6).text, "prose") < 0.1


@pytest.mark.slow
def test_ocr_islands_reads_the_scraps_of_a_photograph_one_by_one(news6: Path) -> None:
    from shredfold.metrics.text import ned
    from shredfold.models.builtin.ocr_islands import OcrIslands
    from shredfold.shred.sample import load_public, load_truth
    from shredfold.spec import ModelConfig

    model = OcrIslands(ModelConfig(id="ocr-islands", adapter="ocr-islands",
                                   images={"mode": "composite"}))  # type: ignore[arg-type]
    truth = load_truth(news6).text
    from_photo = model.complete(_request(news6, [photo(news6, jpeg=95).data], True)).text
    from_pieces = model.complete(_request(news6, load_public(news6).pieces, False)).text
    # The same scraps are read, in another order: mostly the same words, and about as far
    # from the page as reading the pieces.
    photo_words, piece_words = Counter(from_photo.split()), Counter(from_pieces.split())
    assert sum((photo_words & piece_words).values()) >= 0.7 * sum(piece_words.values())
    assert abs(ned(from_photo, truth, "prose") - ned(from_pieces, truth, "prose")) < 0.15
