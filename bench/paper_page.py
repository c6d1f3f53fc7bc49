"""The paper style's page beside headless Chromium's page of the same Markdown.

    python bench/paper_page.py [FOLDER_OR_FILE.md ...] [--builtin N]

For each Markdown document (files given, e.g. the ShredBench authors' ``my_dataset/``, and
the first N built-in documents of every domain, default 2), the page is set by
:mod:`shredfold.shred.paper` and by Debian's Chromium (only the pinned faces visible, the
authors' stylesheet), and both are measured alike: lines (how many, how many differ), line
pitch relative to the page width (median distance between consecutive lines of a
paragraph), x-height (ink height of the letter x, in pixels and relative to the width),
paper colour and the mean absolute pixel difference over the page. Needs /usr/bin/chromium
and Playwright (``scripts/setup.sh --test``).
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _pitch(tops: list[float]) -> float:
    gaps = [b - a for a, b in zip(tops, tops[1:], strict=False) if b > a]
    small = min(gaps) if gaps else 0.0
    return statistics.median([g for g in gaps if g < small * 1.01]) if gaps else 0.0


def _x_height(gray: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> float:
    """Median ink height of the glyphs in ``boxes`` (x0, top, x1, bottom)."""
    heights = []
    for x0, top, x1, bottom in boxes:
        crop = gray[int(top) : int(np.ceil(bottom)), int(x0) : int(np.ceil(x1))]
        rows = np.where((crop < 128).any(axis=1))[0]
        if len(rows):
            heights.append(rows[-1] - rows[0] + 1)
    return float(statistics.median(heights)) if heights else float("nan")


def measure(name: str, doc, lay_out) -> dict[str, object]:
    from PIL import Image

    from shredfold.shred.paper.chromium import layout_text_lines
    from shredfold.shred.paper.markup import document_markdown, markdown_html
    from shredfold.shred.paper.page import paper_layout, render_paper
    from shredfold.shred.paper.shaping import face

    t = time.perf_counter()
    ours_img = np.asarray(render_paper(doc).image.convert("L")).astype(np.int16)
    ours_rgb = np.asarray(render_paper(doc).image)
    took = time.perf_counter() - t
    layout, _ = paper_layout(doc)
    page = lay_out(markdown_html(document_markdown(doc)), screenshot=True)
    theirs_rgb = np.asarray(Image.open(io.BytesIO(page.png)).convert("RGB"))
    theirs_img = np.asarray(Image.open(io.BytesIO(page.png)).convert("L")).astype(np.int16)

    ours_lines = layout_text_lines(layout)
    theirs_lines = page.lines()
    differ = sum(a[1] != b[1] for a, b in zip(ours_lines, theirs_lines, strict=False))
    differ += abs(len(ours_lines) - len(theirs_lines))
    ours_x = []
    for tl in layout.lines:
        for c in tl.line.chars:
            if c.ch == "x" and c.role == "serif":
                a, d = face(c.role).metrics(c.size)
                ours_x.append((c.x, tl.line.baseline - a, c.x + c.width, tl.line.baseline + d))
    theirs_x = [(left, top, right, bottom) for ch, left, top, right, bottom in page.chars if ch == "x" and bottom - top < 40]
    h = min(len(ours_img), len(theirs_img))
    return {
        "document": name,
        "lines": f"{len(ours_lines)}/{len(theirs_lines)}",
        "differ": differ,
        "pitch/width ours": _pitch([t for t, _ in ours_lines]) / 1600,
        "pitch/width chrome": _pitch([t for t, _ in theirs_lines]) / 1600,
        "x-height ours": _x_height(ours_img, ours_x),
        "x-height chrome": _x_height(theirs_img, theirs_x),
        "paper ours": tuple(int(v) for v in ours_rgb[3, 3]),
        "paper chrome": tuple(int(v) for v in theirs_rgb[3, 3]),
        "mean |diff|": float(np.abs(ours_rgb[:h].astype(int) - theirs_rgb[:h].astype(int)).mean()),
        "render s": took,
    }


def main(argv: list[str]) -> int:
    from shredfold.corpus.document import Document
    from shredfold.corpus.loaders import load_builtin
    from shredfold.shred.paper.chromium import chromium_pages

    builtin = 2
    if "--builtin" in argv:
        i = argv.index("--builtin")
        builtin = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    docs: list[tuple[str, Document]] = []
    for arg in argv:
        path = Path(arg)
        files = sorted(path.glob("*.md")) if path.is_dir() else [path]
        for f in files:
            docs.append((f.stem, Document(doc_id=f.stem, domain="news_en", text=f.read_text(encoding="utf-8"))))
    for domain in ("news_en", "news_zh", "code_python", "code_java", "code_cpp", "table"):
        docs += [(d.doc_id, d) for d in load_builtin(domain)[:builtin]]
    rows = []
    with chromium_pages() as lay_out:
        for name, doc in docs:
            rows.append(measure(name, doc, lay_out))
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        cells = [f"{v:.5f}" if isinstance(v, float) and v < 1 else f"{v:.2f}" if isinstance(v, float) else str(v) for v in r.values()]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main(sys.argv[1:]))
