"""Evaluate the ``jigsaw-ocr`` reference solver on ShredBench samples.

Per synthesis mode, granularity N and domain: the share of samples fully reassembled (one
cluster, every accepted join correct), the precision of accepted joins (checked against
the answer key's poses, which an evaluator may read and the solver never does), NED of the
reading (TEDS too for tables) and seconds per sample (solve + read).

    python bench/jigsaw_eval.py --generate --n 1 8 12 16 --docs 1
    python bench/jigsaw_eval.py --store results/store          # samples already built
    python bench/jigsaw_eval.py --generate --no-ocr --docs 3   # geometry only, fast
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

from shredfold.corpus.document import DOMAINS, Document, domain_kind
from shredfold.shred.sample import load_hidden, load_truth, make_sample
from shredfold.shred.solvers.jigsaw.read import read
from shredfold.shred.solvers.jigsaw.scoring import join_correct, truth_poses
from shredfold.shred.solvers.jigsaw.solve import solve
from shredfold.spec import RenderSettings, SynthesisSettings

CORPUS = Path(__file__).resolve().parents[1] / "src" / "shredfold" / "corpus" / "builtin"


def builtin_docs(domain: str, count: int) -> list[Document]:
    files = sorted(p for p in (CORPUS / domain).iterdir() if p.is_file())[:count]
    return [Document(doc_id=f.stem, domain=domain, text=f.read_text(encoding="utf-8"))  # type: ignore[arg-type]
            for f in files]


def generate(out: Path, domains: list[str], ns: list[int], docs: int, seed: int, mode: str
             ) -> list[Path]:
    folders = []
    synth = SynthesisSettings(mode=mode)  # type: ignore[arg-type]
    for domain in domains:
        for doc in builtin_docs(domain, docs):
            for n in ns:
                folder = out / mode / f"{domain}-{doc.doc_id}-n{n}-s{seed}"
                if not (folder / "hidden.json").is_file():
                    make_sample(doc, n, RenderSettings(), synth, seed, folder)
                folders.append(folder)
    return folders


def stored(store: Path) -> list[Path]:
    return sorted(p.parent for p in (store / "sample").glob("*/*/hidden.json"))


def evaluate(folder: Path, ocr_on: bool) -> dict:
    meta = json.loads((folder / "sample.json").read_text(encoding="utf-8"))
    hidden = load_hidden(folder)
    kind = domain_kind(meta["domain"])
    images = [Image.open(folder / name).convert("RGBA") for name in meta["piece_files"]]
    t0 = time.perf_counter()
    sol = solve(images)
    t1 = time.perf_counter()
    truth = truth_poses(hidden)
    joins = sol.assembly.joins
    correct = [join_correct(c.i, c.j, c.pose, truth, sol.scraps[c.j].outline) for c in joins]
    row = {
        "mode": hidden["synthesizer"]["mode"],
        "n": meta["n"],
        "domain": meta["domain"],
        "full": len(sol.clusters) == 1 and all(correct),
        "joins": len(joins),
        "correct": int(sum(correct)),
        "clusters": len(sol.clusters),
        "solve_s": t1 - t0,
    }
    if ocr_on:
        from shredfold.metrics.text import ned
        from shredfold.shred.ocr import reader as ocr
        from shredfold.shred.ocr.orient import quarter_turn

        text = read(sol, kind, ocr.read_lines, quarter_turn).text
        row["read_s"] = time.perf_counter() - t1
        ref = load_truth(folder)
        if kind == "table":
            from shredfold.metrics.teds import teds
            from shredfold.tables import table_text

            row["teds"] = teds(text, ref.html) if ref.html else None
            row["ned"] = ned(table_text(text) if "<table" in text else text, ref.text, "table")
        else:
            row["ned"] = ned(text, ref.text, kind)
    return row


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, spec)


def report(rows: list[dict]) -> str:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["mode"], r["n"], r["domain"])].append(r)
        groups[(r["mode"], r["n"], "all")].append(r)
    lines = ["| mode | N | domain | samples | fully reassembled | join precision | NED | TEDS | s/sample |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (mode, n, domain), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] == "all", kv[0][2])):
        joins = sum(r["joins"] for r in rs)
        prec = sum(r["correct"] for r in rs) / joins if joins else None
        neds = [r["ned"] for r in rs if r.get("ned") is not None]
        teds = [r["teds"] for r in rs if r.get("teds") is not None]
        secs = float(np.mean([r["solve_s"] + r.get("read_s", 0.0) for r in rs]))
        lines.append(
            f"| {mode} | {n} | {domain} | {len(rs)} | {np.mean([r['full'] for r in rs]):.2f} | "
            f"{_fmt(prec, '.3f')} | {_fmt(float(np.mean(neds)) if neds else None, '.3f')} | "
            f"{_fmt(float(np.mean(teds)) if teds else None, '.3f')} | {secs:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="a results store whose samples to evaluate")
    ap.add_argument("--generate", action="store_true", help="build samples of the built-in corpus")
    ap.add_argument("--out", type=Path, default=Path("results/jigsaw_eval"))
    ap.add_argument("--domains", nargs="+", default=list(DOMAINS))
    ap.add_argument("--n", nargs="+", type=int, default=[1, 8, 12, 16])
    ap.add_argument("--docs", type=int, default=1, help="documents per domain")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", default="flat", help="synthesis mode: flat or blender")
    ap.add_argument("--no-ocr", action="store_true", help="geometry only (no NED)")
    ap.add_argument("--jsonl", type=Path, help="append per-sample rows here")
    args = ap.parse_args()
    if args.store:
        folders = stored(args.store)
    elif args.generate:
        folders = generate(args.out, args.domains, args.n, args.docs, args.seed, args.mode)
    else:
        ap.error("give --store or --generate")
    rows = []
    for folder in folders:
        row = evaluate(folder, not args.no_ocr)
        rows.append(row)
        print(json.dumps({"sample": folder.name, **row}), flush=True)
        if args.jsonl:
            with args.jsonl.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"sample": folder.name, **row}) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
