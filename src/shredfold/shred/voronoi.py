"""Cut a page into ``n`` irregular pieces: a Voronoi diagram with jagged shared edges.

The diagram of the seeds plus their mirror images across the four page sides has exactly
the page-clipped cells as the seeds' regions (the page sides are bisectors of a seed and its
mirror), so every region is finite and no clipping is needed. Each piece's outline is then
assembled from the shared Voronoi edges, each made jagged once and used by both neighbours,
so the pieces tile the page exactly.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import Voronoi
from shapely.geometry import Polygon, box

QUANTUM = 1.0 / 256.0  # outline coordinates are multiples of this: exact in binary, and
# stable against last-bit differences between CPUs' libm.
JAG_STEP = 6.0  # px between perturbed points along an edge
CANDIDATES = 12  # best-candidate sampling: more spreads seeds more evenly
LLOYD_STEPS = 1  # one relaxation step removes slivers but keeps pieces irregular


def _q(a: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64) / QUANTUM) * QUANTUM


def _mirrored(seeds: np.ndarray, width: float, height: float) -> np.ndarray:
    x, y = seeds[:, 0], seeds[:, 1]
    return np.concatenate(
        [
            seeds,
            np.column_stack([-x, y]),
            np.column_stack([2 * width - x, y]),
            np.column_stack([x, -y]),
            np.column_stack([x, 2 * height - y]),
        ]
    )


def spread_seeds(width: float, height: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` seeds, spread by best-candidate sampling and a Lloyd step (no slivers)."""
    seeds = np.empty((n, 2))
    for i in range(n):
        cand = rng.random((CANDIDATES, 2)) * (width, height)
        if i == 0:
            seeds[0] = cand[0]
            continue
        d = ((cand[:, None, :] - seeds[None, :i, :]) ** 2).sum(-1).min(axis=1)
        seeds[i] = cand[int(np.argmax(d))]
    for _ in range(LLOYD_STEPS):
        verts, regions, _ = _diagram(seeds, width, height)
        seeds = np.array([Polygon(verts[r]).centroid.coords[0] for r in regions])
    return seeds


def _diagram(
    seeds: np.ndarray, width: float, height: float
) -> tuple[np.ndarray, list[np.ndarray], list[tuple[int, int]]]:
    """Vertices (quantised, duplicates merged), each seed's ring of vertex ids (CCW), and the
    interior edges as sorted vertex-id pairs."""
    n = len(seeds)
    vor = Voronoi(_mirrored(seeds, width, height))
    raw = _q(vor.vertices)
    raw[:, 0] = np.clip(raw[:, 0], 0.0, width)
    raw[:, 1] = np.clip(raw[:, 1], 0.0, height)
    # Cocircular seed/mirror quadruples make Qhull emit the same vertex twice, a hair apart:
    # merging them after quantising gives one id per point.
    verts, ids = np.unique(raw, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    regions: list[np.ndarray] = []
    for i in range(n):
        ring = np.unique(ids[vor.regions[vor.point_region[i]]])
        d = verts[ring] - seeds[i]
        regions.append(ring[np.argsort(np.arctan2(d[:, 1], d[:, 0]), kind="stable")])
    edges: set[tuple[int, int]] = set()
    for (p, q), rv in zip(vor.ridge_points, vor.ridge_vertices, strict=True):
        if p < n and q < n:
            a, b = int(ids[rv[0]]), int(ids[rv[1]])
            if a != b:
                edges.add((min(a, b), max(a, b)))
    return verts, regions, sorted(edges)


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def jagged_edge(
    a: np.ndarray, b: np.ndarray, amplitude: float, rng: np.random.Generator
) -> np.ndarray:
    """Interior points of a rough line from ``a`` to ``b`` (endpoints excluded).

    Displacement is perpendicular, at most ``amplitude`` px, and fades out smoothly near the
    ends so edges meeting at a vertex do not cross.
    """
    length = float(np.hypot(*(b - a)))
    k = int(length // JAG_STEP)
    if amplitude <= 0.0 or k < 2 or length < 8.0 * amplitude:
        return np.empty((0, 2))
    t = np.arange(1, k) / k
    s = t * length
    ramp = 4.0 * amplitude
    envelope = _smoothstep(np.minimum(s, length - s) / ramp)
    # A slow wander plus a fibrous rough part, as torn paper has.
    freqs = rng.uniform(1.0, 4.0, 3) * (length / 150.0 + 1.0)
    phases = rng.uniform(0.0, 2 * math.pi, 3)
    wander = np.sin(np.outer(t, freqs) * 2 * math.pi + phases).sum(axis=1) / 3.0
    rough = rng.uniform(-1.0, 1.0, len(t))
    offset = amplitude * envelope * (0.65 * wander + 0.35 * rough)
    normal = np.array([-(b - a)[1], (b - a)[0]]) / length
    return a + np.outer(s, (b - a) / length) + np.outer(offset, normal)


def uniform_seeds(width: float, height: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` seeds uniform over the page, nothing spread: the ShredBench authors' cutter
    (``np.random.rand(n, 2) * [w, h]``), whose cells are as uneven as chance makes them."""
    return rng.random((n, 2)) * (width, height)


def cut(
    width: float, height: float, n: int, rng: np.random.Generator, jagged: float, spread: bool = True
) -> list[Polygon]:
    """``n`` polygons that tile the ``width`` × ``height`` page exactly (n = 1: the page);
    seeds spread (:func:`spread_seeds`) or, ``spread=False``, uniform (:func:`uniform_seeds`)."""
    if n < 1:
        raise ValueError(f"number of pieces must be at least 1, got {n}")
    if n == 1:
        return [box(0, 0, width, height)]
    seeds = (spread_seeds if spread else uniform_seeds)(width, height, n, rng)
    verts, regions, edges = _diagram(seeds, width, height)
    paths: dict[tuple[int, int], np.ndarray] = {}
    for a, b in edges:  # sorted, so each edge draws from the generator in a fixed order
        pts = _q(jagged_edge(verts[a], verts[b], jagged, rng))
        pts[:, 0] = np.clip(pts[:, 0], 0.0, width)
        pts[:, 1] = np.clip(pts[:, 1], 0.0, height)
        paths[(a, b)] = pts
    for _ in range(3):
        polys = [_outline(verts, ring, paths) for ring in regions]
        bad = [i for i, p in enumerate(polys) if not p.is_valid]
        if not bad:
            return polys
        # Rare: two rough edges crossed near a sharp corner; straighten that cell's edges
        # (for both neighbours alike) and rebuild.
        for i in bad:
            ring = list(regions[i])
            for u, v in zip(ring, ring[1:] + ring[:1], strict=True):
                paths.pop((min(u, v), max(u, v)), None)
    raise AssertionError("straight Voronoi cells are convex and always valid")


def _outline(
    verts: np.ndarray, ring: np.ndarray, paths: dict[tuple[int, int], np.ndarray]
) -> Polygon:
    coords: list[np.ndarray] = []
    ids = [int(i) for i in ring]
    for u, v in zip(ids, ids[1:] + ids[:1], strict=True):
        coords.append(verts[u][None, :])
        path = paths.get((min(u, v), max(u, v)))
        if path is not None and len(path):
            coords.append(path if u < v else path[::-1])
    return Polygon(np.concatenate(coords))
