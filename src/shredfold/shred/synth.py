"""The synthesizer interface (pieces → scraps → table top), its registry, and the shared
table-top compositor.

A mode plugs in by registering a class; nothing else changes::

    @register("blender")
    class BlenderSynthesizer(Compositing):
        mode = "blender"
        version = 1
        def __init__(self, settings: SynthesisSettings) -> None: ...
        def params(self) -> dict[str, Any]: ...
        def scraps(self, pieces, rng) -> list[Scrap]: ...

Modes other than the built-in ones are imported only when asked for, so ``bpy`` is never
loaded in flat mode.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import cv2
import numpy as np

from shredfold.shred.modes import ASPECT, COARSE, FILL, GROW, MODES, SPREAD, TABLE_TEXTURE
from shredfold.shred.pieces import Piece
from shredfold.shred.texture import surface
from shredfold.spec import SynthesisSettings


@dataclass(frozen=True)
class Scrap:
    """A piece as paper on a surface: ``image`` is HxWx4 uint8 straight RGBA (paper opaque,
    shadow translucent), ``paper`` is the HxW bool mask of the paper itself, and ``origin``
    is where the piece image's top-left corner lies in ``image``. ``matrix``, when given,
    maps page coordinates straight to ``image`` coordinates (pixel corners at integers) and
    replaces the piece's own pose with ``origin``: for a scrap cut out of a rendered frame,
    where the sheet was turned and scaled by the scene rather than by the cutter."""

    image: np.ndarray
    paper: np.ndarray
    origin: tuple[int, int]
    matrix: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None


@dataclass(frozen=True)
class TableTop:
    """All scraps on one table: RGB image and each scrap's top-left, in input order.
    ``footprint``, when the synthesizer knows it exactly (a rendered scene), is the HxW int16
    map of which scrap (input order) each pixel shows, -1 for none: the true segmentation."""

    image: np.ndarray
    placements: list[tuple[int, int]]
    footprint: np.ndarray | None = None


@runtime_checkable
class Synthesizer(Protocol):
    mode: str
    version: int

    def params(self) -> dict[str, Any]:
        """Everything beyond the spec's settings that shapes the output (enters the key)."""
        ...

    def scraps(self, pieces: Sequence[Piece], rng: np.random.Generator) -> list[Scrap]:
        """One scrap per piece, in the same order. Rotation is already applied."""
        ...

    def table_top(
        self, scraps: Sequence[Scrap], rng: np.random.Generator, settings: SynthesisSettings
    ) -> TableTop:
        """All scraps on one table, paper never over paper."""
        ...


SynthFactory = Callable[[SynthesisSettings], Synthesizer]
_REGISTRY: dict[str, SynthFactory] = {}


def register(mode: str) -> Callable[[SynthFactory], SynthFactory]:
    """Class decorator: make ``mode`` available to :func:`get_synthesizer`."""

    def deco(factory: SynthFactory) -> SynthFactory:
        if mode in _REGISTRY and _REGISTRY[mode] is not factory:
            raise ValueError(f"synthesizer mode {mode!r} is already registered")
        _REGISTRY[mode] = factory
        return factory

    return deco


def get_synthesizer(settings: SynthesisSettings) -> Synthesizer:
    """The synthesizer for ``settings.mode``, importing its module on first use."""
    mode = settings.mode
    if mode not in _REGISTRY and mode in MODES:
        try:
            importlib.import_module(MODES[mode].module)
        except ModuleNotFoundError as exc:
            raise ValueError(
                f"synthesizer mode {mode!r} is unavailable: importing {MODES[mode].module} "
                f"failed ({exc})"
            ) from exc
    if mode not in _REGISTRY:
        known = sorted(set(_REGISTRY) | set(MODES))
        raise ValueError(f"unknown synthesizer mode {mode!r}; known: {', '.join(known)}")
    return _REGISTRY[mode](settings)


# ------------------------------------------------------------------ the table top


class Compositing:
    """Mixin: the shared table-top compositor as a synthesizer's ``table_top``."""

    def table_top(
        self, scraps: Sequence[Scrap], rng: np.random.Generator, settings: SynthesisSettings
    ) -> TableTop:
        return compose(scraps, rng, settings)


def _coarse(mask: np.ndarray, height: int, width: int) -> np.ndarray:
    """Max-pool a bool ``mask`` onto a ``height`` x ``width`` grid of COARSE-px cells."""
    full = np.zeros((height * COARSE, width * COARSE), dtype=np.uint8)
    h, w = mask.shape
    full[:h, :w] = mask.view(np.uint8) * np.uint8(255)
    # An exact box mean; one set pixel of COARSE² still rounds to >= 1 (255 / 64 ≈ 4).
    mean = cv2.resize(full, (width, height), interpolation=cv2.INTER_AREA)
    return (mean > 0).astype(np.float32)


def place(
    scraps: Sequence[Scrap], rng: np.random.Generator, gap: int
) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """Random non-overlapping positions (by paper masks, at least ``gap`` apart) on a table
    that grows when a scrap finds no room; returns (table size, top-left per scrap).

    Free positions are found exactly on a grid of COARSE px: with positions on the grid and
    masks max-pooled onto it, no overlap of the pooled masks (one template match) implies
    no overlap of the real ones. Each scrap then takes a random free position.
    """
    if not scraps:
        return (1, 1), []
    paper_area = sum(int(s.paper.sum()) for s in scraps)
    cells = math.ceil(paper_area * FILL / COARSE**2)
    shapes = [(-(-s.image.shape[0] // COARSE), -(-s.image.shape[1] // COARSE)) for s in scraps]
    gw = max(math.ceil(math.sqrt(cells * ASPECT)), *(w for _, w in shapes))
    gh = max(math.ceil(cells / gw), *(h for h, _ in shapes))
    # Keep-out zone: pooled paper grown by r cells (square kernel). Cells r + 1 apart hold
    # pixels more than r·COARSE >= gap apart, so paper stays >= gap apart. The occupancy
    # map has an r-cell rim beyond the table so that zones at the edge survive growth.
    r = -(-gap // COARSE)
    occupied = np.zeros((gh + 2 * r, gw + 2 * r), dtype=np.float32)
    spots: dict[int, tuple[int, int]] = {}
    # Big scraps first: they are the hard ones to fit late.
    order = sorted(range(len(scraps)), key=lambda i: (-int(scraps[i].paper.sum()), i))
    for i in order:
        sh, sw = shapes[i]
        paper = _coarse(scraps[i].paper, sh, sw)
        while True:
            if sh <= gh and sw <= gw:
                table = occupied[r : r + gh, r : r + gw]
                hits = cv2.matchTemplate(table, paper, cv2.TM_CCORR)
                free = np.flatnonzero(hits.reshape(-1) < 0.5)
                if free.size:
                    # The free spot nearest a random point near the middle: scraps gather
                    # in a loose heap, and the table is cropped to it afterwards (a
                    # uniform scatter leaves wide margins: bigger, slower PNGs).
                    fy, fx = np.divmod(free, hits.shape[1])
                    ty, tx = (0.5 + SPREAD * rng.standard_normal(2)) * hits.shape
                    best = int(np.argmin((fy - ty) ** 2 + (fx - tx) ** 2))
                    y, x = int(fy[best]), int(fx[best])
                    break
            # No room: grow the table evenly on all sides, moving what is already placed.
            dx = max(1, round(gw * (GROW - 1) / 2))
            dy = max(1, round(gh * (GROW - 1) / 2))
            occupied = np.pad(occupied, ((dy, dy), (dx, dx)))
            gw, gh = gw + 2 * dx, gh + 2 * dy
            spots = {k: (px + dx, py + dy) for k, (px, py) in spots.items()}
        spots[i] = (x, y)
        zone = cv2.dilate(np.pad(paper, r), np.ones((2 * r + 1, 2 * r + 1), np.uint8))
        # The zone's top-left is (x - r, y - r) on the table: (x, y) in the rimmed map.
        region = occupied[y : y + zone.shape[0], x : x + zone.shape[1]]
        np.maximum(region, zone, out=region)
    return (gw * COARSE, gh * COARSE), [
        (spots[i][0] * COARSE, spots[i][1] * COARSE) for i in range(len(scraps))
    ]


def blend(dst: np.ndarray, rgba: np.ndarray, x: int, y: int) -> None:
    """Alpha-composite straight RGBA ``rgba`` onto RGB ``dst`` at (x, y), integer-exact.

    Opaque pixels are copied and clear ones skipped; only the soft ones (shadow, paper
    edge) need arithmetic, which is a fraction of a scrap's box.
    """
    h, w = rgba.shape[:2]
    region = dst[y : y + h, x : x + w]
    a = np.ascontiguousarray(rgba[..., 3])
    rgb = cv2.cvtColor(rgba, cv2.COLOR_RGBA2RGB)
    cv2.copyTo(rgb, (a == 255).view(np.uint8), region)
    soft = np.flatnonzero((a.reshape(-1) - 1) < 254)  # 0 < a < 255 (uint8 wraps)
    if soft.size:
        rows, cols = np.divmod(soft, w)
        al = a.reshape(-1)[soft][:, None].astype(np.uint16)
        mixed = rgb[rows, cols] * al + region[rows, cols] * (255 - al) + 127
        region[rows, cols] = (mixed // 255).astype(np.uint8)


def compose(
    scraps: Sequence[Scrap], rng: np.random.Generator, settings: SynthesisSettings
) -> TableTop:
    """Scatter ``scraps`` over a table-coloured canvas without paper overlapping paper; the
    canvas is then cropped to what was placed plus a border of ``composite_gap``."""
    gap = settings.composite_gap
    place_rng, texture_rng = rng.spawn(2)
    (width, height), spots = place(scraps, place_rng, gap)
    if scraps:
        x0 = min(x for x, _ in spots)
        y0 = min(y for _, y in spots)
        x1 = max(x + s.image.shape[1] for (x, _), s in zip(spots, scraps, strict=True))
        y1 = max(y + s.image.shape[0] for (_, y), s in zip(spots, scraps, strict=True))
        border = max(gap, 8)
        spots = [(x - x0 + border, y - y0 + border) for x, y in spots]
        width, height = x1 - x0 + 2 * border, y1 - y0 + 2 * border
    canvas = surface(width, height, settings.table, rng=texture_rng, **TABLE_TEXTURE)  # type: ignore[arg-type]
    for (x, y), scrap in zip(spots, scraps, strict=True):
        blend(canvas, scrap.image, x, y)
    return TableTop(image=canvas, placements=spots)
