"""The design value: a crease pattern on the unit square with its tier and category.

Light on purpose (pydantic only): planning reads designs from the catalogue cache without
importing the engine. :mod:`.designs` makes them; the methods that need the engine import it
when called.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from shredfold.spec import TierThresholds
from shredfold.store import content_key

if TYPE_CHECKING:
    from shredfold.origami import CreasePattern

DESIGN_VERSION = 1
TIERS = ("easy", "medium", "hard")

Segment = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class SimpleFold:
    """One simple fold: the layers left of start -> end turn over (folded-plane coordinates)."""

    start: tuple[float, float]
    end: tuple[float, float]
    assignment: str  # "M" or "V"

    def as_action(self) -> dict[str, object]:
        return {"start": list(self.start), "end": list(self.end), "assignment": self.assignment}

    @classmethod
    def from_action(cls, action: dict[str, object]) -> SimpleFold:
        s, e = action["start"], action["end"]
        return cls(
            (float(s[0]), float(s[1])),  # type: ignore[index]
            (float(e[0]), float(e[1])),  # type: ignore[index]
            str(action["assignment"]),
        )


class Design(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    key: str
    source: Literal["builtin", "procedural", "folder", "flat_folder"]
    category: str
    segments: tuple[Segment, ...]
    assignments: str
    sequence: tuple[dict[str, Any], ...] | None = None
    vertices: int
    creases: int
    tier: str = ""  # set by the catalogue from the spec's thresholds; Flat-Folder's designs carry the paper's

    def pattern(self) -> CreasePattern:
        import numpy as np

        from shredfold.origami import CreasePattern

        return CreasePattern.from_segments(np.asarray(self.segments, float), list(self.assignments))

    def steps(self) -> list[SimpleFold] | None:
        return None if self.sequence is None else [SimpleFold.from_action(a) for a in self.sequence]


def tier_of(vertices: int, creases: int, t: TierThresholds) -> str:
    if vertices >= t.hard_vertices or creases >= t.hard_creases:
        return "hard"
    if vertices >= t.medium_vertices or creases >= t.medium_creases:
        return "medium"
    return "easy"


def design_key(segments: Iterable[Segment], assignments: str, sequence: Any) -> str:
    return content_key(
        "origami_design",
        DESIGN_VERSION,
        {"segments": [list(map(list, s)) for s in segments], "assignments": assignments, "sequence": sequence},
    )
