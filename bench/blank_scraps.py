"""Blank scraps: pieces of a ShredBench sample that hold no character of the page.

    python bench/blank_scraps.py [SPEC ...]        (default: specs/default.yaml)

Geometry only, as the samples are made (the page layout, the cut from the sample key's own
generator, :func:`shredfold.shred.text_cut.cut_holding_text`) and nothing drawn, so it runs in seconds; a character belongs to the
piece holding its box centre, as in the failure diagnostics. Prints, per domain and N, the
pieces, the blank ones and their share, and the page size.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.shred.glyphs import page_glyphs
    from shredfold.shred.sample import streams
    from shredfold.shred.sample_key import draw_key
    from shredfold.shred.text_cut import bare_pieces, cut_holding_text

    specs = argv or [str(ROOT / "specs" / "default.yaml")]
    for spec in specs:
        plan = make_plan(load_spec(spec))
        stats: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
        sizes: dict[str, set[tuple[int, int]]] = defaultdict(set)
        for item_set in plan.sets_of("shred"):
            for item in item_set.items:
                glyphs = page_glyphs(item.doc, item.render)
                rng = streams(draw_key(item.doc, item.n, item.render, item.synthesis, item.seed))
                polygons = cut_holding_text(
                    glyphs.width, glyphs.height, item.n, rng["cut"], item.synthesis.jagged, glyphs.boxes
                )
                cell = stats[(item.doc.domain, item.n)]
                cell[0] += item.n
                cell[1] += bare_pieces(polygons, glyphs.boxes)
                sizes[item.doc.domain].add((glyphs.width, glyphs.height))
        print(f"{spec}")
        print(f"{'domain':<12} {'N':>3} {'pieces':>6} {'blank':>5} {'share':>6}  page sizes")
        total = [0, 0]
        for (domain, n), (pieces, blank) in sorted(stats.items()):
            total[0] += pieces
            total[1] += blank
            page = ", ".join(f"{w}x{h}" for w, h in sorted(sizes[domain]))
            print(f"{domain:<12} {n:>3} {pieces:>6} {blank:>5} {blank / pieces:>6.1%}  {page}")
        print(f"{'all':<12} {'':>3} {total[0]:>6} {total[1]:>5} {total[1] / max(total[0], 1):>6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
