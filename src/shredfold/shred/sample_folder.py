"""The sample folder: its layout, and the one way to read it back.

Layout of a sample (see :mod:`.sample` for how it is made)::

    pieces/00.png …   RGBA scraps (palette PNG), in the shuffled order a model sees them
    composite.jpg     all scraps on one table top (RGB JPEG, quality 90, .formats)
    truth.txt         the text drawn on the page, one drawn line per line (UTF-8)
    truth.html        the source table (tables only)
    source.txt        the document as written (Markdown, code, HTML): the paper protocol's truth
    sample.json       public facts: n, domain, kind, lang, page size, piece files
    hidden.json       doc id, polygons, and per presented piece its pose and placement
    layout.json       where each character of the page is drawn (.glyphs.PageGlyphs), for
                      the failure diagnostics; absent in an outside sample

Readers take a stored object (``store.object(SAMPLE_STAGE, key)``: every file is checked
against the object's manifest) or a plain folder (a sample written outside the store, in
tests and benchmarks). Light: JSON and bytes only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from shredfold.shred.formats import COMPOSITE_FILE, piece_names
from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.store import Readable, readable

__all__ = ["COMPOSITE_FILE", "SAMPLE_STAGE", "PublicSample", "Truth", "load_hidden", "load_layout", "load_public", "load_truth", "piece_names"]


@dataclass(frozen=True)
class PublicSample:
    """What a model request is built from: piece PNGs in presented order, the composite JPEG."""

    pieces: list[bytes]
    composite: bytes
    meta: dict[str, Any]


@dataclass(frozen=True)
class Truth:
    text: str  # what the page shows, one drawn line per line
    html: str | None  # the table (tables only)
    source: str  # the document as written


def load_public(src: Readable | str | os.PathLike[str]) -> PublicSample:
    s = readable(src)
    meta = json.loads(s.read_text("sample.json"))
    return PublicSample(
        pieces=[s.read_bytes(name) for name in meta["piece_files"]],
        composite=s.read_bytes(COMPOSITE_FILE),
        meta=meta,
    )


def load_truth(src: Readable | str | os.PathLike[str]) -> Truth:
    s = readable(src)
    return Truth(
        text=s.read_text("truth.txt"),
        html=s.read_text("truth.html") if s.has("truth.html") else None,
        source=s.read_text("source.txt"),
    )


def load_hidden(src: Readable | str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(readable(src).read_text("hidden.json"))


LAYOUT_FILE = "layout.json"


def load_layout(src: Readable | str | os.PathLike[str]) -> dict[str, Any] | None:
    """The page's layout as stored (:meth:`~shredfold.shred.glyphs.PageGlyphs.from_json` reads
    it), or None for a sample that has none (an outside sample: no page was laid out)."""
    s = readable(src)
    return json.loads(s.read_text(LAYOUT_FILE)) if s.has(LAYOUT_FILE) else None
