"""The paper scene (``synthesis.blender.preset: paper``): the ShredBench authors' one-frame
Blender scene of all the pieces, rendered fast enough to use.

**Their scene** (their ``blenderprocess_.py`` is the specification; constants in
:data:`~.modes.PAPER_SCENE`): each piece is the rectangle of its page box (their crop: the
mask's extent plus 2 px), subdivided 40 times, textured with the page and cut by the mask
(mask > 0.9 is paper, the rest transparent), solidified (2 mm), subdivided again (Subsurf 2)
and displaced along its normals by a Marble (0.15, noise scale 1.5) and a Musgrave field
(0.02, scale 8). The displacement pushes the two shells of the solidified sheet apart or
through each other and rounds the rim, so where a piece reaches its box (at the page's
border) the rim shows as the curled, bulging edges of their photographs. 500 page px per
metre; their packing (:mod:`.paper_layout`); an orthographic camera straight down fitted to
the pieces with a 1.05 margin; a square area light (15000 W, 1.5 x the view, 15 m up); a
dark ground (albedo 0.05, roughness 1) that the light turns into their grey backdrop; their
startup file's grey world and AgX view transform; a 4096² frame.

**One field per piece.** Their script gives every piece a new texture with the same
settings, read in the piece's own local space: the same relief around every piece's
centre, so equal-sized pieces curl alike. Here each piece reads the same two fields (same
texture, scale, strength) from its own offset drawn from the sample's generator: the same
distribution of curls, different per piece, reproducible.

**How it is rendered.** Their 128 Cycles samples of the 4096² frame take CPU-hours, and
4 samples (minutes) are visibly grainy. Seen straight down by an orthographic camera every
point of a sheet is seen once: which sheet a pixel shows, and which texel, is geometry. So
the frame is split in two:

* *visibility and texture*, exact: Blender evaluates the authors' meshes (all modifiers);
  :mod:`.raster` rasterises them at ``supersample``² points per pixel (the mask test per
  point, as their shader does) and looks up each point's page colour;
* *light*, smooth: Cycles renders the same scene, with a uniform sheet colour, at
  ``paper_scale`` of the size with ``paper_samples`` per pixel at the pixel centres (no
  pixel filter), writing the combined light and which object each centre shows. Per
  surface (the ground; each sheet) the light is smoothed within that surface only and
  carried to its other pixels, so the upsampled light never bleeds across an outline.

A pixel is then the mean over its points of page colour x its sheet's light (or the
ground's radiance), and Blender's own view transform (AgX) makes it 8-bit. For a matte
sheet seen from above this is the same sum as shading the texture in Cycles; what differs
is the lighting's resolution and noise (``bench/paper_scene_noise.py`` measures both against
a fully textured high-sample Cycles render).

**What the sample keeps.** The composite; per piece a scrap cut out of it (RGB of the
frame, alpha = the share of the pixel's points that are this piece's paper); the exact
footprint of every piece (:attr:`PaperFrame.labels`); and each piece's pose, page → frame
pixels, the similarity of its flat sheet (the relief moves paper a little sideways; the
footprint is exact).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import ndimage

from shredfold.shred.modes import PAPER_ALBEDO, PAPER_FIREFLY, PAPER_LIGHT_SMOOTH, PAPER_SCENE
from shredfold.shred.paper_layout import Crop, Placed, pack, their_crop
from shredfold.shred.pieces import Piece
from shredfold.shred.raster import Sheets, pack_sheets, shade, visible
from shredfold.shred.synth import Scrap, TableTop

if TYPE_CHECKING:
    from shredfold.shred.blender_paper_scene import PaperScene, View

log = logging.getLogger(__name__)

Matrix = tuple[tuple[float, float, float], tuple[float, float, float]]


@dataclass(frozen=True)
class PaperFrame:
    """A rendered frame: the composite (RGB uint8), which piece (input order) each pixel
    shows (int16, -1: the ground), how many of its ``supersample``² points are paper, and
    per piece its pose, page → frame pixels (pixel corners at integers)."""

    image: np.ndarray
    labels: np.ndarray
    paper: np.ndarray
    supersample: int
    poses: list[Matrix]

    def box(self, k: int) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1): the pixels piece ``k`` shows, plus :data:`SCRAP_MARGIN`."""
        return self._boxes[k]

    @functools.cached_property
    def _boxes(self) -> list[tuple[int, int, int, int]]:
        h, w = self.labels.shape
        found = ndimage.find_objects(self.labels.astype(np.int32) + 1, max_label=len(self.poses))
        out = []
        for k in range(len(self.poses)):
            sl = found[k]
            if sl is None:
                raise RuntimeError(f"paper scene: piece {k} shows no pixel in the frame")
            ys, xs = sl
            out.append((max(0, xs.start - SCRAP_MARGIN), max(0, ys.start - SCRAP_MARGIN),
                        min(w, xs.stop + SCRAP_MARGIN), min(h, ys.stop + SCRAP_MARGIN)))
        return out


SCRAP_MARGIN = 2  # px of clear border around each scrap cut out of the frame


def scrap_of(frame: PaperFrame, k: int) -> Scrap:
    """Piece ``k`` cut out of the frame: its pixels' colour, alpha the share of each pixel's
    points that are its paper; ``paper`` where that share is at least half (its true
    footprint); the pose page → scrap pixels."""
    x0, y0, x1, y1 = frame.box(k)
    mine = frame.labels[y0:y1, x0:x1] == k
    count = np.where(mine, frame.paper[y0:y1, x0:x1], 0).astype(np.uint16)
    n = frame.supersample**2
    rgba = np.zeros((y1 - y0, x1 - x0, 4), dtype=np.uint8)
    rgba[..., :3] = frame.image[y0:y1, x0:x1]
    rgba[..., 3] = ((count * 255 + n // 2) // n).astype(np.uint8)
    rgba[rgba[..., 3] == 0] = 0
    (a, b, tx), (c, d, ty) = frame.poses[k]
    return Scrap(image=rgba, paper=count * 2 >= n, origin=(0, 0),
                 matrix=((a, b, tx - x0), (c, d, ty - y0)))


def table_top_of(frame: PaperFrame, order: Sequence[int]) -> TableTop:
    """The frame as the table top of the scraps of pieces ``order`` (presented order): each
    scrap's top-left in it, and the footprint relabelled to that order."""
    lut = np.full(len(frame.poses) + 1, -1, dtype=np.int16)
    for pos, k in enumerate(order):
        lut[k + 1] = pos
    footprint = lut[frame.labels.astype(np.int32) + 1]
    footprint[frame.paper * 2 < frame.supersample**2] = -1
    return TableTop(image=frame.image, placements=[frame.box(k)[:2] for k in order], footprint=footprint)


def page_size(pieces: Sequence[Piece]) -> tuple[int, int]:
    """The page's size: the pieces partition it, so their boxes reach its far edges."""
    return (max(p.offset[0] + p.size[0] for p in pieces), max(p.offset[1] + p.size[1] for p in pieces))


def crops(pieces: Sequence[Piece]) -> list[Crop]:
    size = page_size(pieces)
    out = []
    for p in pieces:
        if p.crop is None:
            raise ValueError("the paper scene needs each piece's page box (Piece.crop)")
        out.append(their_crop(p.crop, p.offset, size, int(PAPER_SCENE["pad"])))
    return out


def pose(crop: Crop, placed: Placed, view_x: float, view_y: float, side: float, size: int) -> Matrix:
    """Page → frame pixels for a flat sheet: the box centre to the sheet's location, turned,
    scaled by the camera (its y up, the frame's down)."""
    ppm = float(PAPER_SCENE["pixels_per_meter"])
    w, h = crop.size
    t = math.radians(placed.angle)
    c, s = math.cos(t), math.sin(t)
    k = size / (side * ppm)  # frame px per page px
    # page (x, y) -> local (x - cx, -(y - cy)) / ppm -> turned + location -> frame
    # fx = ((wx - view_x) / side + 0.5) * size ;  fy = ((view_y - wy) / side + 0.5) * size
    cx, cy = crop.x0 + w / 2, crop.y0 + h / 2
    # Counter-clockwise on screen with y down, as the cutter turns pieces (pieces._rotation).
    a11, a12 = c * k, s * k
    a21, a22 = -s * k, c * k
    tx = ((placed.x - view_x) / side + 0.5) * size - (a11 * cx + a12 * cy)
    ty = ((view_y - placed.y) / side + 0.5) * size - (a21 * cx + a22 * cy)
    return ((a11, a12, tx), (a21, a22, ty))


def light_maps(combined: np.ndarray, index: np.ndarray, seen: np.ndarray, sheets: int) -> np.ndarray:
    """(1 + sheets, h, w, 3) float32 on the lighting pass's grid: map 0 the ground's
    radiance, map 1 + s sheet s's light per unit albedo. A pixel counts for a surface where
    Cycles and the rasteriser agree it shows that surface; each surface's light is smoothed
    within itself (normalised Gaussian) and carried to every other pixel from the nearest
    one of its own, so the shading never mixes two surfaces across an outline. Fireflies are
    held down first (:data:`~.modes.PAPER_FIREFLY`)."""
    h, w = index.shape
    out = np.empty((1 + sheets, h, w, 3), dtype=np.float32)
    agree = index == seen.astype(np.int32) + 1
    paper_known = agree & (index > 0)
    fallback = (np.median(combined[paper_known], axis=0) / PAPER_ALBEDO) if paper_known.any() else np.ones(3)
    for k in range(1 + sheets):
        known = agree & (index == k)
        if not known.any():
            out[k] = fallback if k else np.median(combined.reshape(-1, 3), axis=0)
            continue
        value = combined.astype(np.float64) / (PAPER_ALBEDO if k else 1.0)
        _, (iy, ix) = ndimage.distance_transform_edt(~known, return_distances=True, return_indices=True)
        # Fireflies (a rare path that found the light) would spread into blobs: each pixel is
        # held to PAPER_FIREFLY x the median of its 5 x 5 neighbourhood (its own surface's).
        lum = value[iy, ix].mean(axis=2)
        cap = PAPER_FIREFLY * ndimage.median_filter(lum, size=5, mode="nearest")
        value *= np.minimum(1.0, cap / np.maximum(lum, 1e-12))[..., None]
        weight = ndimage.gaussian_filter(known.astype(np.float64), PAPER_LIGHT_SMOOTH, mode="nearest")
        smooth = np.empty((h, w, 3), dtype=np.float64)
        for c in range(3):
            num = ndimage.gaussian_filter(value[..., c] * known, PAPER_LIGHT_SMOOTH, mode="nearest")
            smooth[..., c] = num / np.maximum(weight, 1e-12)
        out[k] = smooth[iy, ix]
    return out


def _sheets(corners: list[np.ndarray], uvs: list[np.ndarray], parts: list[Crop], view: tuple[float, float, float]) -> Sheets:
    vx, vy, side = view
    frame = []
    for c in corners:
        f = np.empty_like(c)
        f[..., 0] = (c[..., 0] - vx) / side + 0.5
        f[..., 1] = (vy - c[..., 1]) / side + 0.5
        f[..., 2] = c[..., 2]
        frame.append(f)
    return pack_sheets(frame, uvs, [p.mask for p in parts], [p.rgb for p in parts])


@dataclass
class Prepared:
    """A frame's scene, built in Blender and ready to light: what :func:`finish` needs."""

    scene: PaperScene
    parts: list[Crop]
    layout: list[Placed]
    view: View
    sheets: Sheets
    seed: int
    timings: dict[str, float]


def _lap(timings: dict[str, float], stage: str, since: float) -> float:
    now = time.process_time()
    timings[stage] = timings.get(stage, 0.0) + now - since
    return now


def prepare(pieces: Sequence[Piece], rng: np.random.Generator) -> Prepared:
    """The authors' scene of ``pieces`` (turned by their angles) built in this process's
    Blender scene, camera fitted. Random draws, in this order: Cycles' seed, each piece's
    field offset, the heights (:func:`~.paper_layout.pack`)."""
    from shredfold.shred.blender_paper_scene import SheetSpec, View, paper_scene

    p = PAPER_SCENE
    timings: dict[str, float] = {}
    t = time.process_time()
    seed = int(rng.integers(0, 2**31 - 1))
    reach = float(p["field_offset"])
    offsets = [tuple(float(v) for v in rng.uniform(-reach, reach, 3)) for _ in pieces]
    parts = crops(pieces)
    layout = pack([c.mask for c in parts], [pc.angle for pc in pieces], rng)
    t = _lap(timings, "layout", t)
    sc = paper_scene()
    try:
        sc.build([
            SheetSpec(width=c.size[0], height=c.size[1], location=(q.x, q.y, q.z), angle=q.angle,
                      field_offset=o, mask=c.mask)  # type: ignore[arg-type]
            for c, q, o in zip(parts, layout, offsets, strict=True)
        ])
        corners, uvs, boxes = sc.triangles()
        x0, x1 = min(b[0] for b in boxes), max(b[1] for b in boxes)
        y0, y1 = min(b[2] for b in boxes), max(b[3] for b in boxes)
        view = View((x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) * float(p["camera_margin"]))
        sc.frame(view)
        sheets = _sheets(corners, uvs, parts, (view.x, view.y, view.side))
    except BaseException:
        sc.clear()
        raise
    _lap(timings, "scene", t)
    return Prepared(sc, parts, layout, view, sheets, seed, timings)


def finish(prep: Prepared, quality: dict[str, float | int | bool], threads: int) -> PaperFrame:
    """Light and shade a prepared frame (the scene stays built: :func:`render_frame` clears
    it; the noise bench lights one scene several ways)."""
    p = PAPER_SCENE
    size = int(p["resolution"])
    ss = int(quality["supersample"])
    light_size = max(1, round(size * float(quality["paper_scale"])))
    threshold = float(p["mask_threshold"])
    timings = prep.timings
    t = time.process_time()
    seen = visible(prep.sheets, light_size, threshold)
    combined, index = prep.scene.render_light(light_size, int(quality["paper_samples"]), prep.seed, threads)
    t = _lap(timings, "light", t)
    light = light_maps(combined, index, seen, len(prep.parts))
    frame = shade(prep.sheets, size, ss, threshold, light)
    t = _lap(timings, "raster", t)
    image = prep.scene.to_display(frame.rgba)
    _lap(timings, "view", t)
    v = prep.view
    poses = [pose(c, q, v.x, v.y, v.side, size) for c, q in zip(prep.parts, prep.layout, strict=True)]
    return PaperFrame(image=image, labels=frame.labels, paper=frame.paper, supersample=ss, poses=poses)


def render_frame(
    pieces: Sequence[Piece], rng: np.random.Generator, quality: dict[str, float | int | bool], threads: int
) -> PaperFrame:
    """The authors' scene of ``pieces``, one frame (:func:`prepare`, then :func:`finish`)."""
    prep = prepare(pieces, rng)
    try:
        frame = finish(prep, quality, threads)
    finally:
        prep.scene.clear()
    log.info(
        "paper scene: %d pieces, %d triangles; CPU s: %s", len(pieces), len(prep.sheets.sheet),
        ", ".join(f"{k} {v:.1f}" for k, v in prep.timings.items()),
    )
    return frame
