"""One ShredBench sample: document + granularity + settings + seed → a folder of files.

The folder's layout and its readers are in :mod:`.sample_folder`; the key in
:mod:`.sample_key`. Every random choice comes from streams spawned from the key.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from shapely.geometry import Polygon

from shredfold.corpus.document import Document
from shredfold.shred.formats import (
    COMPOSITE_FILE,
    composite_jpeg,
    encode_many,
    piece_png,
)
from shredfold.shred.glyphs import PageGlyphs, page_glyphs
from shredfold.shred.modes import PAPER_SCENE
from shredfold.shred.pieces import Piece, cut_pieces
from shredfold.shred.render import Page, render_page
from shredfold.shred.sample_folder import (
    LAYOUT_FILE,
    SAMPLE_STAGE,
    PublicSample,
    Truth,
    load_hidden,
    load_public,
    load_truth,
    piece_names,
)
from shredfold.shred.sample_key import draw_key, sample_key
from shredfold.shred.synth import Scrap, Synthesizer, TableTop, get_synthesizer
from shredfold.shred.text_cut import cut_holding_text
from shredfold.spec import RenderSettings, SynthesisSettings

__all__ = [
    "COMPOSITE_FILE",
    "SAMPLE_STAGE",
    "Built",
    "PublicSample",
    "Truth",
    "build_sample",
    "load_hidden",
    "load_public",
    "load_truth",
    "make_sample",
    "sample_key",
    "write_sample",
]
# Independent random streams, one per use, spawned in this fixed order from the key.
STREAMS = ("render", "cut", "pose", "scraps", "order", "table")

def streams(key: str) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(int(key, 16)).spawn(len(STREAMS))
    return {name: np.random.default_rng(c) for name, c in zip(STREAMS, children, strict=True)}


def _json(obj: Any, compact: bool = False) -> str:
    layout: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 1}
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, **layout) + "\n"


def _r(v: float, nd: int = 6) -> float:
    return round(float(v), nd) + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass
class Built:
    """A sample in memory, before it is written."""

    key: str
    doc: Document
    page: Page
    polygons: list[Polygon]
    pieces: list[Piece]
    scraps: list[Scrap]
    order: list[int]  # presented position k shows piece order[k]
    table: TableTop
    synthesizer: Synthesizer
    glyphs: PageGlyphs  # where each character is drawn (stored as layout.json)


class _Clock:
    """Adds each stage's wall and CPU time to ``timings`` (when given) as ``stage`` and
    ``stage.cpu``: the speed bench reads them."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings = timings
        self.t = time.perf_counter()
        self.c = time.process_time()

    def lap(self, stage: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if self.timings is not None:
            self.timings[stage] = self.timings.get(stage, 0.0) + now - self.t
            self.timings[f"{stage}.cpu"] = self.timings.get(f"{stage}.cpu", 0.0) + cpu - self.c
        self.t, self.c = now, cpu


def build_sample(
    doc: Document,
    n: int,
    render: RenderSettings,
    synth: SynthesisSettings,
    seed: int,
    timings: dict[str, float] | None = None,
) -> Built:
    clock = _Clock(timings)
    key = sample_key(doc, n, render, synth, seed)
    rng = streams(draw_key(doc, n, render, synth, seed))
    synthesizer = get_synthesizer(synth)
    clock.lap("key")
    page = render_page(doc, render, rng["render"])
    pixels = np.asarray(page.image)
    height, width = pixels.shape[:2]
    clock.lap("render")
    # The authors' scene comes with their cutter's seeds (modes.PAPER_SCENE: uniform).
    spread = not (synth.mode == "blender" and synth.blender.paper_scene and PAPER_SCENE["cut_seeds"] == "uniform")
    glyphs = page_glyphs(doc, render)
    polygons = cut_holding_text(width, height, n, rng["cut"], synth.jagged, glyphs.boxes, spread)
    clock.lap("cut")
    pieces = cut_pieces(pixels, polygons, rng["pose"], synth.max_rotation)
    clock.lap("pieces")
    scraps = synthesizer.scraps(pieces, rng["scraps"])
    clock.lap("scraps")
    order = [int(i) for i in rng["order"].permutation(n)]
    table = synthesizer.table_top([scraps[i] for i in order], rng["table"], synth)
    clock.lap("composite")
    return Built(key, doc, page, polygons, pieces, scraps, order, table, synthesizer, glyphs)


def write_sample(built: Built, out_dir: Path, timings: dict[str, float] | None = None) -> None:
    clock = _Clock(timings)
    out_dir = Path(out_dir)
    (out_dir / "pieces").mkdir(parents=True, exist_ok=True)
    doc, page, table = built.doc, built.page, built.table
    n = len(built.pieces)
    names = piece_names(n)
    width, height = page.image.size
    # Largest first, so the pool is not left waiting on one big image at the end.
    images = {COMPOSITE_FILE: (composite_jpeg, table.image)}
    images.update({name: (piece_png, built.scraps[i].image) for name, i in zip(names, built.order, strict=True)})
    encoded = encode_many(list(images.values()))
    clock.lap("encode")
    for name, data in zip(images, encoded, strict=True):
        (out_dir / name).write_bytes(data)
    (out_dir / "truth.txt").write_text(page.truth, encoding="utf-8")
    (out_dir / "source.txt").write_text(doc.text, encoding="utf-8")
    if page.truth_html is not None:
        (out_dir / "truth.html").write_text(page.truth_html, encoding="utf-8")

    public = {
        "n": n,
        "domain": doc.domain,
        "kind": doc.kind,
        "lang": page.lang,
        "page": {"width": width, "height": height},
        "pieces": n,
        "piece_files": names,
        "composite": {"width": table.image.shape[1], "height": table.image.shape[0]},
    }
    (out_dir / "sample.json").write_text(_json(public), encoding="utf-8")

    presented = []
    for k, (name, i) in enumerate(zip(names, built.order, strict=True)):
        piece, scrap = built.pieces[i], built.scraps[i]
        px, py = table.placements[k]
        ox, oy = scrap.origin
        m = np.asarray(piece.matrix if scrap.matrix is None else scrap.matrix)
        to_table = m + np.array([[0, 0, ox + px], [0, 0, oy + py]])
        presented.append(
            {
                "file": name,
                "index": i,
                "angle": piece.angle,
                "offset": list(piece.offset),
                "size": list(piece.size),
                "matrix": [[_r(v) for v in row] for row in m],
                "scrap_origin": [ox, oy],
                "placement": [px, py],
                "composite_matrix": [[_r(v) for v in row] for row in to_table],
            }
        )
    hidden = {
        "doc_id": doc.doc_id,
        "doc_key": doc.key,
        "sample_key": built.key,
        "synthesizer": {"mode": built.synthesizer.mode, "version": built.synthesizer.version},
        "page": {"width": width, "height": height},
        "polygons": [
            [[_r(x), _r(y)] for x, y in list(p.exterior.coords)[:-1]] for p in built.polygons
        ],
        "presented": presented,
    }
    # One line: a jagged cut has thousands of vertices, and indented they were 40% of the bytes.
    (out_dir / "hidden.json").write_text(_json(hidden, compact=True), encoding="utf-8")
    (out_dir / LAYOUT_FILE).write_text(_json(built.glyphs.to_json(), compact=True), encoding="utf-8")
    clock.lap("write")


def make_sample(
    doc: Document,
    n: int,
    render: RenderSettings,
    synth: SynthesisSettings,
    seed: int,
    out_dir: Path,
) -> None:
    """Write the sample's files into ``out_dir`` (an empty folder the store renames after)."""
    write_sample(build_sample(doc, n, render, synth, seed), out_dir)
