"""Classic bases as FOLD crease patterns on the unit square, with the known area of their
folded silhouette as a fraction of the sheet (worked out by hand, not by the engine)."""

from __future__ import annotations

import json
import math

T = math.tan(math.pi / 8)  # kite creases meet the far edges at this distance

_BORDER = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]


def _fold_text(title: str, creases: list[tuple[tuple[float, float], tuple[float, float], str]]) -> str:
    vertices: list[tuple[float, float]] = []
    edges, assignment = [], []

    def vid(p: tuple[float, float]) -> int:
        if p not in vertices:
            vertices.append(p)
        return vertices.index(p)

    for p, q in _BORDER:
        edges.append([vid(p), vid(q)])
        assignment.append("B")
    for p, q, a in creases:
        edges.append([vid(p), vid(q)])
        assignment.append(a)
    return json.dumps(
        {
            "file_spec": 1.1,
            "file_title": title,
            "vertices_coords": [list(p) for p in vertices],
            "edges_vertices": edges,
            "edges_assignment": assignment,
        }
    )


C = (0.5, 0.5)

# kite: the two edges at corner (0, 0) folded onto the diagonal; the diagonal stays flat.
# Each folded flap is a triangle of area T/2 that lands inside the sheet.
KITE = _fold_text(
    "kite base",
    [((0, 0), (1, T), "V"), ((0, 0), (T, 1), "V"), ((0, 0), (1, 1), "F")],
)
KITE_AREA = 1 - T

# waterbomb: diagonals mountain, horizontal midline valley: a triangle of base 1, height 1/2
WATERBOMB = _fold_text(
    "waterbomb base",
    [
        ((0, 0), C, "M"), (C, (1, 1), "M"), ((1, 0), C, "M"), (C, (0, 1), "M"),
        ((0, 0.5), C, "V"), (C, (1, 0.5), "V"),
    ],
)
WATERBOMB_AREA = 0.25

# preliminary (square) base: midlines mountain, one diagonal valley: a square of side 1/2
PRELIMINARY = _fold_text(
    "preliminary base",
    [
        ((0, 0.5), C, "M"), (C, (1, 0.5), "M"), ((0.5, 0), C, "M"), (C, (0.5, 1), "M"),
        ((0, 0), C, "V"), (C, (1, 1), "V"),
    ],
)
PRELIMINARY_AREA = 0.25

# fish base: a rabbit ear on each half of the sheet split by the diagonal (0, 0)-(1, 1),
# which itself stays flat. The half below it is the right triangle (0, 0), (1, 0), (1, 1);
# its incentre I = (1/sqrt 2, 1 - 1/sqrt 2) joins the three angle bisectors (two kite creases
# and the ridge to the corner (1, 0)), and the hinge drops from I perpendicular to the edge
# y = 0. Reflecting each face in turn, everything lands inside the triangle (0, 0), I, (1, 1):
# area (1/sqrt 2 - (1 - 1/sqrt 2)) / 2 per half, so sqrt(2) - 1 for the rhombus.
_S = 1 / math.sqrt(2)
_I_LOW, _I_HIGH = (_S, 1 - _S), (1 - _S, _S)
FISH = _fold_text(
    "fish base",
    [
        ((1, 0), _I_LOW, "M"), ((0, 0), _I_LOW, "V"), ((1, 1), _I_LOW, "V"), (_I_LOW, (_S, 0), "V"),
        ((0, 1), _I_HIGH, "M"), ((0, 0), _I_HIGH, "V"), ((1, 1), _I_HIGH, "V"), (_I_HIGH, (0, _S), "V"),
    ],
)
FISH_AREA = math.sqrt(2) - 1

BASES = {
    "fish": (FISH, FISH_AREA),
    "kite": (KITE, KITE_AREA),
    "waterbomb": (WATERBOMB, WATERBOMB_AREA),
    "preliminary": (PRELIMINARY, PRELIMINARY_AREA),
}
