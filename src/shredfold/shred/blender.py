"""The ``blender`` synthesizer: every piece becomes a thin crumpled, creased sheet of paper
lit by one sun, rendered with Cycles (bpy), with a soft shadow on the table.

Registered with :mod:`shredfold.shred.synth` on import (the registry imports this module
only when a spec asks for ``mode: blender``). ``bpy`` itself is imported only by
:mod:`shredfold.shred.blender_scene`, and only when scraps are rendered, so planning and
sample keys never load Blender. One Blender scene per process, built on first use from
factory settings and reused: per piece only the mesh, its texture and the crumple seed
change; per sample the sun and every render setting are set again, so nothing leaks from
one sample to the next.

**Geometry.** The piece's outline (the sub-pixel 50 % contour of its alpha) is filled with
a near-regular triangulation (``MESH_STEP`` px) whose UVs map onto the piece's RGBA crop.
The piece image is already rotated, so mesh x/y are the piece's image pixels and the camera
looks straight down orthographically: paper never moves sideways, so the poses in
``hidden.json`` stay exact. Creases (0..``creases`` fold lines, each a shallow mountain or
valley V of up to ``crease_angle``) are written into vertex z; crumples are two Displace
modifiers with Blender's procedural textures (CLOUDS for the large bumps, VORONOI F2-F1 for
the faceted ridges of crumpled paper), seeded by moving the textures' coordinate object;
then Solidify (``thickness``). Geometry, not shader displacement, so shading stays cheap.
The sheet is lowered until its lowest point touches the table.

**Light.** One sun (``light_elevation``; ``light_azimuth``, else one random direction per
sample, so every scrap's shadow falls the same way on the table; ``light_softness`` is its
angular size) and a shadowless fill: the paper's emission, ``ambient`` of a flat sheet's
brightness. No sky light: nothing needs noisy hemisphere sampling, and direct light only
(zero bounces) is all a matte sheet on a table shows.

**Two Cycles passes per piece**, both with linear ("Raw") 16-bit output:

* *paper*: the table hidden, transparent film. With ``textured`` (preset ``high``) Cycles
  shades the page texture itself at the piece's full size. Otherwise the sheet is white
  and the pass records only its irradiance, at ``paper_scale`` of the size; the page
  texture (linear) is multiplied by the upsampled irradiance afterwards. For a Lambertian
  sheet under an orthographic top-down camera the two are the same sum (radiance = albedo
  x irradiance, and each pixel sees exactly its own texel), but irradiance is smooth at
  the mesh's scale, so a quarter of the pixels suffice and the text is never resampled.
* *shadow*: the paper invisible to the camera but casting shadows on a plain matte
  table, at ``shadow_scale`` of the size. The shadow is the fraction of sunlight the table
  lost (what a shadow catcher computes; a plain diffuse table measured 2x cheaper per
  sample than Cycles' shadow-catcher object), upsampled, and scaled by ``shadow_opacity``.

The paper's alpha is the piece's own (the camera cannot move the outline), the shadow lies
under it in black, and the result is the straight-alpha RGBA scrap.

**Table top.** Composited from the piece renders by the shared compositor
(:func:`shredfold.shred.synth.compose`), not rendered as one scene: Cycles pays per pixel,
so one big frame costs at least as much as the pieces' frames and would need rendering
again for every placement; the pieces share the sun, so their shadows agree.

**Determinism.** Cycles' seed comes from the sample's generator, adaptive sampling is off,
the thread count does not change Cycles' result, and the CPU kernel is pinned to SSE4.2
(``debug_use_cpu_avx2 = False``) so that machines with and without AVX2 run the same code;
the bpy wheel's version enters the key.
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import shapely
from scipy.spatial import Delaunay, QhullError
from shapely.geometry import Polygon
from skimage.measure import find_contours

from shredfold.shred.modes import (
    ALBEDO,
    BLEED,
    BLENDER_VERSION,
    MESH_STEP,
    OUTLINE_TOLERANCE,
    PAD_MIN,
    SHADOW_FLOOR,
    UNIT,
    blender_params,
)
from shredfold.shred.pieces import Piece
from shredfold.shred.synth import Compositing, Scrap, TableTop, register
from shredfold.spec import BlenderSettings, SynthesisSettings

if TYPE_CHECKING:
    from shredfold.shred.blender_scene import Scene

log = logging.getLogger(__name__)

_lock = threading.Lock()


def _with_bpy(module: str) -> ModuleType:
    """A module of the Blender scenes, or one line saying how to get bpy."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RuntimeError(
            "blender mode needs the bpy module (pinned in pyproject.toml; "
            f"`bash scripts/setup.sh` installs it): {exc}"
        ) from exc


# ------------------------------------------------------------------ colour


def _srgb_to_linear_lut() -> np.ndarray:
    c = np.arange(256, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _linear_to_srgb_lut(size: int = 1 << 16) -> np.ndarray:
    v = np.arange(size, dtype=np.float64) / (size - 1)
    s = np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)
    return np.clip(np.rint(s * 255.0), 0, 255).astype(np.uint8)


TO_LINEAR = _srgb_to_linear_lut()
TO_SRGB = _linear_to_srgb_lut()


def linear_to_srgb8(v: np.ndarray) -> np.ndarray:
    """Linear float in [0, 1] (clipped) to sRGB uint8 through a 65536-entry table."""
    idx = np.clip(np.rint(v * np.float32(len(TO_SRGB) - 1)), 0, len(TO_SRGB) - 1)
    return TO_SRGB[idx.astype(np.int32)]


# ------------------------------------------------------------------ geometry (numpy)


def outline(alpha: np.ndarray) -> Polygon:
    """The paper's outline in image coordinates (pixel corners at integers): the sub-pixel
    50 % contour of ``alpha``, the largest if there are several."""
    contours = find_contours(np.pad(alpha, 1).astype(np.float32), 127.5)
    # (row, col) of pixel centres in the padded array -> (x, y) with corners at integers.
    rings = [Polygon(c[:, ::-1] - 0.5) for c in contours if len(c) >= 4]
    rings = [r if r.is_valid else r.buffer(0) for r in rings]
    rings = [r for r in rings if r.geom_type == "Polygon" and not r.is_empty]
    if not rings:
        raise ValueError("piece has no opaque pixels")
    poly = max(rings, key=lambda p: p.area).simplify(OUTLINE_TOLERANCE, preserve_topology=True)
    return poly if poly.is_valid else poly.buffer(0)


def triangulate(poly: Polygon, step: float = MESH_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Points (x, y) and triangles (counter-clockwise seen from above) filling ``poly``: its
    densified outline plus a hexagonal lattice inside, Delaunay-triangulated, keeping the
    triangles whose centre is inside."""
    ring = np.asarray(shapely.segmentize(poly.exterior, step * 0.75).coords)[:-1]
    minx, miny, maxx, maxy = poly.bounds
    dy = step * math.sqrt(3) / 2
    ys = np.arange(miny + dy / 2, maxy, dy)
    xs = np.arange(minx + step / 2, maxx, step)
    gx, gy = np.meshgrid(xs, ys)
    gx = gx + (np.arange(len(ys))[:, None] % 2) * (step / 2)
    lattice = np.column_stack([gx.ravel(), gy.ravel()])
    inner = poly.buffer(-step * 0.45)
    if inner.is_empty:
        lattice = lattice[:0]
    else:
        lattice = lattice[shapely.contains_xy(inner, lattice[:, 0], lattice[:, 1])]
    pts = np.vstack([ring, lattice])
    try:
        tris = Delaunay(pts).simplices
        centres = pts[tris].mean(axis=1)
        tris = tris[shapely.contains_xy(poly, centres[:, 0], centres[:, 1])]
    except QhullError:  # a sliver: triangulate the outline alone
        tris = np.empty((0, 3), dtype=np.int64)
    if len(tris) == 0:
        parts = shapely.get_parts(shapely.constrained_delaunay_triangles(poly))
        corners = np.array([np.asarray(t.exterior.coords)[:3] for t in parts]).reshape(-1, 2)
        pts, inverse = np.unique(corners, axis=0, return_inverse=True)
        tris = inverse.reshape(-1, 3)
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    cross = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    # Image y points down and world y up: positive here is clockwise seen from above.
    flip = cross > 0
    tris[flip] = tris[flip][:, ::-1]
    return pts, tris


def crease_relief(pts: np.ndarray, count: int, angle: float, rng: np.random.Generator) -> np.ndarray:
    """Height (px) of ``count`` fold lines through the piece: each a V (mountain or valley)
    with sides tilted up to ``angle`` degrees."""
    z = np.zeros(len(pts))
    if count == 0 or angle <= 0.0:
        return z
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    for _ in range(count):
        theta = rng.uniform(0.0, math.pi)
        through = lo + rng.uniform(0.25, 0.75, 2) * (hi - lo)
        sign = 1.0 if rng.random() < 0.5 else -1.0
        slope = math.tan(math.radians(angle * rng.uniform(0.4, 1.0)))
        d = (pts - through) @ np.array([math.cos(theta), math.sin(theta)])
        z += sign * slope * np.abs(d)
    return z - z.min()


def bleed(rgba: np.ndarray, px: int = BLEED) -> np.ndarray:
    """RGB with the paper colour carried ``px`` pixels past the alpha edge, so texture
    filtering at the outline never mixes in the (black) transparent pixels."""
    a = rgba[..., 3:4].astype(np.float32) * np.float32(1 / 255)
    rgb = rgba[..., :3].astype(np.float32)
    k = 2 * px + 1
    num = cv2.blur(rgb * a, (k, k))
    den = cv2.blur(a, (k, k))[..., None]
    filled = np.where(den > 1e-4, num / np.maximum(den, 1e-4), 0.0)
    out = np.where(a >= 1.0, rgb, filled)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def fill_holes(value: np.ndarray, known: np.ndarray, rounds: int = 3) -> np.ndarray:
    """``value`` with pixels where ``known`` is False filled from known neighbours
    (normalised 3x3 averaging, ``rounds`` pixels deep; farther ones keep the mean)."""
    v = np.where(known, value, 0.0).astype(np.float32)
    w = known.astype(np.float32)
    if not w.any():
        return np.ones_like(v)
    mean = float(v.sum() / w.sum())
    for _ in range(rounds):
        num = cv2.blur(v * w, (3, 3))
        den = cv2.blur(w, (3, 3))
        grow = (w == 0) & (den > 0)
        v[grow] = num[grow] / den[grow]
        w = np.where(grow, 1.0, w).astype(np.float32)
    v[w == 0] = mean
    return v


@dataclass(frozen=True)
class Pads:
    left: int
    top: int
    right: int
    bottom: int


def shadow_pads(
    height_px: float, s: BlenderSettings, azimuth: float, size: tuple[int, int], multiple: int
) -> Pads:
    """Margins around a ``size`` piece that hold the shadow of paper up to ``height_px``
    above the table, grown on the right and bottom to make the frame a ``multiple``."""
    elev = math.radians(s.light_elevation)
    reach = height_px / max(math.tan(elev), 1e-3)
    spread = height_px * math.tan(math.radians(s.light_softness) / 2) / max(math.sin(elev), 1e-3)
    extra = spread + 2 * multiple  # upsampling the coarse shadow smears it a little
    # The shadow falls away from the sun (image y points down).
    dx = -math.cos(math.radians(azimuth)) * reach
    dy = math.sin(math.radians(azimuth)) * reach
    left = PAD_MIN + math.ceil(max(0.0, -dx) + extra)
    top = PAD_MIN + math.ceil(max(0.0, -dy) + extra)
    right = PAD_MIN + math.ceil(max(0.0, dx) + extra)
    bottom = PAD_MIN + math.ceil(max(0.0, dy) + extra)
    right += -(size[0] + left + right) % multiple
    bottom += -(size[1] + top + bottom) % multiple
    return Pads(left, top, right, bottom)


def over_shadow(paper: np.ndarray, alpha: np.ndarray, shadow: np.ndarray) -> np.ndarray:
    """RGBA uint8 (straight alpha): sRGB ``paper`` (HxWx3) with coverage ``alpha`` (uint8)
    over a black shadow of alpha ``shadow`` (float 0..1)."""
    a = alpha.astype(np.float32) * np.float32(1 / 255)
    out_a = a + shadow * (1.0 - a)
    out = np.zeros((*alpha.shape, 4), dtype=np.uint8)
    k = (a / np.maximum(out_a, 1e-6))[..., None]
    out[..., :3] = np.clip(np.rint(paper.astype(np.float32) * k), 0, 255)
    out[..., 3] = np.clip(np.rint(out_a * 255.0), 0, 255)
    out[out[..., 3] == 0] = 0
    return out


# ------------------------------------------------------------------ the synthesizer


def _threads() -> int:
    """Render threads: SHREDFOLD_BLENDER_THREADS, else 1 (Snakemake runs a job per core).
    Not part of the key: Cycles' result does not depend on the thread count."""
    return max(1, int(os.environ.get("SHREDFOLD_BLENDER_THREADS", "1")))


@register("blender")
class BlenderSynthesizer(Compositing):
    mode = "blender"
    version = BLENDER_VERSION

    def __init__(self, settings: SynthesisSettings) -> None:
        self.synthesis = settings
        self.settings: BlenderSettings = settings.blender

    def params(self) -> dict[str, Any]:
        return blender_params(self.synthesis)

    def scraps(self, pieces: Sequence[Piece], rng: np.random.Generator) -> list[Scrap]:
        s = self.settings
        if s.paper_scene:
            return self._paper_scraps(pieces, rng)
        azimuth = s.light_azimuth
        if azimuth is None:
            azimuth = round(float(rng.uniform(0.0, 360.0)), 6)
        scene = _with_bpy("shredfold.shred.blender_scene").scene
        with _lock:
            sc = scene()
            sc.configure(s, azimuth, _threads())
            t0 = time.perf_counter()
            try:
                out = [self._scrap(sc, p, azimuth, rng) for p in pieces]
            finally:
                sc.clear_piece()
        log.info(
            "blender: %d scraps in %.1f s (preset %s, azimuth %.0f)",
            len(pieces), time.perf_counter() - t0, s.preset, azimuth,
        )
        return out

    # ---------------------------------------------------------------- preset paper

    def _paper_scraps(self, pieces: Sequence[Piece], rng: np.random.Generator) -> list[Scrap]:
        """The authors' scene (:mod:`.blender_paper`): all pieces in one rendered frame; each
        scrap is cut out of it, and :meth:`table_top` returns the frame itself."""
        from shredfold.shred.blender_paper import render_frame, scrap_of

        _with_bpy("shredfold.shred.blender_paper_scene")  # bpy loads before the lock
        with _lock:
            frame = render_frame(pieces, rng, self.settings.quality(), _threads())
        out = [scrap_of(frame, k) for k in range(len(pieces))]
        self._frame = (frame, {id(sc): k for k, sc in enumerate(out)})
        return out

    def table_top(
        self, scraps: Sequence[Scrap], rng: np.random.Generator, settings: SynthesisSettings
    ) -> TableTop:
        if not self.settings.paper_scene:
            return super().table_top(scraps, rng, settings)
        from shredfold.shred.blender_paper import table_top_of

        frame, index = getattr(self, "_frame", (None, {}))
        try:
            order = [index[id(sc)] for sc in scraps]
        except KeyError:
            raise ValueError("preset paper: table_top takes the scraps of this synthesizer's last frame") from None
        return table_top_of(frame, order)

    def _scrap(self, sc: Scene, piece: Piece, azimuth: float, rng: np.random.Generator) -> Scrap:
        s = self.settings
        q = self.settings.quality()
        img = piece.image
        h, w = img.shape[:2]
        # Every random draw of the piece, in a fixed order.
        seed = int(rng.integers(0, 2**31 - 1))
        anchor = tuple(float(v) for v in rng.uniform(-100.0, 100.0, 3))
        turn = float(rng.uniform(0.0, 2 * math.pi))
        n_creases = int(rng.integers(0, s.creases + 1))
        crease_rng, grain_rng = rng.spawn(2)

        poly = outline(img[..., 3])
        pts, tris = triangulate(poly)
        z = crease_relief(pts, n_creases, s.crease_angle, crease_rng)
        verts = np.column_stack([pts[:, 0] * UNIT, -pts[:, 1] * UNIT, z * UNIT])
        uvs = np.column_stack([pts[:, 0] / w, 1.0 - pts[:, 1] / h])
        sc.set_piece(verts, tris, uvs, s, (*anchor, turn))  # type: ignore[arg-type]
        top = sc.rest_on_table()

        paper_scale, shadow_scale = float(q["paper_scale"]), float(q["shadow_scale"])
        textured = bool(q["textured"])
        multiple = max(round(1 / paper_scale), round(1 / shadow_scale))
        pads = shadow_pads(top + s.thickness, s, azimuth, (w, h), multiple)
        width, height = w + pads.left + pads.right, h + pads.top + pads.bottom
        sc.frame(-pads.left, -pads.top, width, height)
        inside = (slice(pads.top, pads.top + h), slice(pads.left, pads.left + w))

        texture = bleed(img)
        if textured:
            sc.set_texture(texture)
            lit = sc.render("paper", which="textured", samples=int(q["paper_samples"]),
                            scale=1.0, seed=seed)
            known = lit[..., 3] >= 0.999
            radiance = np.stack(
                [fill_holes(lit[..., c], known) for c in range(3)], axis=-1
            )[inside]
        else:
            lit = sc.render("paper", which="paper", samples=int(q["paper_samples"]),
                            scale=paper_scale, seed=seed)
            known = lit[..., 3] >= 0.999
            irradiance = fill_holes(lit[..., 1] * np.float32(1 / ALBEDO), known)
            if paper_scale != 1.0:
                irradiance = cv2.resize(irradiance, (width, height), interpolation=cv2.INTER_LINEAR)
            radiance = TO_LINEAR[texture] * irradiance[inside][..., None]
        paper_rgb = linear_to_srgb8(radiance)
        if s.grain > 0:
            noise = grain_rng.standard_normal(paper_rgb.shape, dtype=np.float32)
            noise *= np.float32(s.grain)
            noise += paper_rgb
            paper_rgb = np.clip(np.rint(noise), 0, 255).astype(np.uint8)

        table = sc.render("shadow", which="shadow", samples=int(q["shadow_samples"]),
                          scale=shadow_scale, seed=seed)
        lit_table = ALBEDO * (1.0 - s.ambient)
        lost = 1.0 - table[..., 0] / np.float32(max(lit_table, 1e-6))
        lost = np.clip((lost - SHADOW_FLOOR) / (1.0 - SHADOW_FLOOR), 0.0, 1.0)
        if shadow_scale != 1.0:
            lost = cv2.resize(lost, (width, height), interpolation=cv2.INTER_LINEAR)
        shadow = lost * np.float32(s.shadow_opacity)

        rgb = np.zeros((height, width, 3), dtype=np.uint8)
        alpha = np.zeros((height, width), dtype=np.uint8)
        rgb[inside] = paper_rgb
        alpha[inside] = img[..., 3]
        out = over_shadow(rgb, alpha, shadow)
        return Scrap(image=out, paper=alpha > 0, origin=(pads.left, pads.top))
