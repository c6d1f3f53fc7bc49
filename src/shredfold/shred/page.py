"""What a renderer hands on: the page image with its truth, and where each text line is drawn.

Its own module so that every page style (:mod:`.render`'s own and :mod:`.paper`'s) shares
one definition and none imports another.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from shredfold.corpus.document import Lang
from shredfold.shred.fonts import Role


@dataclass(frozen=True)
class Page:
    image: Image.Image  # RGB
    truth: str  # one drawn line per line
    truth_html: str | None  # the source table, for tables
    lang: Lang


@dataclass(frozen=True)
class Run:
    """Text drawn in one face from ``(x, baseline)``; ``line`` is its line of the truth (a drawn
    line for prose and code, a table row for tables).

    ``edges`` (when given) are the ``len(text) + 1`` x offsets from ``x`` where each character
    starts and the last one ends: a justified line spreads its characters apart, and a shaped
    one (kerning, ligatures) does not advance by each character's own width. Without them a
    character ends where the font's width of the run up to it ends.
    """

    x: float
    baseline: float
    text: str
    role: Role
    size: float
    line: int = 0
    edges: tuple[float, ...] | None = None
