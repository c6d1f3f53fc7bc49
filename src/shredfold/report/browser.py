"""Open a report in Debian's headless Chromium through Playwright (no browser download: the
system's /usr/bin/chromium), recording console errors and every request the page makes.

Used by the tests and by ``python -m shredfold.report.browser REPORT DOCS`` (the README's
screenshots). Playwright is a test dependency, imported only here and only when used."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@dataclass
class Visit:
    page: Any
    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def outside(self) -> list[str]:
        """Requests for anything but the report itself and inline data."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


@contextlib.contextmanager
def visit(report: Path, width: int = 1360, height: int = 900) -> Iterator[Visit]:
    from playwright.sync_api import sync_playwright

    url = report.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="shredfold-chromium-") as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS,
            viewport={"width": width, "height": height}, offline=True,
        )  # fmt: skip
        try:
            page = ctx.new_page()
            v = Visit(page, url)
            page.on("console", lambda m: v.console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: v.page_errors.append(str(e)))
            page.on("request", lambda r: v.requests.append(r.url))
            page.goto(url, wait_until="load")
            yield v
        finally:
            ctx.close()


# The report's main views, as README screenshots: (file, CSS selector).
VIEWS = (
    ("report-leaderboard.png", "#leaderboard"),
    ("report-decay.png", "#decay"),
    ("report-heatmaps.png", "#heatmaps"),
    ("report-diagnostics.png", "#diagnostics"),
    ("report-origami.png", "#origami"),
    ("report-samples.png", "#samples .sample"),
    ("report-episodes.png", "#episodes .episode"),
)


def screenshots(report: Path, folder: Path) -> list[Path]:
    """A PNG of each main view of ``report`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    with visit(report) as v:
        for name, selector in VIEWS:
            element = v.page.locator(selector).first
            if element.count():
                element.screenshot(path=str(folder / name))
                out.append(folder / name)
    return out


if __name__ == "__main__":
    import sys

    for p in screenshots(Path(sys.argv[1]), Path(sys.argv[2])):
        print(p)
