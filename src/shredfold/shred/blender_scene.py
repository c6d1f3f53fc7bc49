"""The Blender half of the ``blender`` synthesizer: the one module that imports ``bpy``.

:mod:`shredfold.shred.blender` (settings, keys, geometry, compositing) imports this module
only when it renders, so planning and key computation never load Blender. One scene per
process (:func:`scene`), built on first use from factory settings; see
:mod:`shredfold.shred.blender` for what is rendered and why.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bpy
import cv2
import numpy as np

from shredfold.shred.modes import (
    ALBEDO,
    CLOUDS_DEPTH,
    FILTER_WIDTH,
    UNIT,
    VORONOI_SCALE,
    VORONOI_SHARE,
)
from shredfold.spec import BlenderSettings

log = logging.getLogger(__name__)


# ------------------------------------------------------------------ process-wide scene


@contextlib.contextmanager
def _quiet(sink: Path) -> Iterator[None]:
    """Route C-level stdout/stderr (Cycles' progress lines) into ``sink``, then into this
    module's log at DEBUG level (the job log when enabled)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    fd = os.open(sink, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        libc.fflush(None)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)
        if log.isEnabledFor(logging.DEBUG):
            text = sink.read_text(errors="replace").strip()
            if text:
                log.debug("blender output:\n%s", text)


def _diffuse_material(name: str, emission: bool, texture: bool) -> tuple[Any, Any, Any, Any]:
    """A matte material; returns (material, diffuse node, emission node, image node)."""
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    mat.cycles.emission_sampling = "NONE"  # the fill light is not a lamp to sample
    nt = mat.node_tree
    nt.nodes.clear()
    out = nt.nodes.new("ShaderNodeOutputMaterial")
    diffuse = nt.nodes.new("ShaderNodeBsdfDiffuse")
    diffuse.inputs["Color"].default_value = (ALBEDO, ALBEDO, ALBEDO, 1.0)
    surface = diffuse.outputs["BSDF"]
    em = tex = None
    if emission:
        em = nt.nodes.new("ShaderNodeEmission")
        em.inputs["Color"].default_value = (ALBEDO, ALBEDO, ALBEDO, 1.0)
        add = nt.nodes.new("ShaderNodeAddShader")
        nt.links.new(diffuse.outputs["BSDF"], add.inputs[0])
        nt.links.new(em.outputs["Emission"], add.inputs[1])
        surface = add.outputs["Shader"]
    if texture:
        tex = nt.nodes.new("ShaderNodeTexImage")
        tex.interpolation = "Linear"
        tex.extension = "EXTEND"
        nt.links.new(tex.outputs["Color"], diffuse.inputs["Color"])
        if em is not None:
            nt.links.new(tex.outputs["Color"], em.inputs["Color"])
    nt.links.new(surface, out.inputs["Surface"])
    return mat, diffuse, em, tex


class Scene:
    """The one Blender scene of this process: camera, sun, table, materials and the crumple
    textures. Per piece only the mesh and its image change."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="shredfold-blender-"))
        atexit.register(shutil.rmtree, self.tmp, True)
        self.sink = self.tmp / "blender.log"
        with _quiet(self.sink):
            bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.context.preferences.filepaths.temporary_directory = str(self.tmp)
        sc = bpy.context.scene
        self.scene = sc
        sc.render.engine = "CYCLES"

        world = bpy.data.worlds.new("World")
        world.use_nodes = True
        world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.0
        sc.world = world

        cam_data = bpy.data.cameras.new("Camera")
        cam_data.type = "ORTHO"
        cam_data.sensor_fit = "AUTO"
        cam_data.clip_start = 0.01
        cam_data.clip_end = 100.0
        self.camera = bpy.data.objects.new("Camera", cam_data)
        sc.collection.objects.link(self.camera)
        sc.camera = self.camera

        self.sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
        sc.collection.objects.link(self.sun)

        table_mesh = bpy.data.meshes.new("Table")
        big = 1000.0
        table_mesh.from_pydata(
            [(-big, -big, 0.0), (big, -big, 0.0), (big, big, 0.0), (-big, big, 0.0)],
            [],
            [(0, 1, 2, 3)],
        )
        self.table = bpy.data.objects.new("Table", table_mesh)
        sc.collection.objects.link(self.table)
        table_mat = _diffuse_material("Table", emission=False, texture=False)[0]
        table_mesh.materials.append(table_mat)

        self.white, _, self.white_fill, _ = _diffuse_material("PaperWhite", True, False)
        self.textured, _, self.textured_fill, self.image_node = _diffuse_material(
            "PaperTextured", True, True
        )
        self.caster = _diffuse_material("ShadowCaster", emission=False, texture=False)[0]

        # The crumple textures read their coordinates from this empty: moving it per piece
        # seeds the pattern.
        self.anchor = bpy.data.objects.new("CrumpleAnchor", None)
        sc.collection.objects.link(self.anchor)
        self.clouds = bpy.data.textures.new("Clouds", "CLOUDS")
        self.clouds.noise_basis = "ORIGINAL_PERLIN"
        self.clouds.noise_type = "SOFT_NOISE"
        self.clouds.noise_depth = CLOUDS_DEPTH
        self.voronoi = bpy.data.textures.new("Voronoi", "VORONOI")
        self.voronoi.distance_metric = "DISTANCE"
        self.voronoi.color_mode = "INTENSITY"
        self.voronoi.weight_1 = -1.0  # F2 - F1: ridges along the cell borders
        self.voronoi.weight_2 = 1.0
        self.voronoi.weight_3 = 0.0
        self.voronoi.weight_4 = 0.0
        self.voronoi.noise_intensity = 1.0

        self.piece: Any = None
        self.image: Any = None

    # ---------------------------------------------------------------- per sample

    def configure(self, s: BlenderSettings, azimuth: float, threads: int) -> None:
        """Every setting a render reads that is the same for all pieces of a sample."""
        sc = self.scene
        sc.view_settings.view_transform = "Raw"  # linear out: we convert to sRGB ourselves
        sc.view_settings.look = "None"
        sc.view_settings.exposure = 0.0
        sc.view_settings.gamma = 1.0
        sc.view_settings.use_curve_mapping = False
        sc.display_settings.display_device = "sRGB"
        r = sc.render
        r.film_transparent = True
        r.use_compositing = False
        r.use_sequencer = False
        r.dither_intensity = 0.0
        r.use_persistent_data = False
        r.image_settings.file_format = "PNG"
        r.image_settings.color_mode = "RGBA"
        r.image_settings.color_depth = "16"
        r.image_settings.compression = 0
        r.threads_mode = "FIXED"
        r.threads = threads
        r.resolution_percentage = 100
        r.pixel_aspect_x = r.pixel_aspect_y = 1.0
        r.use_border = False
        c = sc.cycles
        c.device = "CPU"
        c.feature_set = "SUPPORTED"
        c.use_adaptive_sampling = False
        c.use_denoising = False
        c.use_animated_seed = False
        c.sample_offset = 0
        c.use_light_tree = False
        c.max_bounces = 0  # direct light only
        c.diffuse_bounces = c.glossy_bounces = c.transmission_bounces = 0
        c.volume_bounces = 0
        c.transparent_max_bounces = 0
        c.caustics_reflective = c.caustics_refractive = False
        c.sample_clamp_direct = c.sample_clamp_indirect = 0.0
        c.pixel_filter_type = "BOX"
        c.filter_width = FILTER_WIDTH
        c.use_auto_tile = False
        c.film_exposure = 1.0
        c.debug_use_cpu_avx2 = False
        c.debug_use_cpu_sse42 = True

        elev = math.radians(s.light_elevation)
        sun = self.sun.data
        sun.angle = math.radians(s.light_softness)
        sun.use_shadow = True
        # A flat sheet facing up then shows exactly its page colour: fill + sun = 1.
        sun.energy = (1.0 - s.ambient) * math.pi / max(math.sin(elev), 1e-3)
        sun.color = (1.0, 1.0, 1.0)
        # The sun shines along its -Z axis: tilted from the zenith about X it comes from -Y
        # (world), then turned about Z so that it comes from ``azimuth`` (counter-clockwise
        # on screen from the image's right).
        self.sun.rotation_euler = (math.pi / 2 - elev, 0.0, math.radians(azimuth) + math.pi / 2)
        # Fill light: the white sheet's emission is relative to its albedo.
        self.white_fill.inputs["Strength"].default_value = s.ambient
        self.textured_fill.inputs["Strength"].default_value = s.ambient
        self.clouds.noise_scale = s.crumple_scale * UNIT
        self.voronoi.noise_scale = s.crumple_scale * VORONOI_SCALE * UNIT

    # ---------------------------------------------------------------- per piece

    def set_piece(
        self,
        verts: np.ndarray,
        tris: np.ndarray,
        uvs: np.ndarray,
        s: BlenderSettings,
        anchor: tuple[float, float, float, float],
    ) -> None:
        self.clear_piece()
        mesh = bpy.data.meshes.new("Piece")
        mesh.vertices.add(len(verts))
        mesh.vertices.foreach_set("co", verts.astype(np.float32).ravel())
        mesh.loops.add(tris.size)
        mesh.loops.foreach_set("vertex_index", tris.astype(np.int32).ravel())
        mesh.polygons.add(len(tris))
        mesh.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
        mesh.polygons.foreach_set("loop_total", np.full(len(tris), 3, dtype=np.int32))
        uv = mesh.uv_layers.new(name="UVMap")
        uv.data.foreach_set("uv", uvs[tris.ravel()].astype(np.float32).ravel())
        mesh.update()
        mesh.shade_smooth()
        mesh.materials.append(self.white)
        obj = bpy.data.objects.new("Piece", mesh)
        self.scene.collection.objects.link(obj)

        ax, ay, az, turn = anchor
        self.anchor.location = (ax, ay, az)
        self.anchor.rotation_euler = (0.0, 0.0, turn)
        if s.crumple > 0.0:
            for name, tex, share, mid in (
                ("Clouds", self.clouds, 1.0 - VORONOI_SHARE, 0.5),
                ("Voronoi", self.voronoi, VORONOI_SHARE, 0.0),
            ):
                mod = obj.modifiers.new(name, "DISPLACE")
                mod.texture = tex
                mod.texture_coords = "OBJECT"
                mod.texture_coords_object = self.anchor
                mod.direction = "Z"
                mod.space = "LOCAL"
                mod.mid_level = mid
                mod.strength = s.crumple * share * UNIT
        if s.thickness > 0.0:
            solid = obj.modifiers.new("Solidify", "SOLIDIFY")
            solid.thickness = s.thickness * UNIT
            solid.offset = -1.0  # grow downwards: the top surface keeps its place
            solid.use_even_offset = False
        self.piece = obj

    def set_texture(self, rgb: np.ndarray) -> None:
        """The piece's page pixels (sRGB uint8, HxWx3) as the textured material's image."""
        h, w = rgb.shape[:2]
        img = bpy.data.images.new("Page", w, h, alpha=False)
        img.colorspace_settings.name = "sRGB"
        rgba = np.ones((h, w, 4), dtype=np.float32)
        rgba[..., :3] = rgb[::-1]  # Blender stores the bottom row first
        rgba[..., :3] *= np.float32(1.0 / 255.0)
        img.pixels.foreach_set(rgba.ravel())
        img.update()
        self.image_node.image = img
        self.image = img

    def rest_on_table(self) -> float:
        """Lower the sheet until its lowest point touches the table; its height there, px."""
        obj = self.piece
        obj.location = (0.0, 0.0, 0.0)
        deps = bpy.context.evaluated_depsgraph_get()
        deps.update()
        ev = obj.evaluated_get(deps)
        mesh = ev.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
        z = co[2::3]
        low, high = float(z.min()), float(z.max())
        obj.location = (0.0, 0.0, -low)
        return (high - low) / UNIT

    def frame(self, x0: int, y0: int, width: int, height: int) -> None:
        """Camera over the piece-pixel rectangle [x0, x0 + width) x [y0, y0 + height)."""
        cam = self.camera
        cam.location = ((x0 + width / 2) * UNIT, -(y0 + height / 2) * UNIT, 50.0)
        cam.rotation_euler = (0.0, 0.0, 0.0)
        cam.data.ortho_scale = max(width, height) * UNIT
        cam.data.shift_x = cam.data.shift_y = 0.0
        self.size = (width, height)

    def render(self, name: str, *, which: str, samples: int, scale: float, seed: int) -> np.ndarray:
        """One pass ("paper", "textured" or "shadow"): linear float32 RGBA, HxWx4."""
        sc = self.scene
        width, height = self.size
        sc.render.resolution_x = max(1, round(width * scale))
        sc.render.resolution_y = max(1, round(height * scale))
        sc.cycles.samples = samples
        sc.cycles.seed = seed
        paper = which != "shadow"
        self.table.hide_render = paper
        self.piece.visible_camera = paper
        self.piece.visible_shadow = True
        self.piece.data.materials[0] = {
            "paper": self.white, "textured": self.textured, "shadow": self.caster
        }[which]
        path = self.tmp / f"{name}.png"
        sc.render.filepath = str(path)
        try:
            with _quiet(self.sink):
                bpy.ops.render.render(write_still=True)
            raw = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        finally:
            path.unlink(missing_ok=True)
        if raw is None or raw.dtype != np.uint16 or raw.shape[2] != 4:
            raise RuntimeError(f"Blender wrote no 16-bit RGBA image for the {which} pass")
        rgba = cv2.cvtColor(raw, cv2.COLOR_BGRA2RGBA).astype(np.float32)
        rgba *= np.float32(1.0 / 65535.0)
        return rgba

    def clear_piece(self) -> None:
        if self.piece is not None:
            mesh = self.piece.data
            bpy.data.objects.remove(self.piece, do_unlink=True)
            bpy.data.meshes.remove(mesh, do_unlink=True)
            self.piece = None
        if self.image is not None:
            self.image_node.image = None
            bpy.data.images.remove(self.image, do_unlink=True)
            self.image = None


_SCENE: Scene | None = None


def scene() -> Scene:
    """This process's Blender scene, built on first use."""
    global _SCENE
    if _SCENE is None:
        _SCENE = Scene()
    return _SCENE
