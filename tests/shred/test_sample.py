"""Sample folders: deterministic bytes, keys that track every input, the public/hidden split."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from shapely.geometry import Polygon

from shredfold.corpus.document import Document
from shredfold.shred import fonts
from shredfold.shred.sample import (
    COMPOSITE_FILE,
    SAMPLE_STAGE,
    build_sample,
    load_hidden,
    load_public,
    load_truth,
    make_sample,
    sample_key,
    write_sample,
)
from shredfold.spec import FlatSettings, RenderSettings, SynthesisSettings


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _make(tmp_path: Path, name: str, doc: Document, n: int, render, synth, seed=0) -> Path:
    out = tmp_path / name
    out.mkdir()
    make_sample(doc, n, render, synth, seed, out)
    return out


def test_same_inputs_give_byte_identical_files(tmp_path, news_en, small, synth) -> None:
    a = _make(tmp_path, "a", news_en, 6, small, synth)
    b = _make(tmp_path, "b", news_en, 6, small, synth)
    ha = _hashes(a)
    assert ha == _hashes(b)
    assert {
        "composite.jpg", "truth.txt", "source.txt", "sample.json", "hidden.json", "layout.json",
        *(f"pieces/{k:02d}.png" for k in range(6)),
    } == set(ha)  # fmt: skip
    c = _make(tmp_path, "c", news_en, 6, small, synth, seed=1)
    hc = _hashes(c)
    assert ha["composite.jpg"] != hc["composite.jpg"] and ha["pieces/00.png"] != hc["pieces/00.png"]
    assert ha["truth.txt"] == hc["truth.txt"]
    assert ha["layout.json"] == hc["layout.json"]  # the page, not its cut, places the characters


def test_images_have_their_formats_and_no_metadata(tmp_path, news_en, small, synth) -> None:
    built = build_sample(news_en, 3, small, synth, seed=0)
    out = tmp_path / "s"
    write_sample(built, out)
    for name in (COMPOSITE_FILE, "pieces/00.png"):
        data = (out / name).read_bytes()
        assert b"tIME" not in data and b"tEXt" not in data and b"pHYs" not in data and b"Exif" not in data
    # the composite: JPEG at full size (.formats)
    with Image.open(out / COMPOSITE_FILE) as jpeg:
        assert (jpeg.format, jpeg.mode, jpeg.size) == ("JPEG", "RGB", built.table.image.shape[1::-1])
        close = np.abs(np.asarray(jpeg).astype(int) - built.table.image).mean()
    assert close < 2.0
    # pieces: 256-colour palette PNGs with their transparency
    with Image.open(out / "pieces/00.png") as piece:
        assert (piece.format, piece.mode) == ("PNG", "P") and "transparency" in piece.info
        rgba = np.asarray(piece.convert("RGBA")).astype(int)
    scrap = built.scraps[built.order[0]].image
    assert rgba.shape == scrap.shape
    assert ((rgba[..., 3] == 0) == (scrap[..., 3] == 0)).all()  # nothing bleeds or vanishes
    paper = scrap[..., 3] == 255
    assert np.abs(rgba[..., :3][paper] - scrap[..., :3][paper]).mean() < 5.0


def test_public_and_hidden_files(tmp_path, news_zh, small, synth) -> None:
    out = _make(tmp_path, "s", news_zh, 8, small, synth)
    public = load_public(out)
    assert len(public.pieces) == 8
    meta = public.meta
    assert meta == json.loads((out / "sample.json").read_text(encoding="utf-8"))
    assert (meta["n"], meta["pieces"], meta["domain"], meta["kind"], meta["lang"]) == (
        8, 8, "news_zh", "prose", "zh",
    )  # fmt: skip
    assert meta["page"] == load_hidden(out)["page"]
    assert "doc_id" not in json.dumps(meta) and "t/zh" not in json.dumps(meta)
    for data in public.pieces:
        assert Image.open(io.BytesIO(data)).convert("RGBA").getextrema()[3][0] == 0
    truth = load_truth(out)
    assert truth.text.startswith("城市议会") and truth.html is None

    hidden = load_hidden(out)
    assert hidden["doc_id"] == "t/zh" and len(hidden["polygons"]) == 8
    assert sorted(p["index"] for p in hidden["presented"]) == list(range(8))
    composite = np.asarray(Image.open(out / COMPOSITE_FILE)).astype(int)
    for entry, data in zip(hidden["presented"], public.pieces, strict=True):
        scrap = np.asarray(Image.open(io.BytesIO(data)).convert("RGBA")).astype(int)
        x, y = entry["placement"]
        h, w = scrap.shape[:2]
        # The scrap's opaque paper is where hidden.json says it is in the composite (both
        # stored lossy: the mean difference is small only where they line up).
        opaque = scrap[..., 3] == 255
        assert np.abs(composite[y : y + h, x : x + w][opaque] - scrap[opaque, :3]).mean() < 4.0
        # composite_matrix takes a point of the piece on the page to its paper on the table.
        m = np.asarray(entry["composite_matrix"])
        inside = Polygon(hidden["polygons"][entry["index"]]).representative_point()
        cx, cy = m @ (inside.x, inside.y, 1.0)
        assert scrap[int(cy) - y, int(cx) - x, 3] == 255


def test_composite_has_no_paper_overlaps(news_en, small, synth) -> None:
    built = build_sample(news_en, 12, small, synth, seed=3)
    h, w = built.table.image.shape[:2]
    count = np.zeros((h, w), np.int32)
    for k, i in enumerate(built.order):
        x, y = built.table.placements[k]
        paper = built.scraps[i].paper
        count[y : y + paper.shape[0], x : x + paper.shape[1]] += paper
    assert count.max() == 1
    assert count.sum() == sum(int(s.paper.sum()) for s in built.scraps)


def test_one_piece_is_the_whole_page_turned(tmp_path, code_py, small, synth) -> None:
    out = _make(tmp_path, "s", code_py, 1, small, synth)
    public = load_public(out)
    assert len(public.pieces) == 1 and public.meta["n"] == 1
    hidden = load_hidden(out)
    (poly,) = hidden["polygons"]
    width, height = public.meta["page"]["width"], public.meta["page"]["height"]
    assert sorted(map(tuple, poly)) == sorted([(0, 0), (width, 0), (width, height), (0, height)])
    scrap = Image.open(io.BytesIO(public.pieces[0])).convert("RGBA")
    paper = (np.asarray(scrap)[..., 3] == 255).sum()
    assert paper == pytest.approx(width * height, rel=0.02)


def test_table_sample_writes_truth_html(tmp_path, table_doc, small, synth) -> None:
    out = _make(tmp_path, "s", table_doc, 4, small, synth)
    truth = load_truth(out)
    assert truth.html == table_doc.text.strip()
    assert "North | 12.1 | 13.4" in truth.text.split("\n")
    assert load_public(out).meta["kind"] == "table"


def test_key_tracks_every_input(news_en, small, synth, monkeypatch) -> None:
    base = sample_key(news_en, 8, small, synth, 0)
    assert base == sample_key(news_en, 8, small, synth, 0)
    other_doc = news_en.model_copy(update={"text": news_en.text + "\nMore."})
    variants = [
        sample_key(news_en, 12, small, synth, 0),
        sample_key(news_en, 8, small, synth, 1),
        sample_key(other_doc, 8, small, synth, 0),
        sample_key(news_en, 8, small.model_copy(update={"texture": 0.1}), synth, 0),
        sample_key(news_en, 8, small, synth.model_copy(update={"jagged": 1.0}), 0),
        sample_key(news_en, 8, small, SynthesisSettings(flat=FlatSettings(noise=2.0)), 0),
    ]
    assert len({base, *variants}) == len(variants) + 1
    # A different font file (same name, other bytes) is a different sample.
    monkeypatch.setattr(fonts, "_file_hash", lambda path: "0" * 64)
    assert sample_key(news_en, 8, small, synth, 0) != base
    assert SAMPLE_STAGE == "sample"


def test_inactive_mode_settings_do_not_change_the_key(news_en, small, synth) -> None:
    blender = type(synth.blender)
    fields = {name: f for name, f in blender.model_fields.items() if f.annotation is float}
    name = next(iter(fields))
    changed = synth.model_copy(
        update={
            "blender": synth.blender.model_copy(update={name: getattr(synth.blender, name) / 2})
        }
    )
    assert sample_key(news_en, 8, small, changed, 0) == sample_key(news_en, 8, small, synth, 0)


def test_doc_id_is_in_the_key_as_hidden_json_records_it(news_en, small, synth) -> None:
    renamed = news_en.model_copy(update={"doc_id": "elsewhere/en"})
    assert sample_key(renamed, 8, small, synth, 0) != sample_key(news_en, 8, small, synth, 0)


def test_default_settings_page_is_full_width(news_en, synth) -> None:
    built = build_sample(news_en, 1, RenderSettings(fit="page"), synth, seed=0)
    assert built.page.image.size[0] == 1600
    # prose wraps to the width: cut to its content it loses at most a few pixels
    assert 1500 < build_sample(news_en, 1, RenderSettings(), synth, seed=0).page.image.size[0] <= 1600


def test_a_new_sample_version_keeps_the_images_so_no_model_is_asked_again(
    tmp_path, news_en, small, synth, monkeypatch
) -> None:
    # A change of what is stored beside the images (SAMPLE_VERSION 7 added layout.json) gives
    # new sample keys but draws from the same streams (DRAW_VERSION): the pieces and the
    # composite, and so every request and response key, stay as they were.
    from shredfold.shred import sample_key as keys

    a = _make(tmp_path, "a", news_en, 5, small, synth)
    key_a = sample_key(news_en, 5, small, synth, 0)
    monkeypatch.setattr(keys, "SAMPLE_VERSION", keys.SAMPLE_VERSION + 1)
    b = _make(tmp_path, "b", news_en, 5, small, synth)
    assert sample_key(news_en, 5, small, synth, 0) != key_a
    ha, hb = _hashes(a), _hashes(b)
    images = [name for name in ha if name.endswith((".png", ".jpg"))]
    assert len(images) == 6 and all(ha[name] == hb[name] for name in images)
    assert ha["hidden.json"] != hb["hidden.json"]  # it records the sample's key
    monkeypatch.setattr(keys, "DRAW_VERSION", keys.DRAW_VERSION + 1)
    c = _make(tmp_path, "c", news_en, 5, small, synth)
    assert _hashes(c)["composite.jpg"] != ha["composite.jpg"]  # a new draw moves the scraps
