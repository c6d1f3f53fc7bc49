"""The whole geometric solve: scrap images in, clusters of posed pieces out.

Only the scrap images are used (what an API model sees): no polygons, no truth.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from shredfold.shred.solvers.jigsaw.assemble import Assembly, PieceShape, assemble
from shredfold.shred.solvers.jigsaw.contour import Scrap, load_scrap
from shredfold.shred.solvers.jigsaw.geometry import angle_of, apply, rigid
from shredfold.shred.solvers.jigsaw.ink import line_angle
from shredfold.shred.solvers.jigsaw.match import MAX_COST, candidates
from shredfold.shred.solvers.jigsaw.sides import split_sides

if TYPE_CHECKING:
    from shredfold.shred.solvers.jigsaw.place import Placement

DISTORTED_MAX_COST = 2.0  # px: warped scraps (blender) fit less tightly
# Widenings of the assembly's border checks (slack, angle) tried in turn while the page is
# in pieces: on Blender N = 8 pages a piece at its true place pokes up to ~10 px past a
# neighbour's border line.
BORDER_SLACKS = (2.0, 3.0)


@dataclass
class Cluster:
    """Pieces laid out together. ``poses`` map each member's scrap pixels to the cluster's
    frame, in which text lines run horizontally (upright, or upside down until
    :func:`flip` is applied by the reader)."""

    members: list[int]
    poses: dict[int, np.ndarray]
    # Quarter turns (as np.rot90) that put the cluster's drawing upright, where its
    # scraps' own readings settle it (:func:`.photo.solve_photo`); None: the reader tells.
    turn: int | None = None

    def bounds(self, scraps: Sequence[Scrap]) -> tuple[float, float, float, float]:
        pts = np.vstack([apply(self.poses[m], scraps[m].outline) for m in self.members])
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        return float(x0), float(y0), float(x1), float(y1)

    def flipped(self, scraps: Sequence[Scrap]) -> Cluster:
        """The same cluster turned by 180 degrees about its bounding box centre."""
        x0, y0, x1, y1 = self.bounds(scraps)
        turn = rigid(np.pi, x0 + x1, y0 + y1)
        return Cluster(self.members, {m: turn @ p for m, p in self.poses.items()},
                       None if self.turn is None else (self.turn + 2) % 4)


@dataclass
class Solution:
    scraps: list[Scrap]
    shapes: list[PieceShape]
    assembly: Assembly | Placement  # outlines matched (solve), or levelled scraps placed (photo)
    clusters: list[Cluster]  # biggest first
    scale: float = 1.0  # the clusters are read drawn this much larger (small text)
    close_seams: bool = False  # ... and with the seams between scraps drawn as paper

    @property
    def complete(self) -> bool:
        return len(self.clusters) == 1


def decode(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGBA")


def text_direction(members: Sequence[int], poses: dict[int, np.ndarray],
                   shapes: Sequence[PieceShape]) -> float | None:
    """Direction of text lines in the cluster frame (degrees, mod 180), ink-weighted."""
    acc = 0j
    for m in members:
        a = shapes[m].angle
        if a is None or a.count < 80:
            continue
        deg = a.degrees + np.degrees(angle_of(poses[m]))
        # Doubling the angle makes directions 180 degrees apart agree.
        acc += a.count * max(a.strength - 1.0, 0.05) * np.exp(2j * np.deg2rad(deg))
    if abs(acc) == 0:
        return None
    return float(np.degrees(np.angle(acc)) / 2) % 180.0


def border_direction(members: Sequence[int], poses: dict[int, np.ndarray],
                     shapes: Sequence[PieceShape]) -> float | None:
    """Direction of the page's edges in the cluster frame (degrees, mod 90)."""
    acc = 0j
    for m in members:
        for s in shapes[m].sides:
            if s.border:
                p = apply(poses[m], s.points[[0, -1]])
                d = p[1] - p[0]
                acc += s.length * np.exp(4j * np.arctan2(d[1], d[0]))
    if abs(acc) == 0:
        return None
    return float(np.degrees(np.angle(acc)) / 4) % 90.0


def level(members: Sequence[int], poses: dict[int, np.ndarray],
          shapes: Sequence[PieceShape]) -> np.ndarray:
    """Rotation that makes the cluster's text lines horizontal (up to 180 degrees)."""
    text = text_direction(members, poses, shapes)
    edge = border_direction(members, poses, shapes)
    if edge is not None:
        # The page edges fix the angle exactly; text picks which pair of edges is "across".
        options = [edge, edge + 90.0]
        if text is None:
            deg = options[0]
        else:
            deg = min(options, key=lambda o: abs((o - text + 90.0) % 180.0 - 90.0))
    else:
        deg = text if text is not None else 0.0
    return rigid(-np.deg2rad(deg))


def solve(images: Sequence[Image.Image | np.ndarray], *, distorted: bool = False) -> Solution:
    scraps = [load_scrap(im) for im in images]
    shapes = [
        PieceShape(sc.outline, split_sides(sc.outline, k), line_angle(sc.rgba, sc.paper))
        for k, sc in enumerate(scraps)
    ]
    cost = DISTORTED_MAX_COST if distorted else MAX_COST
    cands = candidates([s for sh in shapes for s in sh.sides], scale=distorted, max_cost=cost)
    asm = assemble(shapes, cands, scale=distorted)
    # A curled sheet's outline is only nearly rigid: even at their true places its pieces
    # poke a few px past each other's page edges. The border checks are widened only
    # when the page did not come together under the strict ones.
    for slack in BORDER_SLACKS:
        if len(asm.clusters()) == 1:
            break
        wider = assemble(shapes, cands, scale=distorted, border_slack=slack)
        if len(wider.clusters()) < len(asm.clusters()):
            asm = wider
    clusters = []
    for group in asm.clusters():
        poses = {m: asm.poses[m] for m in group}
        turn = level(group, poses, shapes)
        clusters.append(Cluster(group, {m: turn @ p for m, p in poses.items()}))
    return Solution(scraps, shapes, asm, clusters)
