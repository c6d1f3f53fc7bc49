"""Outside sample sets made by the tests: small PNG/JPEG images drawn with Pillow, and truths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

NEWS = "# A memo\n\nThe meeting moved to *Thursday* at noon.\n"
TABLE_MD = "| name | qty |\n|---|---|\n| bolts | 12 |\n| nuts | 30 |\n"


def image(path: Path, text: str, size: tuple[int, int] = (240, 90), mode: str = "RGB") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new(mode, size, (250, 248, 240) if mode == "RGB" else (250, 248, 240, 255))
    ImageDraw.Draw(img).text((8, 30), text, fill=(20, 20, 20))
    img.save(path, quality=92) if path.suffix == ".jpg" else img.save(path)
    return path


def folder_set(root: Path) -> Path:
    """news_en at N=2 as two pieces, and a table at N=3 as one photograph."""
    memo = root / "news_en" / "2" / "memo"
    image(memo / "piece_1.png", "The meeting moved", mode="RGBA")
    image(memo / "piece_2.png", "to Thursday at noon.", mode="RGBA")
    (memo / "truth.md").write_text(NEWS, encoding="utf-8")
    parts = root / "table" / "3" / "parts"
    image(parts / "composite.jpg", "name qty bolts 12 nuts 30", size=(400, 300))
    (parts / "truth.md").write_text(TABLE_MD, encoding="utf-8")
    (root / "README.md").write_text("Scans of real shreds.\n")  # beside the domains: skipped
    return root


def manifest_set(root: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """The same samples as :func:`folder_set`, listed in ``root/set.jsonl``."""
    image(root / "img" / "memo-1.png", "The meeting moved", mode="RGBA")
    image(root / "img" / "memo-2.png", "to Thursday at noon.", mode="RGBA")
    image(root / "img" / "parts.jpg", "name qty bolts 12 nuts 30", size=(400, 300))
    (root / "truth").mkdir(exist_ok=True)
    (root / "truth" / "memo.md").write_text(NEWS, encoding="utf-8")
    (root / "truth" / "parts.md").write_text(TABLE_MD, encoding="utf-8")
    if rows is None:
        rows = [
            {"id": "memo", "domain": "news_en", "n": 2, "images": ["img/memo-1.png", "img/memo-2.png"], "truth": "truth/memo.md"},
            {"id": "parts", "domain": "table", "n": 3, "images": ["img/parts.jpg"], "truth": "truth/parts.md"},
        ]
    path = root / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
