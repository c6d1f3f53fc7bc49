"""The built-in reference solvers on table-top photographs (``images.mode: composite``).

Per sample, model and presentation: the request a model gets (built by the pipeline's own
``build_request``), the built-in model's answer, the pipeline's scores, and how well the
photo was segmented (scraps found, worst IoU with the true masks, drawn from
``hidden.json`` — which only this evaluator reads, never the solver).

Presentations: ``pieces`` (one image per scrap, as today), ``png`` (the stored composite as
stored: JPEG 95 in sample versions 4-5, JPEG 90 since 6),
``jpeg:Q`` (the composite as JPEG of quality Q), ``jpeg:Q:SIDE`` (also scaled so its
longest side is SIDE px; ``jpeg:95:2048`` is the paper's protocol).

    python bench/composite_eval.py --out /tmp/ce --n 1 8 16 --docs 3 \\
        --present pieces jpeg:95:2048 --models jigsaw-ocr --jsonl /tmp/ce/rows.jsonl
    python bench/composite_eval.py --mode blender --domains news_en code_python table \\
        --n 8 16 --docs 3 --present jpeg:95:2048 --models jigsaw-ocr ocr-islands
    python bench/composite_eval.py --report /tmp/ce/rows.jsonl   # tables only

Rows already in ``--jsonl`` (of the same model version) are not measured again, so an
interrupted run resumes.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jigsaw_eval import generate  # noqa: E402

from shredfold.corpus.document import DOMAINS, domain_kind  # noqa: E402
from shredfold.shred.sample import load_hidden, load_public, load_truth  # noqa: E402
from shredfold.shred.solvers.jigsaw.scoring import composite_masks  # noqa: E402
from shredfold.shred.solvers.jigsaw.segment import decode_photo, segment  # noqa: E402

LANGS = {"news_zh": "zh"}


def photo(png: bytes, present: str) -> tuple[bytes, float]:
    """The composite as presented, and its scale against the stored one."""
    if present == "png":
        return png, 1.0
    _, quality, *side = present.split(":")
    with Image.open(io.BytesIO(png)) as im:
        rgb = im.convert("RGB")
    scale = 1.0
    if side:
        factor = int(side[0]) / max(rgb.size)
        size = (round(rgb.width * factor), round(rgb.height * factor))
        scale = size[0] / rgb.width
        rgb = rgb.resize(size, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    rgb.save(buf, format="JPEG", quality=int(quality))
    return buf.getvalue(), scale


def segmentation(folder: Path, data: bytes, scale: float) -> dict:
    """Scraps found and the worst IoU of a true scrap with its best-matching segment."""
    rgb = decode_photo(data)
    t0 = time.perf_counter()
    segs = segment(rgb)
    seconds = time.perf_counter() - t0
    masks = composite_masks(load_hidden(folder), rgb.shape[:2], scale)
    worst = 1.0
    for m in masks:
        best = 0.0
        area = int(m.sum())
        for s in segs:
            x0, y0, x1, y1 = s.box
            inter = int((m[y0:y1, x0:x1] & s.mask).sum())
            if inter:
                best = max(best, inter / (area + s.area - inter))
        worst = min(worst, best)
    return {"found": len(segs), "min_iou": round(worst, 4), "segment_s": round(seconds, 2)}


def evaluate(folder: Path, model_id: str, present: str) -> dict:
    from shredfold.models.builtin.jigsaw import JigsawOcr
    from shredfold.models.builtin.ocr_islands import OcrIslands
    from shredfold.shred.prompts import build_request
    from shredfold.spec import ModelConfig
    from shredfold.tasks.shredbench.task import score_text

    public = load_public(folder)
    meta = public.meta
    kind = domain_kind(meta["domain"])
    row: dict = {"sample": folder.name, "mode": load_hidden(folder)["synthesizer"]["mode"],
                 "domain": meta["domain"], "n": meta["n"], "model": model_id,
                 "version": model_version(model_id), "present": present}
    composite = present != "pieces"
    if composite:
        data, scale = photo(public.composite, present)
        images = [data]
        row.update(segmentation(folder, data, scale))
    else:
        images = list(public.pieces)
    config = ModelConfig(
        id=model_id, adapter=model_id,
        images={"mode": "composite" if composite else "pieces"},  # type: ignore[arg-type]
    )
    model = JigsawOcr(config) if model_id == "jigsaw-ocr" else OcrIslands(config)
    request = build_request(kind=kind, lang=meta.get("lang", LANGS.get(meta["domain"], "en")),
                            n=meta["n"], images=images, composite=composite, item=None)
    t0 = time.perf_counter()
    try:
        text = model.complete(request).text
        row["error"] = None
    except Exception as exc:  # a refusal or a crash is scored as an empty answer
        text, row["error"] = "", f"{type(exc).__name__}: {exc}"
    row["seconds"] = round(time.perf_counter() - t0, 1)
    truth = load_truth(folder)
    scores = score_text(text, truth.text, truth.html, kind, meta.get("lang", "en"))
    row["ned"] = round(float(scores["ned"]), 4)
    if kind == "table":
        row["teds"] = round(float(scores["teds"]), 4)
    return row


def report(rows: list[dict]) -> str:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        for domain in (r["domain"], "all"):
            groups[(r["mode"], r["model"], r["present"], r["n"], domain)].append(r)
    lines = ["| mode | model | presented | N | domain | samples | NED | NED per sample | "
             "scraps found | worst IoU | errors |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3], k[4] == "all", k[4])):
        rs = groups[key]
        mode, model, present, n, domain = key
        ned = float(np.mean([r["ned"] for r in rs]))
        per = " ".join(f"{r['ned']:.3f}" for r in rs) if domain != "all" else ""
        found = (f"{sum(r['found'] == r['n'] for r in rs)}/{len(rs)} exact"
                 if "found" in rs[0] else "-")
        iou = f"{min(r['min_iou'] for r in rs):.3f}" if "min_iou" in rs[0] else "-"
        errors = sum(r["error"] is not None for r in rs)
        lines.append(f"| {mode} | {model} | {present} | {n} | {domain} | {len(rs)} | {ned:.3f} | "
                     f"{per} | {found} | {iou} | {errors} |")
    return "\n".join(lines)


def model_version(model_id: str) -> int:
    """The built-in model's version: answers change with it, so rows are kept by it."""
    from shredfold.models.registry import builtin_config, identity

    return int(identity(builtin_config(model_id))["version"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/composite_eval"),
                    help="where samples are built (and found again)")
    ap.add_argument("--mode", default="flat", help="synthesis mode: flat or blender")
    ap.add_argument("--domains", nargs="+", default=list(DOMAINS))
    ap.add_argument("--n", nargs="+", type=int, default=[1, 8, 16])
    ap.add_argument("--docs", type=int, default=1, help="documents per domain")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", nargs="+", default=["jigsaw-ocr"],
                    choices=["jigsaw-ocr", "ocr-islands"])
    ap.add_argument("--present", nargs="+", default=["pieces", "jpeg:95:2048"])
    ap.add_argument("--jsonl", type=Path, help="per-sample rows (appended; done rows skipped)")
    ap.add_argument("--report", type=Path, help="only print the tables of this JSONL")
    args = ap.parse_args()
    if args.report:
        rows = [json.loads(ln) for ln in args.report.read_text().splitlines() if ln.strip()]
        print(report(rows))
        return
    done: dict[tuple, dict] = {}
    if args.jsonl and args.jsonl.is_file():
        for ln in args.jsonl.read_text().splitlines():
            if ln.strip():
                r = json.loads(ln)
                # a row of an earlier version of the model is measured again
                done[(r["mode"], r["sample"], r["model"], r.get("version"), r["present"])] = r
    folders = generate(args.out, args.domains, args.n, args.docs, args.seed, args.mode)
    rows = []
    for folder in folders:
        for model_id in args.models:
            for present in args.present:
                key = (args.mode, folder.name, model_id, model_version(model_id), present)
                if key in done:
                    rows.append(done[key])
                    continue
                row = evaluate(folder, model_id, present)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.jsonl:
                    with args.jsonl.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
