"""The same page in Debian's headless Chromium, to check :mod:`shredfold.shred.paper` against
the browser the authors' pipeline used (never in the sample path: a browser's output is not
the same bytes on every machine).

Chromium sees only the pinned faces: a fontconfig file names a folder of links to them (and
keeps the system's rules, such as ``serif`` meaning DejaVu Serif). It lays out the HTML our
Markdown step makes, under the stylesheet of :func:`.css.stylesheet`, in a 1600 px viewport;
the check reads where each character went. Playwright drives it (a test dependency,
imported only here and only when used).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shredfold.shred.fonts import PAPER_ROLES, font_path
from shredfold.shred.paper import css
from shredfold.shred.paper.blocks import Layout
from shredfold.shred.paper.shaping import face

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--font-render-hinting=none", "--hide-scrollbars"]

# Each character's rectangle, in document order (text inside <head> has none).
_CHARS_JS = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const t = node.data;
    for (let i = 0; i < t.length; i++) {
      const r = document.createRange();
      r.setStart(node, i);
      r.setEnd(node, i + 1);
      const q = r.getClientRects();
      if (q.length) out.push([t[i], q[0].left, q[0].top, q[0].right, q[0].bottom]);
    }
  }
  return {chars: out, scrollHeight: document.body.scrollHeight};
}"""


@dataclass(frozen=True)
class BrowserPage:
    chars: list[tuple[str, float, float, float, float]]  # (char, left, top, right, bottom)
    scroll_height: int
    png: bytes | None = None  # the whole page, when asked for

    def lines(self) -> list[tuple[float, str]]:
        """(top, visible characters without spaces) of each line, top to bottom."""
        rows: dict[float, list[tuple[float, str]]] = {}
        for ch, left, top, _, _ in self.chars:
            if not ch.isspace():
                rows.setdefault(round(top, 3), []).append((left, ch))
        return [(top, "".join(ch for _, ch in sorted(row))) for top, row in sorted(rows.items())]


def layout_text_lines(layout: Layout) -> list[tuple[float, str]]:
    """Our layout's lines as :meth:`BrowserPage.lines` reads Chromium's: characters grouped by
    the top of their text (the element face's ascent above the baseline), spaces and list
    markers left out (the browser's text has no markers), clipped characters kept."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for tl in layout.lines:
        for c in tl.line.chars:
            if c.ch.isspace() or c.marker:
                continue
            # a fallback face's glyph sits on the line of its element's face
            role = c.role if c.role.startswith(("serif", "mono")) else ("serif_bold" if c.bold else "serif")
            top = tl.line.baseline - face(role).metrics(c.size)[0]
            rows.setdefault(round(top, 3), []).append((c.x, c.ch))
    return [(top, "".join(ch for _, ch in sorted(row))) for top, row in sorted(rows.items())]


def html_page(body: str) -> str:
    return (
        '<!DOCTYPE html><html><head><meta charset="UTF-8"><style>'
        + css.stylesheet()
        + f"</style></head><body>{body}</body></html>"
    )


@contextlib.contextmanager
def chromium_pages() -> Iterator[Any]:
    """A function that lays out an HTML body in Chromium and returns a :class:`BrowserPage`."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="shredfold-paper-fonts-") as tmp, sync_playwright() as pw:
        folder = Path(tmp) / "fonts"
        folder.mkdir()
        for role in PAPER_ROLES:
            path = font_path(role)
            link = folder / path.name
            if not link.exists():
                link.symlink_to(path)
        conf = Path(tmp) / "fonts.conf"
        conf.write_text(
            '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
            f"<dir>{folder}</dir><cachedir>{tmp}/cache</cachedir>"
            '<include ignore_missing="yes">/etc/fonts/conf.d</include></fontconfig>',
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("FONTCONFIG")}
        env["FONTCONFIG_FILE"] = str(conf)
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, env=env)
        try:
            page = browser.new_page(viewport={"width": css.PAGE_WIDTH, "height": css.MIN_HEIGHT})

            def lay_out(body: str, screenshot: bool = False) -> BrowserPage:
                page.set_content(html_page(body), wait_until="load")
                data = page.evaluate(_CHARS_JS)
                png = page.screenshot(full_page=True) if screenshot else None
                return BrowserPage([tuple(c) for c in data["chars"]], int(data["scrollHeight"]), png)

            yield lay_out
        finally:
            browser.close()
