"""What shapes each synthesis mode's output beyond the spec's settings: its version and
constants, as they enter every sample key.

The synthesizers (:mod:`.scraps`, :mod:`.blender`, the shared compositor in :mod:`.synth`)
take their constants from here, so planning can compute sample keys without importing
OpenCV, SciPy or Blender. A new mode adds its entry to :data:`MODES`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shredfold.spec import SynthesisSettings
from shredfold.versions import version

# ---------------------------------------------------------------- the shared compositor

COMPOSITOR_VERSION = 2  # 2: no speckle on the table
COARSE = 8  # px: placement grid (free positions are found exactly on this grid)
GROW = 1.1  # table growth factor when a scrap finds no room
FILL = 2.0  # initial table area / total paper area (cropped to the heap afterwards)
SPREAD = 0.15  # scatter of the scraps' target points, as a fraction of the table size
ASPECT = 4 / 3  # initial table width / height: a landscape photo of a desk
# No grain or speckle on the table, only its broad tint: it is the largest area of the largest
# image, and a 4 px speckle there was 40% of the composite's JPEG bytes (and the grain, once,
# most of its time and PNG bytes).
TABLE_TEXTURE = {
    "strength": 1.0,
    "blotch": 7.0,
    "grain": 0.0,
    "speckle": 0.0,
    "cell": 360,
    "warm": 0.1,
}


def compositor_params() -> dict[str, Any]:
    return {
        "version": COMPOSITOR_VERSION,
        "coarse": COARSE,
        "grow": GROW,
        "fill": FILL,
        "spread": SPREAD,
        "aspect": round(ASPECT, 6),
        "texture": TABLE_TEXTURE,
    }


# ---------------------------------------------------------------- flat (2D) scraps

FLAT_VERSION = 2  # 2: soft (half-resolution) sensor noise
TINT_SCALE = 0.03  # spread of the sheet's warm-cool shift at tint = 1
WARM = (0.6, 0.2, -0.8)  # per-channel direction of "warmer": yellowish white, not pink/green
BRIGHTNESS_SCALE = 0.025  # per-scrap brightness spread at tint = 1
NOISE_TILE = 383  # one noise tile per sample, read from a random offset per scrap
EDGE_SHADE = 0.88  # gain on the paper's outermost pixel: cut edges catch less light


def flat_params(settings: SynthesisSettings) -> dict[str, Any]:
    return {
        "tint_scale": TINT_SCALE,
        "warm": WARM,
        "brightness_scale": BRIGHTNESS_SCALE,
        "noise_tile": NOISE_TILE,
        "edge_shade": EDGE_SHADE,
        "compositor": compositor_params(),
    }


# ---------------------------------------------------------------- Blender scraps

BLENDER_VERSION = 1
UNIT = 0.01  # Blender units per page pixel (keeps the scene near 1..10 units)
MESH_STEP = 8.0  # px between mesh vertices
OUTLINE_TOLERANCE = 0.35  # px, simplification of the alpha contour
CLOUDS_DEPTH = 3
VORONOI_SHARE = 0.5  # share of the crumple relief from the faceted (Voronoi) ridges
VORONOI_SCALE = 0.6  # Voronoi cell size relative to crumple_scale
ALBEDO = 0.5  # of the white sheet and the table in the lighting passes (headroom below 1)
SHADOW_FLOOR = 0.03  # sunlight lost below this is sampling noise, not shadow
PAD_MIN = 3  # px of transparent margin on every side of a scrap
FILTER_WIDTH = 0.01  # px: Cycles samples at pixel centres, so each pixel sees its own texel
BLEED = 3  # px the paper colour is carried past the outline for texture filtering


@functools.cache
def bpy_version() -> str:
    """The installed bpy wheel (its version fixes Blender's build), without importing it."""
    return version("bpy")


# ---------------------------------------------------------------- the authors' scene (preset paper)

PAPER_VERSION = 2  # 2: packing masks turned by Pillow and grown wrapping round their grid, as theirs
# Their blenderprocess_.py, value for value (names as theirs where they have one).
PAPER_SCENE: dict[str, Any] = {
    "resolution": 4096,  # px, square frame
    "pixels_per_meter": 500.0,  # page px per Blender unit
    "cuts": 40,  # subdivisions of each piece's rectangle
    "thickness": 0.002,  # Solidify, m (offset -1: the sheet grows downwards)
    "subsurf": 2,
    "marble": {"strength": 0.15, "noise_scale": 1.5},  # Displace, along normals
    "musgrave": {"strength": 0.02, "noise_scale": 8.0},
    "field_offset": 100.0,  # m: each piece reads both fields from its own random offset
    "mask_threshold": 0.9,  # mask > this is paper, else transparent
    "packing_downsample": 0.1,
    "packing_padding": 30,  # px, dilation of each mask on the packing grid
    "packing_step": 4,  # cells between tried positions
    "packing_area_share": 0.5,  # the packing square holds the masks at this density
    "height": (0.01, 0.05),  # m above the origin, uniform per piece
    "camera_height": 20.0,
    "camera_margin": 1.05,  # ortho scale = largest side of the pieces' box x this
    "light_energy": 15000.0,  # W, square area light
    "light_height": 15.0,
    "light_size": 1.5,  # x ortho scale
    "ground_albedo": 0.05,  # Principled, roughness 1, otherwise Blender's defaults
    "ground_z": -0.1,
    "ground_size": 3.0,  # x ortho scale
    "world": 0.05087608844041824,  # the factory startup file's grey world (their scene kept it)
    "view_transform": "AgX",  # the factory default, which their renders went through
    "bounces": {"max": 32, "diffuse": 8, "glossy": 8, "transparent": 128},
    "light_tree": True,
    "pad": 2,  # px of the page around each piece's box (their crop)
    # Their cutter's Voronoi seeds are uniform (np.random.rand), not spread: uneven cells,
    # whose boxes pack looser, so the frame shows the text smaller (bench/paper_fidelity.md).
    "cut_seeds": "uniform",
}
PAPER_FILTER = 0.01  # px: the lighting pass samples pixel centres (see blender_paper)
PAPER_LIGHT_SMOOTH = 1.0  # lighting-pass px: Gaussian within each surface before upsampling
PAPER_ALBEDO = 0.85  # linear albedo of the flat sheet in the lighting pass
PAPER_FIREFLY = 1.5  # a lighting-pass pixel is held to this x its neighbourhood's median


def paper_params(settings: SynthesisSettings) -> dict[str, Any]:
    return {
        "bpy": bpy_version(),
        "version": PAPER_VERSION,
        "quality": settings.blender.quality(),
        "scene": PAPER_SCENE,
        "filter": PAPER_FILTER,
        "light_smooth": PAPER_LIGHT_SMOOTH,
        "albedo": PAPER_ALBEDO,
        "firefly": PAPER_FIREFLY,
    }


def blender_params(settings: SynthesisSettings) -> dict[str, Any]:
    if settings.blender.paper_scene:
        return paper_params(settings)
    return {
        "bpy": bpy_version(),
        "quality": settings.blender.quality(),
        "unit": UNIT,
        "mesh_step": MESH_STEP,
        "outline_tolerance": OUTLINE_TOLERANCE,
        "clouds_depth": CLOUDS_DEPTH,
        "voronoi_share": VORONOI_SHARE,
        "voronoi_scale": VORONOI_SCALE,
        "albedo": ALBEDO,
        "shadow_floor": SHADOW_FLOOR,
        "pad_min": PAD_MIN,
        "filter_width": FILTER_WIDTH,
        "bleed": BLEED,
        "compositor": compositor_params(),
    }


# ---------------------------------------------------------------- the modes


@dataclass(frozen=True)
class Mode:
    version: int
    module: str  # the module that registers the synthesizer (imported when one is built)
    params: Callable[[SynthesisSettings], dict[str, Any]]


MODES: dict[str, Mode] = {
    "flat": Mode(FLAT_VERSION, "shredfold.shred.scraps", flat_params),
    "blender": Mode(BLENDER_VERSION, "shredfold.shred.blender", blender_params),
}


def mode_identity(settings: SynthesisSettings) -> dict[str, Any]:
    """The synthesizer's part of a sample key: mode, version and constants."""
    mode = MODES.get(settings.mode)
    if mode is None:
        raise ValueError(f"unknown synthesizer mode {settings.mode!r}; known: {', '.join(sorted(MODES))}")
    return {"mode": settings.mode, "version": mode.version, "params": mode.params(settings)}
