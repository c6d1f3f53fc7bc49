"""ShredBench sample sizes on disk, and OCR NED on the same samples.

Builds the samples of a spec (default ``specs/default.yaml``: 6 domains × N = 1/8/16) with
the pipeline's own ``make_sample`` into ``--out/<key>/`` (kept, so a second run only
measures), and prints bytes per sample (mean, max, by N and by file) and the total.

``--ocr`` also runs the built-in reference models on the samples (``--ocr-n``, default
8 and 16, in ``--ocr-domains``): ``jigsaw-ocr`` on the pieces and ``ocr-islands`` on the
stored composite, scored by the pipeline's ``score_text`` (rows from
``bench/composite_eval.py``). Run it once with ``PYTHONPATH`` on another checkout to get
the "before" numbers; rows go to ``--jsonl`` and are reused when there.

    nice -n 10 python bench/sample_size.py --out /tmp/size/after --ocr --jsonl /tmp/size/after.jsonl
    PYTHONPATH=/work/main/src nice -n 10 python bench/sample_size.py --out /tmp/size/before --ocr ...

A new sample version gives new keys, so new random draws (cut, poses, layout, textures):
``--draws-from /tmp/size/before`` builds each sample under the key of the sample of the
same domain and N there instead, so before and after differ only by what the checkout
changed (the folders are then named by the old keys; keep them apart from a real store).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shredfold.shred.sample as sample  # noqa: E402
from shredfold.plan import make_plan  # noqa: E402
from shredfold.resolve import load_spec  # noqa: E402

MB = 1e6


def old_keys(folder: Path) -> dict[tuple[str, int], str]:
    """(domain, N) → key of the samples built in ``folder`` by an earlier run."""
    keys = {}
    for meta in folder.glob("*/sample.json"):
        m = json.loads(meta.read_text(encoding="utf-8"))
        keys[(m["domain"], m["n"])] = meta.parent.name
    return keys


def build(spec: Path, out: Path, draws_from: Path | None = None) -> list[tuple[object, Path]]:
    plan = make_plan(load_spec(spec))
    keys = old_keys(draws_from) if draws_from is not None else {}
    made = []
    for item_set in plan.sets_of("shred"):
        for item in item_set.items:
            key = keys.get((item.doc.domain, item.n), item.key)
            folder = out / key
            if not (folder / "hidden.json").is_file():
                folder.mkdir(parents=True, exist_ok=True)
                real = sample.sample_key
                sample.sample_key = lambda *_, key=key: key  # the streams are spawned from it
                try:
                    sample.make_sample(item.doc, item.n, item.render, item.synthesis, item.seed, folder)
                finally:
                    sample.sample_key = real
            made.append((item, folder))
    return made


def sizes(folder: Path) -> dict[str, int]:
    """Bytes per file kind: the composite, the pieces together, the page, the rest."""
    out: dict[str, int] = defaultdict(int)
    for p in folder.rglob("*"):
        if p.is_file():
            rel = p.relative_to(folder).as_posix()
            kind = "pieces" if rel.startswith("pieces/") else rel.split(".")[0]
            kind = kind if kind in ("pieces", "composite", "page") else "other"
            out[kind] += p.stat().st_size
    return dict(out)


def size_report(made: list[tuple[object, Path]]) -> str:
    rows = []
    for item, folder in made:
        s = sizes(folder)
        files = sorted(p.name for p in folder.iterdir() if p.is_file())
        rows.append({"domain": item.doc.domain, "n": item.n, "total": sum(s.values()), **s, "files": files})
    lines = [f"files of a sample: {', '.join(rows[0]['files'])} + pieces/", "",
             "| N | samples | mean MB | max MB | composite | pieces | page | other |",
             "|---|---|---|---|---|---|---|---|"]
    by_n: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by_n[r["n"]].append(r)
    for n, rs in [*sorted(by_n.items()), ("all", rows)]:
        def mean(k: str, rs: list[dict] = rs) -> str:
            return f"{statistics.fmean(r.get(k, 0) for r in rs) / MB:.2f}"
        lines.append(f"| {n} | {len(rs)} | {mean('total')} | {max(r['total'] for r in rs) / MB:.2f} | "
                     f"{mean('composite')} | {mean('pieces')} | {mean('page')} | {mean('other')} |")
    lines += ["", "| domain | N | MB |", "|---|---|---|"]
    lines += [f"| {r['domain']} | {r['n']} | {r['total'] / MB:.2f} |" for r in rows]
    lines.append(f"\nstore total: {sum(r['total'] for r in rows) / MB:.1f} MB over {len(rows)} samples")
    return "\n".join(lines)


def ocr(made: list[tuple[object, Path]], ns: list[int], domains: list[str], jsonl: Path | None) -> str:
    from composite_eval import evaluate, report

    done = {}
    if jsonl is not None and jsonl.is_file():
        for ln in jsonl.read_text().splitlines():
            if ln.strip():
                r = json.loads(ln)
                done[(r["domain"], r["n"], r["model"])] = r
    rows = []
    for item, folder in made:
        if item.n not in ns or item.doc.domain not in domains:
            continue
        for model, present in (("jigsaw-ocr", "pieces"), ("ocr-islands", "png")):
            key = (item.doc.domain, item.n, model)
            if key not in done:
                row = evaluate(folder, model, present)
                print(json.dumps(row), flush=True)
                if jsonl is not None:
                    with jsonl.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")
                done[key] = row
            rows.append(done[key])
    return report(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=Path("specs/default.yaml"))
    ap.add_argument("--out", type=Path, required=True, help="where the samples are built (and found again)")
    ap.add_argument("--ocr", action="store_true", help="also score the built-in OCR models")
    ap.add_argument("--ocr-n", nargs="+", type=int, default=[8, 16])
    ap.add_argument("--ocr-domains", nargs="+", default=["news_en", "code_python", "table"])
    ap.add_argument("--jsonl", type=Path, help="OCR rows (appended; done rows reused)")
    ap.add_argument("--draws-from", type=Path, help="build under the keys of the samples there (same draws)")
    args = ap.parse_args()
    made = build(args.spec, args.out, args.draws_from)
    print(size_report(made), flush=True)
    if args.ocr:
        print()
        print(ocr(made, args.ocr_n, args.ocr_domains, args.jsonl))


if __name__ == "__main__":
    main()
