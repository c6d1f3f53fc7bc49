"""Pinned fonts: clear errors when missing, hashes that identify file, face and weight."""

from __future__ import annotations

import pytest

from shredfold.shred import fonts


def test_missing_font_names_the_file_and_its_package(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(fonts, "DEJAVU_DIR", tmp_path)
    with pytest.raises(fonts.FontMissingError, match=r"DejaVuSansMono\.ttf.*fonts-dejavu-core"):
        fonts.font_path("mono")


def test_font_hashes_name_file_face_and_weight() -> None:
    h = fonts.font_hashes(["cjk_bold", "prose"])
    assert set(h) == {"cjk_bold", "prose"}
    digest, index, weight = h["cjk_bold"].split(":")
    assert len(digest) == 64 and index == "2" and weight == "Bold"
    assert fonts.load_font("cjk", 20).getname() == ("Noto Sans CJK SC", "Regular")


def test_hashes_are_cached_per_process(monkeypatch) -> None:
    fonts.font_hashes(["mono"])
    calls = []
    monkeypatch.setattr(fonts, "sha256_file", lambda path: calls.append(path) or "x")
    fonts.font_hashes(["mono"])
    assert calls == []


def test_the_paper_style_pins_dejavu_serif_its_mono_and_debians_noto_sans_cjk(monkeypatch, tmp_path) -> None:
    h = fonts.font_hashes(list(fonts.PAPER_ROLES))
    assert set(h) == set(fonts.PAPER_ROLES)
    assert all(len(v.split(":")[0]) == 64 for v in h.values())
    assert fonts.load_font("serif", 28).getname() == ("DejaVu Serif", "Book")
    assert fonts.load_font("serif_italic", 28).getname() == ("DejaVu Serif", "Italic")
    assert fonts.load_font("cjk_fallback", 28).getname() == ("Noto Sans CJK JP", "Regular")
    assert h["cjk_fallback"].endswith(":0:")  # the collection's first face
    monkeypatch.setattr(fonts, "NOTO_DIR", tmp_path)
    with pytest.raises(fonts.FontMissingError, match=r"NotoSansCJK-Regular\.ttc.*fonts-noto-cjk"):
        fonts.font_path("cjk_fallback")
