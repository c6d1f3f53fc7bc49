"""The pinned font files, which a page uses, their SHA-256 (part of every sample key), and
cached Pillow fonts (Pillow is imported only to draw).

Text is laid out with Pillow's BASIC engine on purpose: RAQM pulls in system FriBiDi and
HarfBuzz builds that differ between machines, while BASIC depends only on FreeType, which the
pinned Pillow wheel bundles. None of our scripts needs complex shaping. (The paper style,
:mod:`shredfold.shred.paper`, shapes with its own pinned HarfBuzz and rasterises with its own
pinned FreeType, as Chrome does; it uses Pillow only for the faces' vertical metrics.)
"""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from shredfold.corpus.document import Document
from shredfold.store import sha256_file
from shredfold.versions import recorded_sha256

if TYPE_CHECKING:
    from PIL import ImageFont

Role = Literal[
    "prose", "prose_bold", "mono", "cjk", "cjk_bold",
    # The paper style (:mod:`shredfold.shred.paper`): the faces Chrome set the authors' pages in.
    "serif", "serif_bold", "serif_italic", "serif_bold_italic",
    "mono_bold", "mono_italic", "mono_bold_italic", "cjk_fallback",
]  # fmt: skip

DEJAVU_DIR = Path("/usr/share/fonts/truetype/dejavu")
NOTO_DIR = Path("/usr/share/fonts/opentype/noto")
CJK_PACKAGE = "manimgx_fonts_cjk"
CJK_FILE = "NotoSansCJK-VF.otf.ttc"


class FontMissingError(FileNotFoundError):
    """A pinned font file is absent; the message names the file and what provides it."""


@dataclass(frozen=True)
class FontFile:
    role: Role
    provider: str  # what installs the file, named in the error when it is missing
    file: str
    index: int = 0  # face index inside a collection (.ttc)
    variation: str | None = None  # named instance of a variable font

    def path(self) -> Path:
        if self.provider.startswith("pip"):
            try:
                return Path(str(importlib.resources.files(CJK_PACKAGE) / self.file))
            except ModuleNotFoundError:
                raise FontMissingError(
                    f"font {self.file} not found: the Python package {CJK_PACKAGE!r} is not "
                    f"installed ({self.provider})"
                ) from None
        if "fonts-noto-cjk" in self.provider:
            return NOTO_DIR / self.file
        return DEJAVU_DIR / self.file


_DEJAVU = "Debian package fonts-dejavu-core (apt-get install fonts-dejavu-core)"
_DEJAVU_EXTRA = "Debian package fonts-dejavu-extra (apt-get install fonts-dejavu-extra)"
_NOTO = "pip package manimgx-fonts-cjk (pip install manimgx-fonts-cjk)"
_NOTO_DEBIAN = "Debian package fonts-noto-cjk (apt-get install fonts-noto-cjk)"

FONTS: dict[Role, FontFile] = {
    "prose": FontFile("prose", _DEJAVU, "DejaVuSans.ttf"),
    "prose_bold": FontFile("prose_bold", _DEJAVU, "DejaVuSans-Bold.ttf"),
    "mono": FontFile("mono", _DEJAVU, "DejaVuSansMono.ttf"),
    # Face 2 of the collection is Simplified Chinese; the variable font's default instance is
    # Thin, so the weight must be chosen by name.
    "cjk": FontFile("cjk", _NOTO, CJK_FILE, index=2, variation="Regular"),
    "cjk_bold": FontFile("cjk_bold", _NOTO, CJK_FILE, index=2, variation="Bold"),
    # The paper style. The authors' CSS asks for 'Times New Roman', 'SimSun', serif and, for
    # code, monospace; their machine had none of the named faces, so Chrome set their pages
    # in fontconfig's serif and monospace: DejaVu Serif and DejaVu Sans Mono (their released
    # composites break lines exactly where DejaVu Serif does). Italics are the real faces
    # (fonts-dejavu-extra), which Chrome prefers to slanting the upright one.
    "serif": FontFile("serif", _DEJAVU, "DejaVuSerif.ttf"),
    "serif_bold": FontFile("serif_bold", _DEJAVU, "DejaVuSerif-Bold.ttf"),
    "serif_italic": FontFile("serif_italic", _DEJAVU_EXTRA, "DejaVuSerif-Italic.ttf"),
    "serif_bold_italic": FontFile("serif_bold_italic", _DEJAVU_EXTRA, "DejaVuSerif-BoldItalic.ttf"),
    "mono_bold": FontFile("mono_bold", _DEJAVU, "DejaVuSansMono-Bold.ttf"),
    "mono_italic": FontFile("mono_italic", _DEJAVU_EXTRA, "DejaVuSansMono-Oblique.ttf"),
    "mono_bold_italic": FontFile("mono_bold_italic", _DEJAVU_EXTRA, "DejaVuSansMono-BoldOblique.ttf"),
    # Chinese has no glyph in any face the CSS names, so Chrome falls back per character to
    # what fontconfig offers for it. With Debian's Noto CJK installed (serif and sans, both
    # weights) headless Chromium picks the first face of the sans Regular collection,
    # "Noto Sans CJK JP", for every weight and family (bold is made by thickening its
    # strokes), not Noto Serif CJK: its fallback query names neither the family nor the weight.
    "cjk_fallback": FontFile("cjk_fallback", _NOTO_DEBIAN, "NotoSansCJK-Regular.ttc", index=0),
}


def font_path(role: Role) -> Path:
    """The file behind a role; raise :class:`FontMissingError` naming file and provider."""
    spec = FONTS[role]
    path = spec.path()
    if not path.is_file():
        raise FontMissingError(f"font {path} not found; it is provided by the {spec.provider}")
    return path


def font_roles(doc: Document, style: str = "shredfold") -> tuple[Role, ...]:
    """The fonts a document's page is drawn with (their hashes go into the sample key)."""
    if style == "paper":
        return PAPER_ROLES
    if doc.kind == "code":
        return ("mono",)
    if doc.lang == "zh":
        return ("cjk", "cjk_bold")
    return ("prose", "prose_bold")


# Any page of the paper style may use any of them: a code listing holds Chinese comments, a
# news story inline code, a table bold headers.
PAPER_ROLES: tuple[Role, ...] = (
    "serif", "serif_bold", "serif_italic", "serif_bold_italic",
    "mono", "mono_bold", "mono_italic", "mono_bold_italic", "prose", "cjk_fallback",
)  # fmt: skip


CJK_DIST = "manimgx-fonts-cjk"


@functools.cache
def _file_hash(path: Path) -> str:
    # The CJK collection is tens of megabytes: the hash its wheel's RECORD lists (checked by
    # pip at install, trusted while the size is unchanged) spares planning from reading it.
    return recorded_sha256(CJK_DIST, path) or sha256_file(path)


def font_hashes(roles: tuple[Role, ...] | list[Role]) -> dict[str, str]:
    """SHA-256 of each role's file (with face and instance, which also shape the glyphs)."""
    out: dict[str, str] = {}
    for role in sorted(set(roles)):
        spec = FONTS[role]
        digest = _file_hash(font_path(role))
        out[role] = f"{digest}:{spec.index}:{spec.variation or ''}"
    return out


@functools.cache
def load_font(role: Role, size: float) -> ImageFont.FreeTypeFont:
    """A cached Pillow font; callers must not change its variation (the cache shares it)."""
    from PIL import ImageFont

    spec = FONTS[role]
    font = ImageFont.truetype(
        str(font_path(role)), size, index=spec.index, layout_engine=ImageFont.Layout.BASIC
    )
    if spec.variation is not None:
        font.set_variation_by_name(spec.variation)
    return font
