"""ShredBench's part of the bill (``shredfold plan SPEC --cost``): its requests carry the
sample's pieces (or its one table-top composite, ``images.mode``), whose sizes are read from
the stored samples (``sample.json`` and the PNG headers, through the store) when they exist,
else estimated from the page's geometry: the page size from the real layout (fonts measured,
nothing drawn), each of the N pieces a square of :data:`PIECE_AREA` × page area / N, the
composite a 4:3 rectangle of :data:`COMPOSITE_AREA` × page area (both measured on flat-mode
samples: rotated pieces' bounding boxes and their shadows take 1.5-2.2 × the page, the
scattered table 1.6-2.7 ×). A typical answer is about the document's text."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from shredfold.models import registry
from shredfold.models.accounting import text_tokens
from shredfold.models.image_tokens import png_size
from shredfold.shred.prompts import build_request
from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.spec import ResolvedSpec
from shredfold.store import CorruptObjectError, Store
from shredfold.tasks.base import Cell
from shredfold.tasks.benchmark import Shape

PIECE_AREA = 2.0
COMPOSITE_AREA = 2.25
PNG_HEADER = 24


class ShredSizes:
    """Each sample's image sizes: read from the store when the sample is there (its
    ``sample.json`` and PNG headers), else estimated from its page's geometry."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self._stored: dict[str, dict[str, Any] | None] = {}
        self._pieces: dict[str, list[tuple[int, int]]] = {}
        self.unreadable: list[str] = []

    def _meta(self, key: str) -> dict[str, Any] | None:
        if key not in self._stored:
            meta = None
            if self.store is not None and self.store.has(SAMPLE_STAGE, key):
                try:
                    meta = json.loads(self.store.read_text(SAMPLE_STAGE, key, "sample.json"))
                    if not isinstance(meta, dict):
                        raise ValueError("sample.json is not a mapping")
                except (CorruptObjectError, ValueError) as exc:
                    self.unreadable.append(f"{key[:12]} ({exc})")
                    meta = None
            self._stored[key] = meta
        return self._stored[key]

    def stored(self, keys: Iterable[str]) -> int:
        return sum(self._meta(k) is not None for k in keys)

    def pieces(self, item: Any) -> list[tuple[int, int]]:
        if item.key not in self._pieces:
            self._pieces[item.key] = self._read_pieces(item) or estimate_pieces(item)
        return self._pieces[item.key]

    def _read_pieces(self, item: Any) -> list[tuple[int, int]] | None:
        meta = self._meta(item.key)
        if meta is None or self.store is None:
            return None
        try:
            return [png_size(self.store.read_head(SAMPLE_STAGE, item.key, str(name), PNG_HEADER))
                    for name in meta["piece_files"]]  # fmt: skip
        except (CorruptObjectError, ValueError, KeyError, TypeError) as exc:
            self.unreadable.append(f"{item.key[:12]} ({exc})")
            return None

    def composite(self, item: Any) -> tuple[int, int]:
        meta = self._meta(item.key)
        try:
            if meta is not None:
                c = meta["composite"]
                return int(c["width"]), int(c["height"])
        except (KeyError, TypeError, ValueError) as exc:
            self.unreadable.append(f"{item.key[:12]} ({exc})")
        return estimate_composite(item)


@lru_cache(maxsize=4096)
def _page(doc_json: str, render_json: str) -> tuple[int, int]:
    from shredfold.corpus.document import Document
    from shredfold.shred.render import page_size
    from shredfold.spec import RenderSettings

    return page_size(Document.model_validate_json(doc_json), RenderSettings.model_validate_json(render_json))


def page_of(item: Any) -> tuple[int, int]:
    return _page(item.doc.model_dump_json(), item.render.model_dump_json())


def _outside_sizes(item: Any) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """An outside sample's pieces and composite as the plan measured its files; a composite
    made from the pieces is estimated from their area."""
    ref = item.outside
    pieces = [p.size for p in ref.pieces]
    if ref.composite is not None:
        return pieces, ref.composite.size
    area = COMPOSITE_AREA / PIECE_AREA * sum(w * h for w, h in pieces)
    return pieces, (max(1, round(math.sqrt(area * 4 / 3))), max(1, round(math.sqrt(area * 3 / 4))))


def estimate_pieces(item: Any) -> list[tuple[int, int]]:
    if item.outside is not None:
        return _outside_sizes(item)[0]
    w, h = page_of(item)
    side = max(1, round(math.sqrt(PIECE_AREA * w * h / item.n)))
    return [(side, side)] * item.n


def estimate_composite(item: Any) -> tuple[int, int]:
    if item.outside is not None:
        return _outside_sizes(item)[1]
    w, h = page_of(item)
    area = COMPOSITE_AREA * w * h
    return max(1, round(math.sqrt(area * 4 / 3))), max(1, round(math.sqrt(area * 3 / 4)))


# ---------------------------------------------------------------- the bill


@lru_cache(maxsize=1024)
def _shred_text(kind: str, lang: str, n: int, images: int, composite: bool) -> int:
    request = build_request(kind=kind, lang=lang, n=n, images=[b""] * images, composite=composite, item=None)
    return text_tokens(request.text)


def shred_shapes(cell: Cell, spec: ResolvedSpec, sizes: ShredSizes) -> list[Shape]:
    if spec.spec.shred is not None and spec.spec.shred.protocol == "paper":
        return paper_shapes(cell, sizes)
    mode = cell.model.images.mode == "composite"
    out = []
    for item in cell.item_set.items:
        # an outside sample given as one photograph shows it to every model (as the request does)
        composite = mode or (item.outside is not None and not item.outside.pieces)
        images = (sizes.composite(item),) if composite else tuple(sizes.pieces(item))
        text = _shred_text(item.kind, item.lang, item.n, len(images), composite)
        out.append(Shape(text, images, text_tokens(item.doc.text)))
    return out


def paper_shapes(cell: Cell, sizes: ShredSizes) -> list[Shape]:
    """The paper's protocol: the composite with its longest side scaled to 2048 px."""
    from shredfold.shred.presentation import PAPER_LONGEST_SIDE
    from shredfold.shred.prompts import paper_request

    text = text_tokens(paper_request(b"", item=None).text)
    out = []
    for item in cell.item_set.items:
        w, h = sizes.composite(item)
        scale = PAPER_LONGEST_SIDE / max(w, h)
        out.append(Shape(text, ((max(1, round(w * scale)), max(1, round(h * scale))),), text_tokens(item.doc.text)))
    return out


class ShredBill:
    """The bill's view of a plan's ShredBench cells (sizes read once per sample)."""

    def __init__(self, spec: ResolvedSpec, store: Store | None) -> None:
        self.spec = spec
        self.sizes = ShredSizes(store)

    def requests(self, cell: Cell) -> int:
        return len(cell.item_set.items)

    def shapes(self, cell: Cell) -> list[Shape]:
        return shred_shapes(cell, self.spec, self.sizes)

    def notes(self, cells: Sequence[Cell]) -> list[str]:
        out = []
        if any(registry.concurrent(c.model) for c in cells):
            keys = {i.key for c in cells for i in c.item_set.items}
            stored = self.sizes.stored(keys)
            out.append(
                f"ShredBench image sizes: {stored} of {len(keys)} samples read from the store, "
                f"{len(keys) - stored} estimated from page geometry (the real page layout; each of "
                f"N pieces a square of {PIECE_AREA:g} × page area / N; the composite a 4:3 "
                f"rectangle of {COMPOSITE_AREA:g} × page area)"
            )
        if self.sizes.unreadable:
            out.append(f"unreadable stored samples (estimated instead): {', '.join(self.sizes.unreadable[:5])}")
        return out
