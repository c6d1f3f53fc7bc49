"""How many answers of the built-in OCR models change now that jigsaw's words are grouped
into rows by the OCR reader's rule (centres, :mod:`shredfold.shred.ocr.rows`) instead of
jigsaw's own (vertical extents that grow as words join).

Samples of the built-in corpus are built as the default spec builds them (flat pieces,
1600 px pages, rotations up to 180 degrees). Every image is read by the engine once; the
answers are then written twice from the same recognised boxes, with the extent rule
(``old``, kept below as it was) and with the shared rule (``new``):

* ``jigsaw-ocr``: the solved page read as the model reads it, with the domain's kind (our
  protocol) and with none (the paper's instruction: the page written as Markdown);
* ``ocr-islands``: each piece turned upright and read on its own; with a kind through the
  reader's :func:`~shredfold.shred.ocr.reader.read_text` (rows by the reader's rule, which
  did not change: its old code is kept here too, to show it), with none through jigsaw's
  Markdown writer.

Reported: word lists whose rows differ, answers that differ, and where they do, NED before
and after (against the text drawn under our protocol, against the source as written for
the Markdown answers, as :func:`shredfold.tasks.shredbench.task.score_text` scores them).

    nice -n 10 python bench/ocr_rows.py --docs 1 --n 1 8     # 12 samples, ~500 CPU-s

Measured when the rule was shared (first document of each of the 6 domains, seed 0):
N = 1 and 8 (12 samples): 1 of 12 jigsaw pages grouped differently (the table's two-row
header: boxes spanning both rows chained them; its answer is built from the ruled cells,
so none changed), 0 of 54 scraps; 0 of 48 answers differ. N = 16 (6 samples, ~300 CPU-s):
0 of 6 pages, 1 of 96 scraps (a Java scrap whose tall misread "了" chained four lines into
one; now four rows); 1 of 24 answers differs (ocr-islands as Markdown, NED 0.6307 ->
0.6321). The reader's own grouping: 0 of 150 scraps differ (its rule is the shared one).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from shredfold.corpus.document import DOMAINS, domain_kind
from shredfold.shred.ocr import reader as ocr
from shredfold.shred.ocr.orient import quarter_turn, upright
from shredfold.shred.ocr.rows import group_rows
from shredfold.shred.sample import load_truth
from shredfold.shred.solvers.jigsaw import markdown, table, words
from shredfold.shred.solvers.jigsaw.read import read, read_words
from shredfold.shred.solvers.jigsaw.solve import solve
from shredfold.tasks.shredbench.task import score_text


def old_jigsaw_rows(ws: Sequence[words.Word]) -> list[list[words.Word]]:
    """jigsaw's grouping before the shared rule: a word joins a row it overlaps vertically
    by half the smaller height, and the row's extent grows to hold it."""
    out: list[tuple[float, float, list[words.Word]]] = []
    for wd in sorted(ws, key=lambda w: (w.y0 + w.y1) / 2):
        if out:
            r0, r1, members = out[-1]
            if min(r1, wd.y1) - max(r0, wd.y0) >= 0.5 * min(r1 - r0, wd.height):
                members.append(wd)
                out[-1] = (min(r0, wd.y0), max(r1, wd.y1), members)
                continue
        out.append((wd.y0, wd.y1, [wd]))
    return [sorted(m, key=lambda w: w.x0) for _, _, m in out]


def old_reader_rows(boxes: Sequence[ocr.OcrLine]) -> list[list[ocr.OcrLine]]:
    """The reader's grouping before it moved to :mod:`shredfold.shred.ocr.rows`."""
    rows: list[list[ocr.OcrLine]] = []
    for box in sorted(boxes, key=lambda b: (b.box[1] + b.box[3]) / 2):
        centre = (box.box[1] + box.box[3]) / 2
        if rows:
            row = rows[-1]
            row_centre = statistics.fmean((b.box[1] + b.box[3]) / 2 for b in row)
            row_height = statistics.median(b.height for b in row)
            if abs(centre - row_centre) <= 0.5 * min(box.height, row_height):
                row.append(box)
                continue
        rows.append([box])
    return [sorted(row, key=lambda b: b.box[0]) for row in rows]


def old_reader_indents(rows: list[list[ocr.OcrLine]]) -> list[int]:
    width = ocr._char_width(rows)
    starts = [row[0].glyphs[0] if row[0].glyphs else row[0].box[0] for row in rows]
    if width is None:
        return [0] * len(rows)
    left = min(starts)
    return [max(0, round((start - left) / width)) for start in starts]


@contextlib.contextmanager
def old_rules() -> Iterator[None]:
    """The modules' row grouping (and the reader's indents) swapped for the old code."""
    swaps = [(m, "group_rows", old_jigsaw_rows) for m in (words, markdown, table)]
    swaps += [(ocr, "group_rows", old_reader_rows), (ocr, "_indents", old_reader_indents)]
    saved = [(m, name, getattr(m, name)) for m, name, _ in swaps]
    for m, name, fn in swaps:
        setattr(m, name, fn)
    try:
        yield
    finally:
        for m, name, fn in saved:
            setattr(m, name, fn)


def _digest(image: Image.Image | np.ndarray) -> str:
    arr = np.asarray(image)
    return hashlib.sha1(arr.tobytes() + str(arr.shape).encode()).hexdigest()


class Memo:
    """The engine's work done once per image, whichever rule writes the answer: the
    reader's raw reading (``reader._read``, under both ``read_lines`` and ``read_text``;
    :meth:`installed` puts it in place) and the quarter turns."""

    def __init__(self) -> None:
        self.turns: dict[str, int] = {}
        self.readings: dict[tuple[str, bool], Any] = {}
        self.raw_read = ocr._read

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        ocr._read = self._read  # type: ignore[assignment]
        try:
            yield
        finally:
            ocr._read = self.raw_read  # type: ignore[assignment]

    def turn(self, rgb: np.ndarray) -> int:
        key = _digest(rgb)
        if key not in self.turns:
            self.turns[key] = quarter_turn(rgb)
        return self.turns[key]

    def _read(self, image: Image.Image, binarize: bool = True) -> Any:
        key = (_digest(image), binarize)
        if key not in self.readings:
            self.readings[key] = self.raw_read(image, binarize)
        return self.readings[key]


def both(fn: Callable[[], str]) -> tuple[str, str]:
    """``fn``'s answer under the old rules, then under the new."""
    with old_rules():
        old = fn()
    return old, fn()


def compare_groupings(sample: str, who: str, ws: Sequence[words.Word], tally: Counter[str]) -> None:
    tally[f"{who} word lists"] += 1
    old = [[w.text for w in r] for r in old_jigsaw_rows(ws)]
    new = [[w.text for w in r] for r in group_rows(ws)]
    if old != new:
        tally[f"{who} word lists grouped differently"] += 1
        tally[f"{who} rows old"] += len(old)
        tally[f"{who} rows new"] += len(new)
        split = [r for r in old if r not in new]
        print(json.dumps({"sample": sample, "grouping": who, "rows_old": len(old),
                          "rows_new": len(new), "old_rows_split": split}, ensure_ascii=False))


def evaluate(folder: Path, memo: Memo, tally: Counter[str]) -> list[dict[str, Any]]:
    meta = json.loads((folder / "sample.json").read_text(encoding="utf-8"))
    domain = meta["domain"]
    kind = domain_kind(domain)
    lang = "zh" if domain.endswith("_zh") else "en"
    truth = load_truth(folder)
    images = [Image.open(folder / name).convert("RGBA") for name in meta["piece_files"]]
    out = []

    def record(model: str, protocol: str, old: str, new: str) -> None:
        paper = protocol == "markdown"
        ref = truth.source if paper else truth.text
        row = {"sample": folder.name, "model": model, "protocol": protocol, "differs": old != new}
        if old != new:
            key = "ned_raw" if paper else "ned"
            row["ned_old"] = score_text(old, ref, truth.html, kind, lang, paper)[key]
            row["ned_new"] = score_text(new, ref, truth.html, kind, lang, paper)[key]
        out.append(row)

    # jigsaw-ocr, as the model reads a request of pieces sent cut out.
    sol = solve(images)
    for protocol, asked in (("kind", kind), ("markdown", None)):
        def jigsaw(asked: str | None = asked) -> str:
            text = read(sol, asked, ocr.read_lines, memo.turn).text
            return "```\n" + text + "\n```" if asked == "code" else text

        old, new = both(jigsaw)
        record("jigsaw-ocr", protocol, old, new)
    reading = read(sol, None, ocr.read_lines, memo.turn)
    for ws in reading.words:
        compare_groupings(folder.name, "jigsaw page", ws, tally)

    # ocr-islands: each piece turned upright and read alone.
    scraps = [upright(im, turn=memo.turn) for im in images]
    parts = [(np.asarray(s.convert("RGB")), read_words(np.asarray(s.convert("RGB")), ocr.read_lines))
             for s in scraps]
    for _, ws in parts:
        compare_groupings(folder.name, "islands scrap", ws, tally)
    for s in scraps:
        lines = memo._read(s).lines
        old_r = [[id(b) for b in r] for r in old_reader_rows(lines)]
        new_r = [[id(b) for b in r] for r in group_rows(lines)]
        tally["reader scraps"] += 1
        tally["reader scraps grouped differently"] += old_r != new_r
    asked = "code" if kind == "code" else "prose"

    def islands_kind() -> str:
        texts = [ocr.read_text(s, kind=asked) for s in scraps]  # type: ignore[arg-type]
        return "\n".join(t for t in texts if t.strip())

    old, new = both(islands_kind)
    record("ocr-islands", "kind", old, new)
    old, new = both(lambda: markdown.pages_markdown(parts))
    record("ocr-islands", "markdown", old, new)
    return out


def summary(rows: list[dict[str, Any]], tally: Counter[str]) -> str:
    lines = [f"{k}: {v}" for k, v in sorted(tally.items())]
    lines += ["", "| model | protocol | answers | differ | NED old | NED new |", "|---|---|---|---|---|---|"]
    for model in ("jigsaw-ocr", "ocr-islands"):
        for protocol in ("kind", "markdown"):
            rs = [r for r in rows if r["model"] == model and r["protocol"] == protocol]
            diff = [r for r in rs if r["differs"]]
            old = f"{np.mean([r['ned_old'] for r in diff]):.4f}" if diff else "-"
            new = f"{np.mean([r['ned_new'] for r in diff]):.4f}" if diff else "-"
            lines.append(f"| {model} | {protocol} | {len(rs)} | {len(diff)} | {old} | {new} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/ocr_rows"))
    ap.add_argument("--domains", nargs="+", default=list(DOMAINS))
    ap.add_argument("--n", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--docs", type=int, default=1, help="documents per domain")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from jigsaw_eval import generate  # the samples jigsaw_eval builds

    folders = generate(args.out, args.domains, args.n, args.docs, args.seed, "flat")
    memo, tally, rows = Memo(), Counter[str](), []
    t0 = time.process_time()
    with memo.installed():
        for folder in folders:
            got = evaluate(folder, memo, tally)
            rows += got
            for r in got:
                print(json.dumps(r), flush=True)
    print(f"\n{len(folders)} samples, {time.process_time() - t0:.0f} CPU-s\n")
    print(summary(rows, tally))


if __name__ == "__main__":
    main()
