"""The built-in reference solvers on photographs made the ShredBench authors' way, measured
as the pipeline measures them under ``protocol: paper``.

Every sample of one or more outside sample sets (folders laid out ``<domain>/<n>/<id>/``
with ``composite.jpg`` and ``truth.md``, README: "Outside sample sets") is stored as the
pipeline stores it, sent to each model as the paper's request (the composite as JPEG q95 at
2048 px, the paper's instruction) and its answer scored as the score stage scores it
(``ned_raw`` against the Markdown source). Each (sample, model) runs in a fresh process, so
its CPU time (all threads) and peak memory are its own.

    PYTHONPATH=src nice -n 10 python bench/paper_photos.py SET [SET ...] \\
        --models jigsaw-ocr ocr-islands --jsonl /tmp/pp/rows.jsonl --work /tmp/pp
    python bench/paper_photos.py --report /tmp/pp/rows.jsonl     # the tables only

Rows already in ``--jsonl`` (same set, sample, model and model version) are not measured
again, so an interrupted run resumes. Run it with main's ``src`` on the PYTHONPATH for the
"before" figures. The figures of the solver branch are in ``paper_photos_notes.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np


def measure(folder: Path, model_id: str) -> dict:
    """One model on one stored sample: ned_raw and its cost."""
    from shredfold.corpus.document import domain_kind
    from shredfold.models.builtin.jigsaw import JigsawOcr
    from shredfold.models.builtin.ocr_islands import OcrIslands
    from shredfold.shred.presentation import paper_image
    from shredfold.shred.prompts import paper_request
    from shredfold.shred.sample_folder import load_public, load_truth
    from shredfold.shred.solvers.jigsaw.segment import decode_photo, segment
    from shredfold.spec import ModelConfig
    from shredfold.tasks.shredbench.task import score_text

    public = load_public(folder)
    meta = public.meta
    kind = domain_kind(meta["domain"])
    photo = paper_image(public.composite)
    config = ModelConfig(id=model_id, adapter=model_id, images={"mode": "composite"})  # type: ignore[arg-type]
    model = JigsawOcr(config) if model_id == "jigsaw-ocr" else OcrIslands(config)
    request = paper_request(photo, item=None)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        text, error = model.complete(request).text, None
    except Exception as exc:  # scored as an empty answer, as the pipeline does
        text, error = "", f"{type(exc).__name__}: {exc}"
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    truth = load_truth(folder)
    scores = score_text(text, truth.source, truth.html, kind, meta.get("lang", "en"), True)
    return {
        "ned_raw": round(float(scores["ned_raw"]), 4),
        "ned": round(float(scores["ned"]), 4),
        "scraps": len(segment(decode_photo(photo))),
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "error": error,
        "answer": text,
    }


def model_version(model_id: str) -> int:
    from shredfold.models.registry import builtin_config, identity

    return int(identity(builtin_config(model_id))["version"])


def stored(root: Path, work: Path) -> list[tuple[Path, dict]]:
    """The set's samples stored as the pipeline stores them: (folder, what names it)."""
    from shredfold.shred.outside import read_folder
    from shredfold.shred.outside_sample import write_outside_sample

    out = []
    for s in read_folder(root):
        folder = work / "samples" / s.key
        if not (folder / "sample.json").is_file():
            tmp = folder.with_name(folder.name + ".tmp")
            tmp.mkdir(parents=True, exist_ok=True)
            write_outside_sample(s, tmp)
            tmp.rename(folder)
        out.append((folder, {"set": root.name, "domain": s.doc.domain, "n": s.n,
                             "id": s.doc.doc_id}))
    return out


def report(rows: list[dict]) -> str:
    """Per-sample and per-group tables; of rows of one sample and model (measured again at
    a later model version) the last is shown."""
    last = {(r["set"], r["domain"], r["n"], r["id"], r["model"]): r for r in rows}
    rows = list(last.values())
    models = sorted({r["model"] for r in rows})
    docs: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        docs[(r["set"], r["domain"], r["n"], r["id"])][r["model"]] = r
    head = "| set | domain | N | document | scraps | " + " | ".join(
        f"{m} ned_raw | {m} CPU s | {m} peak MB" for m in models) + " |"
    lines = [head, "|" + "---|" * (5 + 3 * len(models))]
    for key in sorted(docs, key=lambda k: (k[0], k[1], k[2], k[3])):
        got = docs[key]
        first = next(iter(got.values()))
        cells = []
        for m in models:
            r = got.get(m)
            cells += ([f"{r['ned_raw']:.3f}" + (" (error)" if r["error"] else ""),
                       f"{r['cpu_s']:.0f}", str(r["peak_mb"])] if r else ["", "", ""])
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {first['scraps']} | "
                     + " | ".join(cells) + " |")
    lines += ["", "| set | domain | N | model | documents | mean ned_raw | worst | "
              "mean CPU s | most CPU s | most peak MB |", "|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        for key in ((r["set"], r["domain"], r["n"]), (r["set"], "all", "all"), ("all", "all", "all")):
            groups[(*key, r["model"])].append(r)
    for key in sorted(groups, key=lambda k: tuple(str(v) for v in k)):
        rs = groups[key]
        ned = [r["ned_raw"] for r in rs]
        cpu = [r["cpu_s"] for r in rs]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(rs)} | "
                     f"{np.mean(ned):.3f} | {max(ned):.3f} | {np.mean(cpu):.0f} | {max(cpu):.0f} | "
                     f"{max(r['peak_mb'] for r in rs)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", type=Path, help="outside sample set folders")
    ap.add_argument("--models", nargs="+", default=["jigsaw-ocr", "ocr-islands"],
                    choices=["jigsaw-ocr", "ocr-islands"])
    ap.add_argument("--work", type=Path, default=Path("results/paper_photos"),
                    help="where the samples are stored (and found again)")
    ap.add_argument("--jsonl", type=Path, help="per-sample rows (appended; done rows skipped)")
    ap.add_argument("--only", default="", help="only samples whose domain/n/id holds this")
    ap.add_argument("--report", type=Path, help="only print the tables of this JSONL")
    ap.add_argument("--one", nargs=2, metavar=("FOLDER", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(Path(args.one[0]), args.one[1])))
        return
    if args.report:
        rows = [json.loads(ln) for ln in args.report.read_text().splitlines() if ln.strip()]
        print(report(rows))
        return
    done: dict[tuple, dict] = {}
    if args.jsonl and args.jsonl.is_file():
        for ln in args.jsonl.read_text().splitlines():
            if ln.strip():
                r = json.loads(ln)
                done[(r["set"], r["domain"], r["n"], r["id"], r["model"], r["version"])] = r
    versions = {m: model_version(m) for m in args.models}
    rows = []
    for root in args.sets:
        for folder, name in stored(root.resolve(), args.work.resolve()):
            if args.only not in f"{name['domain']}/{name['n']}/{name['id']}":
                continue
            for model_id in args.models:
                key = (name["set"], name["domain"], name["n"], name["id"], model_id,
                       versions[model_id])
                if key in done:
                    rows.append(done[key])
                    continue
                run = subprocess.run([sys.executable, __file__, "--one", str(folder), model_id],
                                     capture_output=True, text=True, check=False)
                if run.returncode != 0:
                    raise SystemExit(f"{folder} {model_id}: {run.stderr.strip().splitlines()[-1:]}")
                row = {**name, "model": model_id, "version": versions[model_id],
                       **json.loads(run.stdout.strip().splitlines()[-1])}
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "answer"}), flush=True)
                if args.jsonl:
                    with args.jsonl.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
