"""The authors' stylesheet as values, with the browser defaults it leaves in force.

Their CSS (``get_standard_html`` in the authors' ``preprocess_.py``) sets the body, headings,
paragraphs, lists, code and tables; what it leaves unset (heading and list top margins, the
``h1``/``h2`` bottom margins, ``pre``'s margins, link colours) comes from Chrome's user-agent
stylesheet, so it is listed here too. Lengths are CSS pixels; one page pixel each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

PAGE_WIDTH = 1600  # RENDER_WIDTH: the body's width (box-sizing: border-box) and the window's
PADDING = 60  # body padding, all sides
CONTENT_WIDTH = PAGE_WIDTH - 2 * PADDING
FONT_SIZE = 28.0
LINE_HEIGHT = 1.6  # a number: every element's line height is 1.6 times its own font size
MIN_HEIGHT = 1000  # the screenshot window: max(body height, MIN_HEIGHT) + EXTRA_HEIGHT ...
EXTRA_HEIGHT = 100
# ... of which headless Chrome's own window frame takes this much, so the screenshot (the
# page) is shorter than the window by it. Measured: Debian's Chromium in the authors' mode
# (--headless=new, --window-size) gives a 143 px shorter image for every height.
WINDOW_FRAME = 143

Colour = tuple[int, int, int]
INK: Colour = (0x11, 0x11, 0x11)
PAPER: Colour = (0xFD, 0xFB, 0xF7)
LINK: Colour = (0x00, 0x00, 0xEE)  # Chrome's unvisited link colour (a fresh profile)
PRE_BACKGROUND: Colour = (0xEE, 0xEE, 0xEE)
PRE_PADDING = 20.0
PRE_RADIUS = 5.0
CODE_BACKGROUND: Colour = (0xF5, 0xF5, 0xF5)
CODE_PADDING = (2.0, 5.0)  # vertical, horizontal
CODE_RADIUS = 3.0
TABLE_MARGIN = 30.0
CELL_PADDING = 12.0
CELL_BORDER: Colour = (0x99, 0x99, 0x99)
HEADER_BACKGROUND: Colour = (0xEE, 0xEE, 0xEE)
LIST_INDENT = 40.0
HR_TOP: Colour = (0x9A, 0x9A, 0x9A)  # the UA's 1 px inset border: dark above, light below
HR_BOTTOM: Colour = (0xEE, 0xEE, 0xEE)

Family = Literal["serif", "mono"]
Align = Literal["start", "center", "justify"]


def layout_unit(value: float) -> float:
    """``value`` as Chrome stores lengths: whole 1/64ths of a pixel, rounded down."""
    return math.floor(value * 64 + 1e-9) / 64


@dataclass(frozen=True)
class Font:
    """The computed font of an element (and the inherited properties text needs)."""

    family: Family = "serif"
    size: float = FONT_SIZE
    bold: bool = False
    italic: bool = False
    colour: Colour = INK
    underline: bool = False
    align: Align = "start"
    pre: bool = False  # white-space: pre (code blocks): no wrapping, spaces and newlines kept

    @property
    def line_height(self) -> float:
        return layout_unit(LINE_HEIGHT * self.size)

    def but(self, **changes: object) -> Font:
        return replace(self, **changes)  # type: ignore[arg-type]


BODY = Font()


@dataclass(frozen=True)
class Box:
    """The box properties of a block element (margins collapse; padding and borders do not)."""

    margin_top: float = 0.0
    margin_bottom: float = 0.0
    margin_left: float = 0.0
    margin_right: float = 0.0
    padding: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # top, right, bottom, left
    border_bottom: tuple[float, Colour] | None = None
    border_top: tuple[float, Colour] | None = None
    background: Colour | None = None
    radius: float = 0.0


# Heading sizes and margins: the authors' h1-h3, the UA's h4-h6 (margins in each heading's
# own em). (font size in em, top margin, bottom margin, bottom padding, bottom rule)
_HEADINGS: dict[str, tuple[float, float | None, float | None, float, tuple[float, Colour] | None]] = {
    "h1": (2.2, None, 40.0, 20.0, (3.0, (0x33, 0x33, 0x33))),
    "h2": (1.8, 50.0, None, 10.0, (1.0, (0xAA, 0xAA, 0xAA))),
    "h3": (1.4, 30.0, None, 0.0, None),
    "h4": (1.0, None, None, 0.0, None),
    "h5": (0.83, None, None, 0.0, None),
    "h6": (0.67, None, None, 0.0, None),
}
_UA_HEADING_MARGIN = {"h1": 0.67, "h2": 0.83, "h3": 1.0, "h4": 1.33, "h5": 1.67, "h6": 2.33}

BLOCK_TAGS = frozenset(
    {"p", "div", "pre", "ul", "ol", "li", "table", "blockquote", "hr", "dl", "dt", "dd",
     "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer", "figure",
     "figcaption", "address", "details", "summary", "main", "nav", "aside", "center", "img"}
)  # fmt: skip
HIDDEN_TAGS = frozenset({"head", "script", "style", "title", "meta", "link", "template"})


def block_style(tag: str, parent: Font, nested_list: bool = False) -> tuple[Box, Font]:
    """The box and font of a block element ``tag`` inside an element whose font is ``parent``."""
    if tag in _HEADINGS:
        scale, top, bottom, pad, rule = _HEADINGS[tag]
        font = parent.but(size=parent.size * scale, bold=True, align="center" if tag == "h1" else parent.align)
        ua = _UA_HEADING_MARGIN[tag] * font.size
        box = Box(
            margin_top=ua if top is None else top,
            margin_bottom=ua if bottom is None else bottom,
            padding=(0.0, 0.0, pad, 0.0),
            border_bottom=rule,
        )
        return box, font
    em = parent.size
    if tag == "p":
        return Box(margin_top=em, margin_bottom=20.0), parent.but(align="justify")
    if tag in ("ul", "ol", "dl"):
        # Nested lists lose the UA's top margin; the author's bottom margin stays.
        top = 0.0 if nested_list else em
        left = LIST_INDENT if tag != "dl" else 0.0
        return Box(margin_top=top, margin_bottom=20.0 if tag != "dl" else em, padding=(0.0, 0.0, 0.0, left)), parent
    if tag == "li":
        return Box(margin_bottom=10.0), parent
    if tag == "pre":
        font = parent.but(family="mono", pre=True)
        return Box(margin_top=em, margin_bottom=em, padding=(PRE_PADDING,) * 4, background=PRE_BACKGROUND, radius=PRE_RADIUS), font
    if tag == "table":
        return Box(margin_top=TABLE_MARGIN, margin_bottom=TABLE_MARGIN), parent
    if tag in ("blockquote", "figure"):
        return Box(margin_top=em, margin_bottom=em, margin_left=40.0, margin_right=40.0), parent
    if tag == "dd":
        return Box(margin_left=40.0), parent
    if tag == "hr":
        return Box(margin_top=0.5 * em, margin_bottom=0.5 * em, border_top=(1.0, HR_TOP), border_bottom=(1.0, HR_BOTTOM)), parent
    if tag == "center":
        return Box(), parent.but(align="center")
    if tag == "address":
        return Box(), parent.but(italic=True)
    return Box(), parent


def inline_font(tag: str, parent: Font) -> Font:
    """The font inside an inline element."""
    if tag in ("strong", "b", "th"):
        return parent.but(bold=True)
    if tag in ("em", "i", "cite", "var", "dfn"):
        return parent.but(italic=True)
    if tag in ("code", "kbd", "samp", "tt"):
        return parent.but(family="mono")
    if tag == "a":
        return parent.but(colour=LINK, underline=True)
    if tag in ("small",):
        return parent.but(size=parent.size * 5 / 6)
    if tag in ("big",):
        return parent.but(size=parent.size * 1.2)
    return parent


def _hex(c: Colour) -> str:
    return "#" + "".join(f"{v:02x}" for v in c)


def stylesheet() -> str:
    """The authors' stylesheet as CSS, from the values above: what a browser needs to set a
    page the way :mod:`shredfold.shred.paper` does (the browser check in the tests uses it)."""
    h1 = _HEADINGS["h1"]
    h2 = _HEADINGS["h2"]
    h3 = _HEADINGS["h3"]
    assert h1[4] is not None and h2[4] is not None
    return f"""
body {{ width: {PAGE_WIDTH}px; margin: 0; padding: {PADDING}px; box-sizing: border-box;
  background-color: {_hex(PAPER)}; font-family: 'Times New Roman', 'SimSun', serif;
  color: {_hex(INK)}; font-size: {FONT_SIZE:g}px; line-height: {LINE_HEIGHT:g}; }}
h1 {{ font-size: {h1[0]:g}em; border-bottom: {h1[4][0]:g}px solid {_hex(h1[4][1])};
  padding-bottom: {h1[3]:g}px; margin-bottom: {h1[2]:g}px; text-align: center; }}
h2 {{ font-size: {h2[0]:g}em; border-bottom: {h2[4][0]:g}px solid {_hex(h2[4][1])};
  margin-top: {h2[1]:g}px; padding-bottom: {h2[3]:g}px; }}
h3 {{ font-size: {h3[0]:g}em; font-weight: bold; margin-top: {h3[1]:g}px; }}
p {{ margin-bottom: 20px; text-align: justify; }}
ul, ol {{ padding-left: {LIST_INDENT:g}px; margin-bottom: 20px; }}
li {{ margin-bottom: 10px; }}
pre {{ background: {_hex(PRE_BACKGROUND)}; padding: {PRE_PADDING:g}px; border-radius: {PRE_RADIUS:g}px;
  overflow-x: auto; font-family: monospace; }}
code {{ background: {_hex(CODE_BACKGROUND)}; padding: {CODE_PADDING[0]:g}px {CODE_PADDING[1]:g}px;
  border-radius: {CODE_RADIUS:g}px; font-family: monospace; }}
img {{ max-width: 90%; display: block; margin: 30px auto; }}
table {{ border-collapse: collapse; width: 100%; margin: {TABLE_MARGIN:g}px 0; }}
th, td {{ border: 1px solid {_hex(CELL_BORDER)}; padding: {CELL_PADDING:g}px; text-align: left; }}
th {{ background-color: {_hex(HEADER_BACKGROUND)}; font-weight: bold; }}
"""
