"""FOLD and ORIPA ``.cp`` reading and writing.

Only the fields the engine uses are interpreted; every other key of a FOLD file is kept in
``metadata`` so that writing a file read from disk loses nothing the engine understood.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

ASSIGNMENTS = ("M", "V", "B", "F", "U")

# Limits on untrusted files, far above any real design (the largest of Flat-Folder's 366
# is 3 MB with 70,000 lists and 15,419 vertices): past them a file is refused before its
# parse can take the time or memory (a list of 10^7 vertices is gigabytes as Python objects).
MAX_FOLD_CHARS = 64_000_000
MAX_FOLD_LISTS = 2_000_000  # "[" characters: a bound on the arrays json would build
MAX_VERTICES = 500_000
MAX_EDGES = 1_000_000
MAX_CP_LINES = 1_000_000
# beyond this magnitude products of coordinates overflow double precision
MAX_COORDINATE = 1e12

_GEOMETRY_KEYS = (
    "vertices_coords",
    "edges_vertices",
    "edges_assignment",
    "faces_vertices",
    "faceOrders",
)


class FoldFormatError(ValueError):
    """A FOLD or ``.cp`` file that cannot be read; names the field and, where known, the index."""

    def __init__(self, field_name: str, message: str, index: int | None = None) -> None:
        where = field_name if index is None else f"{field_name}[{index}]"
        super().__init__(f"{where}: {message}")
        self.field = field_name
        self.index = index


@dataclass(frozen=True)
class FoldFrame:
    """One frame of a FOLD file as written: geometry plus the frame's own metadata
    (``frame_*`` keys).

    The exchange format and nothing more: plain Python tuples, nothing derived or repaired
    (edges may cross, faces may be missing or wrong). It is not a ``CreasePattern`` because
    the engine works on the arrangement (crossings split, faces traced, outline found, a
    snapping distance) that only re-arranging the edges gives, so a file's
    ``faces_vertices`` and ``faceOrders`` are written out but never read back; and not a
    ``FoldState``, because a file has no place for the steps that made a state (which
    ``unfold`` undoes) or the lattice its creases snap to, and the engine solves folded
    positions and layer orders itself rather than trust a file's.

    One way each direction: a frame becomes a pattern by ``CreasePattern.from_fold`` (a
    file's text by ``read_pattern``); a pattern becomes a frame by
    ``CreasePattern.to_fold_frame``, a state by
    ``state.pattern.to_fold_frame(state.layers.face_orders)``; text by :func:`write_fold`.
    """

    vertices_coords: tuple[tuple[float, float], ...]
    edges_vertices: tuple[tuple[int, int], ...]
    edges_assignment: tuple[str, ...]
    faces_vertices: tuple[tuple[int, ...], ...] | None = None
    face_orders: tuple[tuple[int, int, int], ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FoldFile:
    """A FOLD file: its key frame, any further ``file_frames`` and the ``file_*`` metadata.

    What :func:`read_fold` returns and :func:`write_fold` takes; the engine reads only the key
    frame (:class:`FoldFrame` says why it is a type of its own)."""

    key_frame: FoldFrame
    frames: tuple[FoldFrame, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


def read_fold(text: str) -> FoldFile:
    """Parse FOLD JSON text; raises :class:`FoldFormatError` naming the offending field."""
    if len(text) > MAX_FOLD_CHARS:
        raise FoldFormatError("json", f"too large: {len(text)} characters (limit {MAX_FOLD_CHARS})")
    lists = text.count("[")
    if lists > MAX_FOLD_LISTS:
        raise FoldFormatError("json", f"too large: {lists} arrays (limit {MAX_FOLD_LISTS})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FoldFormatError("json", f"not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError as exc:
        raise FoldFormatError("json", "nested too deeply") from exc
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise FoldFormatError("json", f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise FoldFormatError("json", "top level must be an object")
    key_frame = _parse_frame(data, prefix="")
    frames_raw = data.get("file_frames", [])
    if not isinstance(frames_raw, list):
        raise FoldFormatError("file_frames", "must be a list")
    frames = []
    for i, raw in enumerate(frames_raw):
        if not isinstance(raw, dict):
            raise FoldFormatError("file_frames", "frame must be an object", i)
        inherited = {**data, **raw} if raw.get("frame_inherit") else raw
        frames.append(_parse_frame(inherited, prefix=f"file_frames[{i}]."))
    metadata = {k: v for k, v in data.items() if k.startswith("file_") and k != "file_frames"}
    return FoldFile(key_frame=key_frame, frames=tuple(frames), metadata=metadata)


def write_fold(fold: FoldFile | FoldFrame, *, indent: int | None = None) -> str:
    """Serialise to FOLD JSON (deterministic: keys in a fixed order)."""
    return json.dumps(fold_object(fold), indent=indent, allow_nan=False)


def fold_object(fold: FoldFile | FoldFrame) -> dict[str, Any]:
    """The FOLD object that :func:`write_fold` serialises: plain JSON values, keys in a fixed
    order (a lone frame becomes a file whose creator is ``shredfold``)."""
    if isinstance(fold, FoldFrame):
        fold = FoldFile(key_frame=fold, metadata={"file_spec": 1.1, "file_creator": "shredfold"})
    out: dict[str, Any] = {"file_spec": 1.1, **dict(fold.metadata)}
    out.update(_frame_dict(fold.key_frame))
    if fold.frames:
        out["file_frames"] = [_frame_dict(f) for f in fold.frames]
    return out


def _frame_dict(frame: FoldFrame) -> dict[str, Any]:
    out: dict[str, Any] = dict(frame.metadata)
    out["vertices_coords"] = [list(p) for p in frame.vertices_coords]
    out["edges_vertices"] = [list(e) for e in frame.edges_vertices]
    out["edges_assignment"] = list(frame.edges_assignment)
    if frame.faces_vertices is not None:
        out["faces_vertices"] = [list(f) for f in frame.faces_vertices]
    if frame.face_orders is not None:
        out["faceOrders"] = [list(o) for o in frame.face_orders]
    return out


def _parse_frame(data: Mapping[str, Any], prefix: str) -> FoldFrame:
    def name(key: str) -> str:
        return prefix + key

    coords = _require_list(data, "vertices_coords", prefix)
    if len(coords) > MAX_VERTICES:
        raise FoldFormatError(name("vertices_coords"), f"too large: {len(coords)} vertices (limit {MAX_VERTICES})")
    vertices = []
    for i, p in enumerate(coords):
        if not isinstance(p, list) or len(p) not in (2, 3):
            raise FoldFormatError(name("vertices_coords"), "expected [x, y]", i)
        if len(p) == 3 and p[2] not in (0, 0.0):
            raise FoldFormatError(name("vertices_coords"), "3D coordinates are not flat", i)
        xy = []
        for c in p[:2]:
            # an int is finite, and may lie past float range (JSON allows 10^400)
            number = isinstance(c, (int, float)) and not isinstance(c, bool)
            if not number or (isinstance(c, float) and not math.isfinite(c)):
                raise FoldFormatError(name("vertices_coords"), f"non-finite coordinate {c!r}", i)
            if abs(c) > MAX_COORDINATE:
                shown = f"{c:.3g}" if abs(c) < 1e308 else f"{Decimal(c):.3g}"
                raise FoldFormatError(
                    name("vertices_coords"), f"coordinate {shown} beyond ±{MAX_COORDINATE:.0e}", i
                )
            xy.append(float(c))
        vertices.append((xy[0], xy[1]))
    n = len(vertices)

    edges_raw = _require_list(data, "edges_vertices", prefix)
    if len(edges_raw) > MAX_EDGES:
        raise FoldFormatError(name("edges_vertices"), f"too large: {len(edges_raw)} edges (limit {MAX_EDGES})")
    edges = []
    field = name("edges_vertices")
    for i, e in enumerate(edges_raw):
        if not isinstance(e, list) or len(e) != 2:
            raise FoldFormatError(field, "expected [u, v]", i)
        u, v = _index(e[0], n, field, i), _index(e[1], n, field, i)
        if u == v:
            raise FoldFormatError(field, "edge joins a vertex to itself", i)
        edges.append((u, v))

    if "edges_assignment" in data:
        raw_assign = _require_list(data, "edges_assignment", prefix)
        if len(raw_assign) != len(edges):
            raise FoldFormatError(
                name("edges_assignment"),
                f"has {len(raw_assign)} entries for {len(edges)} edges",
            )
        assignment = []
        for i, a in enumerate(raw_assign):
            if not isinstance(a, str):
                raise FoldFormatError(name("edges_assignment"), f"assignment {a!r} is not a letter", i)
            # "C" (cut) and "J" (join) are FOLD 1.2 letters; a cut behaves as a boundary.
            a = {"C": "B", "J": "F"}.get(a.upper(), a.upper())
            if a not in ASSIGNMENTS:
                raise FoldFormatError(name("edges_assignment"), f"unknown assignment {a!r}", i)
            assignment.append(a)
    else:
        assignment = ["U"] * len(edges)

    faces = None
    if "faces_vertices" in data:
        faces = []
        field = name("faces_vertices")
        for i, f in enumerate(_require_list(data, "faces_vertices", prefix)):
            if not isinstance(f, list) or len(f) < 3:
                raise FoldFormatError(field, "a face needs 3 or more vertices", i)
            faces.append(tuple([_index(x, n, field, i) for x in f]))

    orders = None
    if "faceOrders" in data:
        n_faces = len(faces) if faces is not None else None
        orders = []
        for i, o in enumerate(_require_list(data, "faceOrders", prefix)):
            if not isinstance(o, list) or len(o) != 3 or o[2] not in (-1, 0, 1):
                raise FoldFormatError(name("faceOrders"), "expected [f, g, -1|0|1]", i)
            if isinstance(o[2], bool):
                raise FoldFormatError(name("faceOrders"), "expected [f, g, -1|0|1]", i)
            # without faces_vertices an index can only be checked for being one
            f, g = (_index(x, MAX_EDGES if n_faces is None else n_faces, name("faceOrders"), i) for x in o[:2])
            orders.append((f, g, int(o[2])))

    metadata = {k: v for k, v in data.items() if k.startswith("frame_")}
    return FoldFrame(
        vertices_coords=tuple(vertices),
        edges_vertices=tuple(edges),
        edges_assignment=tuple(assignment),
        faces_vertices=None if faces is None else tuple(faces),
        face_orders=None if orders is None else tuple(orders),
        metadata=metadata,
    )


def _require_list(data: Mapping[str, Any], key: str, prefix: str) -> list[Any]:
    if key not in data:
        raise FoldFormatError(prefix + key, "missing")
    value = data[key]
    if not isinstance(value, list):
        raise FoldFormatError(prefix + key, "must be a list")
    return value


def _index(x: Any, n: int, field_name: str, i: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise FoldFormatError(field_name, f"index {x!r} is not an integer", i)
    if not 0 <= x < n:
        raise FoldFormatError(field_name, f"index {x} out of range 0..{n - 1}", i)
    return x


# ORIPA line types: 1 cut (boundary), 2 mountain, 3 valley; anything else is unassigned.
_CP_TYPES = {1: "B", 2: "M", 3: "V"}


def read_cp(text: str) -> list[tuple[tuple[float, float], tuple[float, float], str]]:
    """Parse ORIPA ``.cp`` text into segments ``(p, q, assignment)`` in y-up coordinates.

    ORIPA's frame is y-down. Negating y shows the pattern exactly as ORIPA draws it, so the
    mountain/valley letters stay as written; reading the raw y-down numbers as y-up instead
    would show the sheet from its back, where every mountain is a valley.
    """
    lines = text.count("\n") + 1
    if lines > MAX_CP_LINES:
        raise FoldFormatError("cp", f"too large: {lines} lines (limit {MAX_CP_LINES})")
    segments = []
    for lineno, line in enumerate(text.splitlines()):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 5:
            raise FoldFormatError("cp", f"expected 'type x1 y1 x2 y2', got {line!r}", lineno)
        try:
            kind = int(parts[0])
            x1, y1, x2, y2 = (float(p) for p in parts[1:])
        except ValueError as exc:
            raise FoldFormatError("cp", f"not a number in {line!r}", lineno) from exc
        if not all(math.isfinite(c) for c in (x1, y1, x2, y2)):
            raise FoldFormatError("cp", "non-finite coordinate", lineno)
        if max(abs(x1), abs(y1), abs(x2), abs(y2)) > MAX_COORDINATE:
            raise FoldFormatError("cp", f"coordinate beyond ±{MAX_COORDINATE:.0e}", lineno)
        segments.append(((x1, -y1), (x2, -y2), _CP_TYPES.get(kind, "U")))
    if not segments:
        raise FoldFormatError("cp", "no segments")
    return segments


def frame_from_arrays(
    vertices: Sequence[Sequence[float]],
    edges: Sequence[Sequence[int]],
    assignment: Sequence[str],
    faces: Sequence[Sequence[int]] | None = None,
    face_orders: Sequence[Sequence[int]] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> FoldFrame:
    """Build a frame from array-likes (numpy arrays are fine), converting to plain Python."""
    return FoldFrame(
        vertices_coords=tuple((float(x), float(y)) for x, y in vertices),
        edges_vertices=tuple((int(u), int(v)) for u, v in edges),
        edges_assignment=tuple(str(a) for a in assignment),
        faces_vertices=None if faces is None else tuple(tuple(int(v) for v in f) for f in faces),
        face_orders=None
        if face_orders is None
        else tuple((int(f), int(g), int(s)) for f, g, s in face_orders),
        metadata=dict(metadata or {}),
    )
