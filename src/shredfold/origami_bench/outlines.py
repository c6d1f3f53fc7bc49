"""Folded outlines as shapely polygons: what a simple fold does to them, the fold lines a
person would try on them, and keys that say when two outlines are the same.

A simple fold reflects the part of the outline left of a line onto the right, so the folded
outline after a fold is ``(outline - left) | mirror(outline & left)`` whatever the layers
inside: cheap shapely work, with the engine asked only to confirm a plan. Candidate fold
lines of an outline are the lines through two of its corners, the perpendicular bisectors of
two corners (a corner laid onto another) and the bisectors of the angle at a corner (an edge
laid onto its neighbour), plus any extra lines (a target's edges); each is tried in both
directions.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import shapely
from shapely import affinity

from shredfold.origami import affine

Line = tuple[tuple[float, float], tuple[float, float]]

# Outlines change by less than this (sheet areas) are the same outline.
MIN_CHANGE = 1e-4
# Precision of the outline arithmetic (sheet units).
GRID = 1e-9
# Lines read from a picture this close (sheet units: about two pixels of a 256-pixel
# picture) to an exact line stand for it; directions snap to multiples of 22.5 degrees.
SNAP = 0.02
_STEP = np.pi / 8
# The square's symmetries as 2x2 matrices, in the order of metrics.shape.symmetries.
SYMMETRIES = np.array(
    [
        [[1, 0], [0, 1]],
        [[-1, 0], [0, 1]],
        [[0, -1], [1, 0]],
        [[0, 1], [1, 0]],
        [[-1, 0], [0, -1]],
        [[1, 0], [0, -1]],
        [[0, 1], [-1, 0]],
        [[0, -1], [-1, 0]],
    ],
    float,
)
SHEET_CENTRE = np.array([0.5, 0.5])


def fold_outline(outline: shapely.Geometry, p: np.ndarray, q: np.ndarray) -> shapely.Geometry | None:
    """The outline after folding everything left of p -> q onto the right (None if no-op)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    n = np.hypot(*d)
    if n < 1e-9:
        return None
    u = d / n
    left_n = np.array([-u[1], u[0]])
    side = affine.dot2(corners(outline) - p, left_n)
    if side.size == 0 or side.max() <= 1e-9 or side.min() >= -1e-9:
        return None  # the line does not cut the outline
    r = 10.0
    half = shapely.Polygon([p - r * u, p + r * u, p + r * u + r * left_n, p - r * u + r * left_n])
    try:
        # on a fixed grid: unions of reflected pieces meet a float error apart, which
        # floating GEOS may refuse ("side location conflict")
        left = shapely.intersection(outline, half, grid_size=GRID)
        if left.area < MIN_CHANGE or left.area > outline.area - MIN_CHANGE:
            return None
        right = shapely.difference(outline, half, grid_size=GRID)
        m = 2 * np.outer(u, u) - np.eye(2)
        off = p - affine.linear(m, p)
        mirrored = affinity.affine_transform(left, [m[0, 0], m[0, 1], m[1, 0], m[1, 1], off[0], off[1]])
        return shapely.union(right, mirrored, grid_size=GRID)
    except shapely.errors.GEOSException:
        return None


def corners(outline: shapely.Geometry) -> np.ndarray:
    """Corners of an outline's rings, collinear points dropped."""
    rings = []
    for poly in getattr(outline, "geoms", [outline]):
        if poly.is_empty or not hasattr(poly, "exterior"):
            continue
        simple = poly.simplify(1e-7)
        for ring in [simple.exterior, *simple.interiors]:
            rings.append(np.asarray(ring.coords)[:-1])
    if not rings:
        return np.zeros((0, 2))
    return np.concatenate(rings)


def _rings(outline: shapely.Geometry) -> Iterator[np.ndarray]:
    for poly in getattr(outline, "geoms", [outline]):
        if not poly.is_empty and hasattr(poly, "exterior"):
            yield np.asarray(poly.simplify(1e-7).exterior.coords)[:-1]


def candidate_lines(outline: shapely.Geometry, extra: tuple[Line, ...] = ()) -> list[Line]:
    """Distinct fold lines for an outline, one direction each (see the module's note): for
    each pair of corners the line through both, then their perpendicular bisector; then the
    bisector of each corner's angle; then ``extra``, snapped (:func:`snapped`)."""
    pts = corners(outline)
    i, j = np.triu_indices(len(pts), 1)
    a, b = pts[i], pts[j]
    d = b - a
    ok = np.hypot(d[:, 0], d[:, 1]) >= 1e-6
    a, b, d = a[ok], b[ok], d[ok]
    mid = (a + b) / 2
    perp = np.stack([-d[:, 1], d[:, 0]], axis=1)
    # interleaved as a person lists them: through a pair, then across it
    starts = np.stack([a, mid], axis=1).reshape(-1, 2)
    ends = np.stack([b, mid + perp], axis=1).reshape(-1, 2)
    bis_starts, bis_ends = [], []
    for ring in _rings(outline):
        prev, nxt = np.roll(ring, 1, axis=0), np.roll(ring, -1, axis=0)
        u, v = prev - ring, nxt - ring
        nu, nv = np.hypot(u[:, 0], u[:, 1]), np.hypot(v[:, 0], v[:, 1])
        good = (nu >= 1e-9) & (nv >= 1e-9)
        bis = np.zeros_like(ring)
        bis[good] = u[good] / nu[good, None] + v[good] / nv[good, None]
        good &= np.hypot(bis[:, 0], bis[:, 1]) >= 1e-9
        bis_starts.append(ring[good])
        bis_ends.append(ring[good] + bis[good])
    starts = np.concatenate([starts, *bis_starts])
    ends = np.concatenate([ends, *bis_ends])
    keys = line_keys(starts, ends)
    seen: dict[tuple[float, float, float], None] = {}
    out: list[Line] = []
    for k, s, e in zip(keys.tolist(), starts.tolist(), ends.tolist(), strict=True):
        key = (k[0], k[1], k[2])
        if key in seen:
            continue
        seen[key] = None
        out.append(((s[0], s[1]), (e[0], e[1])))
    out += [line for line, _ in snapped(outline, extra, keys)] if extra else []
    return out


def line_keys(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`line_key` of many point pairs at once, as rows."""
    if len(starts) == 0:
        return np.zeros((0, 3))
    d = ends - starts
    d = d / np.hypot(d[:, 0], d[:, 1])[:, None]
    flip = (d[:, 0] < -1e-12) | ((np.abs(d[:, 0]) <= 1e-12) & (d[:, 1] < 0))
    d[flip] = -d[flip]
    off = d[:, 0] * starts[:, 1] - d[:, 1] * starts[:, 0]
    return np.round(np.stack([d[:, 0], d[:, 1], off], axis=1), 6) + 0.0


def snapped(outline: shapely.Geometry, extra: tuple[Line, ...], known: np.ndarray, tol: float = SNAP) -> list[tuple[Line, bool]]:
    """Lines read from a picture (within about a pixel) as the exact lines they stand for,
    each with whether it is exact: dropped where a line of ``known`` (:func:`line_key`
    rows) lies within ``tol``; else through the two reference points of the outline
    (:func:`reference_points`) farthest apart within ``tol`` of it; else through one such
    point, turned to the nearest multiple of 22.5 degrees within a degree; else as read (not
    exact). Folding along a line a pixel off the exact one makes an outline that fits the
    picture's rounding, not the target."""
    refs = reference_points(outline)
    out: list[tuple[Line, bool]] = []
    keys = [tuple(k) for k in known.tolist()]
    for a, b in extra:
        a_, b_ = np.asarray(a, float), np.asarray(b, float)
        d = b_ - a_
        length = np.hypot(*d)
        if length < 1e-9:
            continue
        u = d / length
        normal = np.array([-u[1], u[0]])
        line, exact = _snap(a_, u, normal, refs, tol)
        key = line_key(np.asarray(line[0]), np.asarray(line[1]))
        if any(_near(key, k, tol) for k in keys):
            continue
        keys.append(key)
        out.append((line, exact))
    return out


def _snap(a: np.ndarray, u: np.ndarray, normal: np.ndarray, refs: np.ndarray, tol: float) -> tuple[Line, bool]:
    def line(p: np.ndarray, q: np.ndarray) -> Line:
        return ((float(p[0]), float(p[1])), (float(q[0]), float(q[1])))

    on = refs[np.abs(affine.dot2(refs - a, normal)) <= tol] if len(refs) else refs
    if len(on) >= 2:
        t = affine.dot2(on - a, u)
        p, q = on[int(np.argmin(t))], on[int(np.argmax(t))]
        if np.hypot(*(q - p)) > 4 * tol:
            return line(p, q), True
    angle = np.arctan2(u[1], u[0])
    nice = np.round(angle / _STEP) * _STEP
    if len(on) and abs(angle - nice) <= np.radians(1.0):
        v = np.array([np.cos(nice), np.sin(nice)])
        # exact multiples of a quarter turn, not cos/sin's last bits
        v = np.where(np.abs(v) < 1e-12, 0.0, v)
        p = on[int(np.argmin(np.abs(affine.dot2(on - a, normal))))]
        return line(p, p + v), True
    return line(a, a + u), False


def _near(k1: tuple[float, ...], k2: tuple[float, ...], tol: float) -> bool:
    """Two :func:`line_key` rows of about one line (a near-vertical line's key may have
    either direction)."""
    for s in (1.0, -1.0):
        if abs(k1[0] - s * k2[0]) <= 0.02 and abs(k1[1] - s * k2[1]) <= 0.02 and abs(k1[2] - s * k2[2]) <= tol:
            return True
    return False


def reference_points(outline: shapely.Geometry) -> np.ndarray:
    """Points a person folds through: the outline's corners and the eighths of its edges
    (of edges a quarter of the sheet long or more; of shorter ones, the midpoint)."""
    pts = []
    for poly in getattr(outline, "geoms", [outline]):
        if poly.is_empty or not hasattr(poly, "exterior"):
            continue
        simple = poly.simplify(1e-7)
        for ring in [simple.exterior, *simple.interiors]:
            c = np.asarray(ring.coords)[:-1]
            d = np.roll(c, -1, axis=0) - c
            long = np.hypot(d[:, 0], d[:, 1]) >= 0.25
            pts += [c, c + d / 2]
            pts += [c[long] + k / 8 * d[long] for k in (1, 2, 3, 5, 6, 7)]
    return np.concatenate(pts) if pts else np.zeros((0, 2))


def chords(outline: shapely.Geometry, lines: list[Line]) -> tuple[np.ndarray, np.ndarray]:
    """Where each (infinite) line crosses the outline: the length of paper on it and the
    extent of that paper along it, as two end points (NaN where it misses). After a fold
    along the line, that is the new outline's edge on the fold line."""
    n = len(lines)
    if n == 0:
        return np.zeros(0), np.zeros((0, 2, 2))
    ends = np.asarray(lines, float)  # (n, 2, 2)
    d = ends[:, 1] - ends[:, 0]
    d /= np.hypot(d[:, 0], d[:, 1])[:, None]
    reach = 10.0
    segs = np.stack([ends[:, 0] - reach * d, ends[:, 0] + reach * d], axis=1)
    cut = shapely.intersection(outline, shapely.linestrings(segs))
    lengths = np.asarray(shapely.length(cut), float)
    xy, owner = shapely.get_coordinates(cut, return_index=True)
    t = affine.dot2(xy - ends[owner, 0], d[owner])
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, owner, t)
    np.maximum.at(hi, owner, t)
    missed = ~np.isfinite(lo)
    lo[missed] = hi[missed] = np.nan
    extent = np.stack([ends[:, 0] + lo[:, None] * d, ends[:, 0] + hi[:, None] * d], axis=1)
    return lengths, extent


def line_key(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """The same for two point pairs on one line: its direction (one way) and offset."""
    k = line_keys(np.asarray(a, float)[None], np.asarray(b, float)[None])[0]
    return (float(k[0]), float(k[1]), float(k[2]))


def place_key(outline: shapely.Geometry) -> tuple[float, bytes]:
    """The same for equal outlines in the same place."""
    pts = np.round(corners(outline), 5) + 0.0
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    return (round(float(outline.area), 5), pts.tobytes())


def shape_key(outline: shapely.Geometry) -> tuple[float, bytes]:
    """The same for outlines equal up to the square's symmetries and a translation: the
    area, and the corners about the centroid as unordered pairs (|dx|, |dy|), which those
    symmetries permute (shapes differing only otherwise are rare, and merely not searched twice)."""
    pts = corners(outline)
    if len(pts) == 0:
        return (0.0, b"")
    rel = np.abs(pts - np.asarray(outline.centroid.coords[0]))
    pairs = np.round(np.sort(rel, axis=1), 4) + 0.0
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    return (round(float(outline.area), 5), pairs.tobytes())


def sheet_place_key(outline: shapely.Geometry) -> tuple[float, bytes]:
    """The same for equal outlines in places the unit sheet's symmetries map onto each other
    (folds mapped by such a symmetry make the mapped outline: the sheet is symmetric)."""
    pts = corners(outline) - SHEET_CENTRE
    best = b""
    for m in SYMMETRIES:
        q = np.round(affine.linear(m, pts), 5) + 0.0
        q = q[np.lexsort((q[:, 1], q[:, 0]))]
        raw = q.tobytes()
        if not best or raw < best:
            best = raw
    return (round(float(outline.area), 5), best)
