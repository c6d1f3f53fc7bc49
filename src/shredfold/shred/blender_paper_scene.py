"""The Blender half of the paper scene (preset ``paper``): the authors' objects, light,
ground and camera, built with ``bpy`` in a scene of its own; the evaluated meshes; the
lighting pass; Blender's view transform. What is rendered and why: :mod:`.blender_paper`.

Built from their ``blenderprocess_.py``, value for value (:data:`~.modes.PAPER_SCENE`): per
piece a rectangle of the piece's box, ``cuts`` subdivisions, Solidify, Subsurf and two
Displace modifiers (a Marble and a Musgrave texture, along the normals) in their order and
with Blender's defaults elsewhere, smooth shading, a Principled sheet (roughness 1, no
specular) cut by the mask (> threshold: paper, else a Transparent BSDF); a square area light
above the middle, a dark Principled ground below, the factory file's grey world, an
orthographic camera looking straight down. Their startup scene's defaults they relied on are
set here explicitly (AgX, the world), since this scene starts empty.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bpy
import cv2
import numpy as np

from shredfold.shred.blender_scene import _quiet
from shredfold.shred.modes import PAPER_ALBEDO, PAPER_FILTER, PAPER_SCENE

SCENE_NAME = "ShredfoldPaper"


@dataclass(frozen=True)
class SheetSpec:
    """One piece to build: its box in page px, where it lies (Blender units), how it is
    turned (degrees counter-clockwise from above), the offset its relief fields are read at,
    and its mask (uint8, rows top first)."""

    width: int
    height: int
    location: tuple[float, float, float]
    angle: float
    field_offset: tuple[float, float, float]
    mask: np.ndarray


@dataclass(frozen=True)
class View:
    """The camera: centre (x, y) and the side of the square it sees, Blender units."""

    x: float
    y: float
    side: float


def _grid(width: float, height: float, cuts: int, angle: float) -> tuple[np.ndarray, list[tuple[int, int, int, int]], np.ndarray]:
    """A unit plane scaled to ``width`` x ``height`` and turned, subdivided ``cuts`` times:
    the authors' ``primitive_plane_add`` + ``transform_apply`` + ``subdivide``. Returns
    vertices, quads (counter-clockwise from above) and per-corner UVs (their plane's)."""
    n = cuts + 1
    s = np.linspace(-0.5, 0.5, n + 1)
    gx, gy = np.meshgrid(s, s)  # row r: y = s[r] (bottom first)
    t = math.radians(angle)
    c, si = math.cos(t), math.sin(t)
    lx, ly = gx.ravel() * width, gy.ravel() * height
    verts = np.column_stack([c * lx - si * ly, si * lx + c * ly, np.zeros(lx.size)])
    quads = []
    uv = []
    for r in range(n):
        for q in range(n):
            a = r * (n + 1) + q
            quad = (a, a + 1, a + n + 2, a + n + 1)
            quads.append(quad)
            uv.extend((gx.flat[k] + 0.5, gy.flat[k] + 0.5) for k in quad)
    return verts, quads, np.asarray(uv, dtype=np.float32)


class PaperScene:
    """The paper scene of this process (one Blender scene, rebuilt per frame)."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="shredfold-paper-"))
        atexit.register(shutil.rmtree, self.tmp, True)
        self.sink = self.tmp / "blender.log"
        old = bpy.data.scenes.get(SCENE_NAME)
        if old is not None:
            bpy.data.scenes.remove(old)
        sc = bpy.data.scenes.new(SCENE_NAME)
        self.scene = sc
        sc.render.engine = "CYCLES"
        p = PAPER_SCENE
        world = bpy.data.worlds.new(SCENE_NAME)
        world.use_nodes = True
        bg = world.node_tree.nodes["Background"]
        bg.inputs["Color"].default_value = (p["world"], p["world"], p["world"], 1.0)
        bg.inputs["Strength"].default_value = 1.0
        sc.world = world
        self.marble = bpy.data.textures.new(f"{SCENE_NAME}Marble", "MARBLE")
        self.marble.noise_scale = p["marble"]["noise_scale"]
        self.musgrave = bpy.data.textures.new(f"{SCENE_NAME}Musgrave", "MUSGRAVE")
        self.musgrave.noise_scale = p["musgrave"]["noise_scale"]
        self.ground_material = bpy.data.materials.new(f"{SCENE_NAME}Ground")
        self.ground_material.use_nodes = True
        bsdf = self.ground_material.node_tree.nodes["Principled BSDF"]
        a = p["ground_albedo"]
        bsdf.inputs["Base Color"].default_value = (a, a, a, 1.0)
        bsdf.inputs["Roughness"].default_value = 1.0
        self._compositor()
        self.data: list[Any] = []  # everything made per frame, removed by clear()
        self.sheets: list[Any] = []

    def _compositor(self) -> None:
        """The lighting pass's file: linear RGB of the combined pass, the object index as
        alpha (one EXR, read back exactly)."""
        sc = self.scene
        sc.use_nodes = True
        sc.view_layers[0].use_pass_object_index = True
        nt = sc.node_tree
        nt.nodes.clear()
        layers = nt.nodes.new("CompositorNodeRLayers")
        layers.scene = sc
        split = nt.nodes.new("CompositorNodeSeparateColor")
        join = nt.nodes.new("CompositorNodeCombineColor")
        out = nt.nodes.new("CompositorNodeComposite")
        nt.links.new(layers.outputs["Image"], split.inputs["Image"])
        for c in ("Red", "Green", "Blue"):
            nt.links.new(split.outputs[c], join.inputs[c])
        nt.links.new(layers.outputs["IndexOB"], join.inputs["Alpha"])
        nt.links.new(join.outputs["Image"], out.inputs["Image"])

    def _link(self, obj: Any) -> Any:
        self.scene.collection.objects.link(obj)
        self.data.append(obj)
        return obj

    def _paper_material(self, k: int, mask: np.ndarray) -> Any:
        h, w = mask.shape
        img = bpy.data.images.new(f"{SCENE_NAME}Mask{k}", w, h, alpha=False)
        img.colorspace_settings.name = "Non-Color"
        px = np.ones((h, w, 4), dtype=np.float32)
        px[..., :3] = mask[::-1, :, None] * np.float32(1 / 255)
        img.pixels.foreach_set(px.ravel())
        img.update()
        mat = bpy.data.materials.new(f"{SCENE_NAME}Paper{k}")
        mat.use_nodes = True
        nt = mat.node_tree
        nt.nodes.clear()
        out = nt.nodes.new("ShaderNodeOutputMaterial")
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
        bsdf.inputs["Base Color"].default_value = (PAPER_ALBEDO, PAPER_ALBEDO, PAPER_ALBEDO, 1.0)
        bsdf.inputs["Roughness"].default_value = 1.0
        bsdf.inputs["Specular IOR Level"].default_value = 0.0
        tex = nt.nodes.new("ShaderNodeTexImage")
        tex.image = img
        tex.interpolation = "Linear"
        test = nt.nodes.new("ShaderNodeMath")
        test.operation = "GREATER_THAN"
        test.inputs[1].default_value = PAPER_SCENE["mask_threshold"]
        mix = nt.nodes.new("ShaderNodeMixShader")
        clear = nt.nodes.new("ShaderNodeBsdfTransparent")
        nt.links.new(tex.outputs["Color"], test.inputs[0])
        nt.links.new(test.outputs["Value"], mix.inputs["Fac"])
        nt.links.new(clear.outputs["BSDF"], mix.inputs[1])
        nt.links.new(bsdf.outputs["BSDF"], mix.inputs[2])
        nt.links.new(mix.outputs["Shader"], out.inputs["Surface"])
        self.data.extend([img, mat])
        return mat

    # ---------------------------------------------------------------- per frame

    def build(self, specs: list[SheetSpec]) -> None:
        """The pieces as the authors' objects (sheet k has pass index k + 1)."""
        self.clear()
        p = PAPER_SCENE
        ppm = p["pixels_per_meter"]
        for k, sp in enumerate(specs):
            verts, quads, uv = _grid(sp.width / ppm, sp.height / ppm, p["cuts"], sp.angle)
            mesh = bpy.data.meshes.new(f"{SCENE_NAME}Piece{k}")
            mesh.from_pydata(verts.tolist(), [], quads)
            layer = mesh.uv_layers.new(name="UVMap")
            layer.uv.foreach_set("vector", uv.ravel())
            mesh.update()
            mesh.shade_smooth()
            mesh.materials.append(self._paper_material(k, sp.mask))
            self.data.append(mesh)
            obj = self._link(bpy.data.objects.new(f"{SCENE_NAME}Piece{k}", mesh))
            obj.location = sp.location
            obj.pass_index = k + 1
            # Their fields are read in each object's local space; an empty at location -
            # offset moves where this piece reads them (OBJECT coordinates = local + offset).
            anchor = self._link(bpy.data.objects.new(f"{SCENE_NAME}Field{k}", None))
            anchor.location = tuple(a - o for a, o in zip(sp.location, sp.field_offset, strict=True))
            solid = obj.modifiers.new("Thickness", "SOLIDIFY")
            solid.thickness = p["thickness"]
            sub = obj.modifiers.new("Subsurf", "SUBSURF")
            sub.levels = sub.render_levels = p["subsurf"]
            for name, tex, cfg in (("LargeWave", self.marble, p["marble"]),
                                   ("SharpCrumple", self.musgrave, p["musgrave"])):
                mod = obj.modifiers.new(name, "DISPLACE")
                mod.texture = tex
                mod.strength = cfg["strength"]
                mod.texture_coords = "OBJECT"
                mod.texture_coords_object = anchor
            self.sheets.append(obj)

    def triangles(self) -> tuple[list[np.ndarray], list[np.ndarray], list[tuple[float, float, float, float]]]:
        """Per sheet, its evaluated triangles in world space (T, 3, 3), their corners' UVs
        (T, 3, 2) and the box the authors fit the camera to: location -/+ dimensions / 2."""
        deps = self.scene.view_layers[0].depsgraph
        deps.update()
        corners, uvs, boxes = [], [], []
        for obj in self.sheets:
            ev = obj.evaluated_get(deps)
            mesh = ev.to_mesh()
            try:
                mesh.calc_loop_triangles()
                nv, nt = len(mesh.vertices), len(mesh.loop_triangles)
                co = np.empty(nv * 3, dtype=np.float32)
                mesh.vertices.foreach_get("co", co)
                co = co.reshape(-1, 3).astype(np.float64)
                tv = np.empty(nt * 3, dtype=np.int32)
                mesh.loop_triangles.foreach_get("vertices", tv)
                tl = np.empty(nt * 3, dtype=np.int32)
                mesh.loop_triangles.foreach_get("loops", tl)
                uv = np.empty(len(mesh.loops) * 2, dtype=np.float32)
                mesh.uv_layers.active.uv.foreach_get("vector", uv)
            finally:
                ev.to_mesh_clear()
            lo, hi = co.min(axis=0), co.max(axis=0)
            loc = np.asarray(obj.location, dtype=np.float64)
            dims = hi - lo
            boxes.append((loc[0] - dims[0] / 2, loc[0] + dims[0] / 2, loc[1] - dims[1] / 2, loc[1] + dims[1] / 2))
            corners.append((co + loc)[tv].reshape(-1, 3, 3))
            uvs.append(uv.reshape(-1, 2)[tl].reshape(-1, 3, 2).astype(np.float64))
        return corners, uvs, boxes

    def frame(self, view: View) -> None:
        """Their camera, light and ground for ``view``."""
        p = PAPER_SCENE
        cam_data = bpy.data.cameras.new(f"{SCENE_NAME}Camera")
        cam_data.type = "ORTHO"
        cam_data.ortho_scale = view.side
        self.data.append(cam_data)
        cam = self._link(bpy.data.objects.new(f"{SCENE_NAME}Camera", cam_data))
        cam.location = (view.x, view.y, p["camera_height"])
        self.scene.camera = cam
        light_data = bpy.data.lights.new(f"{SCENE_NAME}Light", "AREA")
        light_data.energy = p["light_energy"]
        light_data.size = view.side * p["light_size"]
        self.data.append(light_data)
        light = self._link(bpy.data.objects.new(f"{SCENE_NAME}Light", light_data))
        light.location = (view.x, view.y, p["light_height"])
        half = view.side * p["ground_size"] / 2
        mesh = bpy.data.meshes.new(f"{SCENE_NAME}Ground")
        mesh.from_pydata([(-half, -half, 0.0), (half, -half, 0.0), (half, half, 0.0), (-half, half, 0.0)],
                         [], [(0, 1, 2, 3)])
        mesh.materials.append(self.ground_material)
        self.data.append(mesh)
        ground = self._link(bpy.data.objects.new(f"{SCENE_NAME}Ground", mesh))
        ground.location = (view.x, view.y, p["ground_z"])
        ground.pass_index = 0

    def render_light(self, size: int, samples: int, seed: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
        """The lighting pass at ``size``² px: linear RGB (float32, rows top first) and the
        object index each pixel centre shows (0: the ground, k + 1: sheet k)."""
        self._configure(size, samples, seed, threads)
        sc = self.scene
        path = self.tmp / "light.exr"
        sc.render.filepath = str(path)
        try:
            with _quiet(self.sink):
                bpy.ops.render.render(write_still=True, scene=sc.name)
            img = bpy.data.images.load(str(path))
            try:
                px = np.empty(size * size * 4, dtype=np.float32)
                img.pixels.foreach_get(px)
            finally:
                bpy.data.images.remove(img)
        finally:
            path.unlink(missing_ok=True)
        px = px.reshape(size, size, 4)[::-1]
        return np.ascontiguousarray(px[..., :3]), np.rint(px[..., 3]).astype(np.int32)

    def _configure(self, size: int, samples: int, seed: int, threads: int) -> None:
        """Every render setting of the lighting pass (set again for each render)."""
        sc = self.scene
        p = PAPER_SCENE
        r = sc.render
        r.resolution_x = r.resolution_y = size
        r.resolution_percentage = 100
        r.pixel_aspect_x = r.pixel_aspect_y = 1.0
        r.use_border = False
        r.film_transparent = False
        r.use_compositing = True
        r.use_sequencer = False
        r.dither_intensity = 0.0
        r.threads_mode = "FIXED"
        r.threads = threads
        r.image_settings.file_format = "OPEN_EXR"
        r.image_settings.color_mode = "RGBA"
        r.image_settings.color_depth = "32"
        r.image_settings.exr_codec = "NONE"
        sc.view_settings.view_transform = "Raw"
        sc.view_settings.look = "None"
        sc.view_settings.exposure = 0.0
        sc.view_settings.gamma = 1.0
        sc.view_settings.use_curve_mapping = False
        sc.display_settings.display_device = "sRGB"
        c = sc.cycles
        c.device = "CPU"
        c.feature_set = "SUPPORTED"
        c.samples = samples
        c.seed = seed
        c.use_animated_seed = False
        c.sample_offset = 0
        c.use_adaptive_sampling = False
        c.use_denoising = False
        c.use_light_tree = p["light_tree"]
        b = p["bounces"]
        c.max_bounces = b["max"]
        c.diffuse_bounces = b["diffuse"]
        c.glossy_bounces = b["glossy"]
        c.transparent_max_bounces = b["transparent"]
        # Gaussian, not Box: Cycles' Box filter is one pixel wide whatever filter_width says
        # (measured), while a 0.01 px Gaussian puts every sample at the pixel centre.
        c.pixel_filter_type = "GAUSSIAN"
        c.filter_width = PAPER_FILTER
        c.use_auto_tile = False
        c.debug_use_cpu_avx2 = False
        c.debug_use_cpu_sse42 = True

    def render_textured(
        self, textures: list[np.ndarray], size: int, samples: int, seed: int, threads: int,
        window: tuple[int, int, int, int],
    ) -> np.ndarray:
        """Their render, for comparison: the page texture shaded by Cycles itself (their
        material), their pixel filter (Blackman-Harris 1.5 px), AgX, 8-bit; only the frame
        pixels ``window`` (x0, y0, width, height; rows top first). The sheets' materials are
        put back afterwards."""
        sc = self.scene
        saved = [obj.data.materials[0] for obj in self.sheets]
        made: list[Any] = []
        try:
            for k, (obj, rgb) in enumerate(zip(self.sheets, textures, strict=True)):
                mat = saved[k].copy()
                nt = mat.node_tree
                h, w = rgb.shape[:2]
                img = bpy.data.images.new(f"{SCENE_NAME}Texture{k}", w, h, alpha=False)
                img.colorspace_settings.name = "sRGB"
                px = np.ones((h, w, 4), dtype=np.float32)
                px[..., :3] = rgb[::-1] * np.float32(1 / 255)
                img.pixels.foreach_set(px.ravel())
                img.update()
                tex = nt.nodes.new("ShaderNodeTexImage")
                tex.image = img
                tex.interpolation = "Linear"
                bsdf = next(n for n in nt.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
                nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
                obj.data.materials[0] = mat
                made.extend([mat, img])
            self._configure(size, samples, seed, threads)  # the lighting pass's settings ...
            r, c = sc.render, sc.cycles
            c.pixel_filter_type = "BLACKMAN_HARRIS"  # ... then theirs
            c.filter_width = 1.5
            r.use_compositing = False
            x0, y0, w, h = window
            r.use_border = True
            r.use_crop_to_border = True
            r.border_min_x, r.border_max_x = x0 / size, (x0 + w) / size
            r.border_min_y, r.border_max_y = 1 - (y0 + h) / size, 1 - y0 / size
            sc.view_settings.view_transform = PAPER_SCENE["view_transform"]
            r.image_settings.file_format = "PNG"
            r.image_settings.color_mode = "RGB"
            r.image_settings.color_depth = "8"
            r.image_settings.compression = 0
            path = self.tmp / "textured.png"
            r.filepath = str(path)
            try:
                with _quiet(self.sink):
                    bpy.ops.render.render(write_still=True, scene=sc.name)
                out = cv2.imread(str(path), cv2.IMREAD_COLOR)
            finally:
                path.unlink(missing_ok=True)
                r.use_border = False
        finally:
            for obj, mat in zip(self.sheets, saved, strict=True):
                obj.data.materials[0] = mat
            for block in made:
                (bpy.data.materials if isinstance(block, bpy.types.Material) else bpy.data.images).remove(block)
        if out is None:
            raise RuntimeError("Blender wrote no image for the textured render")
        return cv2.cvtColor(out, cv2.COLOR_BGR2RGB)

    def to_display(self, rgba: np.ndarray) -> np.ndarray:
        """Linear RGBA (rows top first) through Blender's view transform (their scene's
        AgX, sRGB display) to 8-bit RGB."""
        h, w = rgba.shape[:2]
        sc = self.scene
        sc.view_settings.view_transform = PAPER_SCENE["view_transform"]
        sc.view_settings.look = "None"
        sc.view_settings.exposure = 0.0
        sc.view_settings.gamma = 1.0
        sc.view_settings.use_curve_mapping = False
        sc.display_settings.display_device = "sRGB"
        r = sc.render
        r.dither_intensity = 0.0
        r.image_settings.file_format = "PNG"
        r.image_settings.color_mode = "RGB"
        r.image_settings.color_depth = "8"
        r.image_settings.compression = 0
        img = bpy.data.images.new(f"{SCENE_NAME}Frame", w, h, alpha=True, float_buffer=True)
        path = self.tmp / "frame.png"
        try:
            img.pixels.foreach_set(np.ascontiguousarray(rgba[::-1]).ravel())
            with _quiet(self.sink):
                img.save_render(str(path), scene=sc)
            out = cv2.imread(str(path), cv2.IMREAD_COLOR)
        finally:
            bpy.data.images.remove(img)
            path.unlink(missing_ok=True)
        if out is None or out.shape[:2] != (h, w):
            raise RuntimeError("Blender wrote no frame image")
        return cv2.cvtColor(out, cv2.COLOR_BGR2RGB)

    def clear(self) -> None:
        """Remove everything the last frame made (objects before the data they use)."""
        kinds = ((bpy.types.Object, bpy.data.objects), (bpy.types.Mesh, bpy.data.meshes),
                 (bpy.types.Material, bpy.data.materials), (bpy.types.Image, bpy.data.images),
                 (bpy.types.Camera, bpy.data.cameras), (bpy.types.Light, bpy.data.lights))
        for kind, coll in kinds:
            for block in self.data:
                if isinstance(block, kind):
                    coll.remove(block, do_unlink=True)
        self.data = []
        self.sheets = []
        self.scene.camera = None


_SCENE: PaperScene | None = None


def paper_scene() -> PaperScene:
    """This process's paper scene, built on first use."""
    global _SCENE
    if _SCENE is None:
        _SCENE = PaperScene()
    return _SCENE
