"""Fidelity to the ShredBench authors' images: their released documents rendered with our
paper style and scene beside their released composites of the same documents.

    nice -n 10 python bench/paper_fidelity.py --dataset /tmp/sb/my_dataset --composites /tmp/sb/data_8
    python bench/paper_fidelity.py ... --no-ned          # the image measures only
    python bench/paper_fidelity.py ... --seeds 0 1 2     # ours at several seeds (spread)
    python bench/paper_fidelity.py ... --layouts 12      # + the frame's scale over 12 layouts

Documents: every ``<doc>.md`` of ``--dataset`` that has a ``<doc>.jpg`` in ``--composites``
(their released 4096² JPEG composites, N = 8; in their repository news_008, 031 and 041).
Ours: the document as a news_en document, through the sample pipeline with the paper
spec's page and scene (``specs/paper.yaml``: ``render.style: paper``, ``preset: paper``),
N = 8, seed ``--seeds``. The first seed is compared as one draw against their one draw;
with several seeds a second table compares our median over the draws with theirs and says
whether theirs lies inside our range (the cut, the layout and so the frame's scale are drawn
per sample, by their script as by ours, so one draw strays 10-20 % in scale).

Measured alike on both (``paper_scene_look.measure``; grey = mean of RGB): the text's
x-height and line pitch in image px relative to the image width (the text's scale in the
photograph a model reads) and x-height / pitch (the page's own proportion: both pages
have the same CSS line height, so the pitch is the ruler that turns an x-height into a
share of the page width: x-height / page width = x-height / pitch x 44.8 / 1600); the
paper's and the backdrop's mean colour and their difference, CIEDE2000 (ΔE00, scikit-image,
sRGB D65); the scraps' share of the image; the edge curl: per scrap 1 - area / convex
hull's area (the cut is Voronoi cells, convex, so a flat scrap scores ~0 and curled
corners score more), median and 90th percentile over scraps.

NED (unless ``--no-ned``): both composites of every document form one outside sample set
(``shred.samples.folder``, ids ``theirs-<doc>`` and ``ours-<doc>-<k>`` for the k-th seed, the document as
``truth.md``; ours stored as theirs were released: JPEG quality 95 at 4096²) and are run
through the real pipeline (Snakemake, ``protocol: paper``: JPEG q95 at 2048 px, the
Markdown instruction, raw NED against the Markdown as written) with the built-in reference
models ``jigsaw-ocr`` and ``ocr-islands``; per-item ``ned_raw`` read from the cells'
Parquet tables.

``--layouts K``: the frame's scale (frame px per page px) of ours over K seeds without
rendering: the sample's page, cut, pieces, the authors' packing and the camera fitted to
the built scene, against theirs from their line pitch (pitch / 44.8 page px). One composite is one draw of the layout; this shows
how far one draw may stray.

Targets (issue 29 item 3): geometry (x-height, pitch, share) within 5 % of theirs, colours
within ΔE 5, ``ocr-islands`` raw NED within 0.05 of theirs, per document. The table is
printed and written to ``--out`` (Markdown).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import cv2
import duckdb
import numpy as np
from skimage.color import deltaE_ciede2000, rgb2lab

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_scene_look import measure  # noqa: E402

from shredfold.corpus.document import Document  # noqa: E402
from shredfold.resolve import load_spec  # noqa: E402
from shredfold.shred.sample import build_sample  # noqa: E402
from shredfold.shred.sample_key import draw_key, sample_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N = 8  # their released composites (data_8)
MODELS = ("jigsaw-ocr", "ocr-islands")
LINE_HEIGHT = 28 * 1.6  # page px, their stylesheet (and our paper style)
PAGE_WIDTH = 1600
GEOMETRY = ("xheight_rel", "pitch_rel", "share")
SPEC = """name: paper-fidelity
seed: 0
shred:
  protocol: paper
  samples:
    folder: set
  domains: [news_en]
  granularities: [{n}]
models: [{models}]
"""


def delta_e(a: list[float], b: list[float]) -> float:
    """CIEDE2000 between two mean sRGB colours (8-bit)."""
    lab = rgb2lab(np.array([[a, b]], dtype=np.float64) / 255.0)
    return float(deltaE_ciede2000(lab[0, 0], lab[0, 1]))


def ours(doc: Document, seed: int, work: Path) -> tuple[Path, float | None]:
    """Our composite of ``doc`` (JPEG q95, 4096², kept under ``work`` by its sample key) and
    the CPU seconds it took (None when it was already there)."""
    shred = load_spec(ROOT / "specs" / "paper.yaml").spec.shred
    assert shred is not None
    render, synth = shred.render_for(doc.domain), shred.synthesis
    path = work / "ours" / f"{doc.doc_id}-{seed}-{sample_key(doc, N, render, synth, seed)[:16]}.jpg"
    if path.exists():
        return path, None
    t = time.process_time()
    built = build_sample(doc, N, render, synth, seed)
    cpu = time.process_time() - t
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.jpg")
    cv2.imwrite(str(tmp), np.ascontiguousarray(built.table.image[..., 2::-1]), [cv2.IMWRITE_JPEG_QUALITY, 95])
    tmp.replace(path)
    return path, cpu


def looks(path: Path) -> dict[str, object]:
    m = measure(cv2.imread(str(path), cv2.IMREAD_COLOR)[..., ::-1])
    m["xheight_pitch"] = round(float(m["xheight_px"]) / float(m["pitch_px"]), 4)  # type: ignore[arg-type]
    m["xheight_page"] = round(float(m["xheight_pitch"]) * LINE_HEIGHT / PAGE_WIDTH, 5)  # type: ignore[arg-type]
    return m


def layout_scales(doc: Document, seeds: range) -> list[float]:
    """Frame px per page px of ours at each seed: the sample's page, cut and pieces, and the
    scene built as the sample builds it (:func:`blender_paper.prepare`: their packing, the
    camera fitted to the evaluated sheets, relief included, as theirs is to the objects'
    dimensions), nothing rendered."""
    from shredfold.shred.blender_paper import prepare
    from shredfold.shred.glyphs import page_glyphs
    from shredfold.shred.modes import PAPER_SCENE
    from shredfold.shred.pieces import cut_pieces
    from shredfold.shred.render import render_page
    from shredfold.shred.sample import streams
    from shredfold.shred.text_cut import cut_holding_text

    shred = load_spec(ROOT / "specs" / "paper.yaml").spec.shred
    assert shred is not None
    render, synth = shred.render_for(doc.domain), shred.synthesis
    ppm = float(PAPER_SCENE["pixels_per_meter"])
    out = []
    for seed in seeds:
        rng = streams(draw_key(doc, N, render, synth, seed))
        pixels = np.asarray(render_page(doc, render, rng["render"]).image)
        h, w = pixels.shape[:2]
        spread = PAPER_SCENE["cut_seeds"] != "uniform"
        polygons = cut_holding_text(w, h, N, rng["cut"], synth.jagged, page_glyphs(doc, render).boxes, spread)
        prep = prepare(cut_pieces(pixels, polygons, rng["pose"], synth.max_rotation), rng["scraps"])
        try:
            out.append(int(PAPER_SCENE["resolution"]) / (prep.view.side * ppm))
        finally:
            prep.scene.clear()
    return out


def raw_ned(work: Path, theirs: dict[str, Path], mine: dict[str, list[Path]],
            docs: dict[str, Document]) -> dict[tuple[str, str], float]:
    """``(sample id, model) -> ned_raw`` from one pipeline run over every composite: theirs
    as ``theirs-<doc>``, ours at the k-th seed as ``ours-<doc>-<k>``."""
    folder = work / "run"
    if folder.exists():
        shutil.rmtree(folder / "set", ignore_errors=True)
    images = {f"theirs-{name}": (name, img) for name, img in theirs.items()}
    images |= {f"ours-{name}-{k}": (name, img) for name, imgs in mine.items() for k, img in enumerate(imgs)}
    for sid, (name, img) in images.items():
        sample = folder / "set" / "news_en" / str(N) / sid
        sample.mkdir(parents=True)
        shutil.copy(img, sample / "composite.jpg")
        (sample / "truth.md").write_text(docs[name].text, encoding="utf-8")
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.format(n=N, models=", ".join(MODELS)), encoding="utf-8")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(folder), "--cores", "2",
           "results/leaderboard.csv", "--config", f"spec={spec}"]
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"snakemake failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    tables = [str(p) for p in (folder / "results" / "cells" / "score").rglob("*.parquet")]
    rows = duckdb.sql(f"SELECT doc_id, model, ned_raw, error FROM read_parquet({tables})").fetchall()
    out = {}
    for doc_id, model, ned, error in rows:
        if error:
            print(f"  {doc_id} {model}: error {error}")
        out[(doc_id, model)] = float(ned)
    return out


def fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.5f}" if abs(v) < 0.1 else f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    if isinstance(v, list):
        return "(" + ", ".join(f"{x:.1f}" for x in v) + ")"
    return str(v)


def _rel(ours: float, theirs: float, tol: float = 0.05) -> str:
    d = ours / theirs - 1
    return f"{d:+.1%} {'✓' if abs(d) <= tol else '✗'}"


def tables(rows: dict[str, dict[str, dict[str, object]]], spread: dict[str, dict[str, list[float]]],
           ned: dict[tuple[str, str], float]) -> str:
    cols = ["xheight_px", "pitch_px", "xheight_rel", "pitch_rel", "xheight_pitch", "xheight_page", "share",
            "bulge_median", "bulge_p90", "paper_rgb", "backdrop_rgb", "backdrop_centre_minus_corner", "shadow",
            "scraps"]
    out = ["| document | images | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, pair in rows.items():
        for who in ("theirs", "ours"):
            out.append(f"| {name} | {who} | " + " | ".join(fmt(pair[who][c]) for c in cols) + " |")
    out += ["", "Ours (first seed) against theirs (relative difference of the geometry; ΔE00 of the mean colours; "
            "raw NED under protocol: paper; target met: ✓)", ""]
    head = (["x-height", "pitch", "share", "x-height / pitch", "curl (bulge median)", "ΔE00 paper",
             "ΔE00 backdrop"] + [f"{m} NED theirs / ours / diff" for m in MODELS])
    out += ["| document | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for name, pair in rows.items():
        t, o = pair["theirs"], pair["ours"]
        cells = [_rel(float(o[c]), float(t[c])) for c in (*GEOMETRY, "xheight_pitch")]  # type: ignore[arg-type]
        d = float(o["bulge_median"]) / float(t["bulge_median"]) - 1  # type: ignore[arg-type]
        cells.append(f"{d:+.0%}")
        for c in ("paper_rgb", "backdrop_rgb"):
            e = delta_e(t[c], o[c])  # type: ignore[arg-type]
            cells.append(f"{e:.2f} {'✓' if e <= 5 else '✗'}")
        for m in MODELS:
            a, b = ned.get((f"theirs-{name}", m)), ned.get((f"ours-{name}-0", m))
            if a is None or b is None:
                cells.append("-")
                continue
            ok = "✓" if abs(b - a) <= 0.05 else "✗"
            cells.append(f"{a:.3f} / {b:.3f} / {b - a:+.3f}" + (f" {ok}" if m == "ocr-islands" else ""))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    draws = len(next(iter(next(iter(spread.values())).values())))
    if draws > 1:
        out += ["", f"Ours over {draws} seeds (each a new cut, layout and curl) against theirs (one draw of their "
                "script): our median's relative difference (✓ within 5%; NED: within 0.05), our min / max, and "
                "whether theirs lies inside our range (in)", ""]
        keys = [*GEOMETRY, "xheight_pitch", "bulge_median"]
        head = [*keys, *(f"{m} NED" for m in MODELS)]
        out += ["| document | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
        for name, sp in spread.items():
            t = rows[name]["theirs"]
            cells = []
            for c in keys:
                v, tv = sp[c], float(t[c])  # type: ignore[arg-type]
                inside = "in" if min(v) <= tv <= max(v) else "out"
                mark = _rel(float(np.median(v)), tv) if c != "bulge_median" else f"{np.median(v) / tv - 1:+.0%}"
                cells.append(f"{mark} [{min(v):.4g}, {max(v):.4g}] {inside}")
            for m in MODELS:
                a = ned.get((f"theirs-{name}", m))
                v = [ned[(f"ours-{name}-{k}", m)] for k in range(draws) if (f"ours-{name}-{k}", m) in ned]
                if a is None or not v:
                    cells.append("-")
                    continue
                med = float(np.median(v))
                ok = "✓" if abs(med - a) <= 0.05 else "✗"
                inside = "in" if min(v) <= a <= max(v) else "out"
                cells.append(f"{a:.3f} / {med:.3f} / {med - a:+.3f} {ok} [{min(v):.3f}, {max(v):.3f}] {inside}")
            out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def scales(rows: dict[str, dict[str, dict[str, object]]], docs: dict[str, Document], k: int) -> str:
    out = [f"Frame scale (frame px per page px): theirs from their pitch; ours over {k} layouts (no Blender)", "",
           "| document | theirs | ours min / median / max | theirs / our median - 1 |", "|---|---|---|---|"]
    for name in rows:
        theirs = float(rows[name]["theirs"]["pitch_px"]) / LINE_HEIGHT  # type: ignore[arg-type]
        s = layout_scales(docs[name], range(k))
        out.append(f"| {name} | {theirs:.3f} | {min(s):.3f} / {np.median(s):.3f} / {max(s):.3f} | "
                   f"{theirs / np.median(s) - 1:+.1%} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, required=True, help="their my_dataset/ (*.md)")
    ap.add_argument("--composites", type=Path, required=True, help="their data_8/ (*.jpg)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--work", type=Path, default=ROOT / "results" / "bench" / "paper_fidelity")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "paper_fidelity.md")
    ap.add_argument("--no-ned", action="store_true", help="skip the reference models")
    ap.add_argument("--layouts", type=int, default=0, help="the frame's scale over this many layouts")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    names = sorted(p.stem for p in args.dataset.glob("*.md") if (args.composites / f"{p.stem}.jpg").is_file())
    if not names:
        raise SystemExit(f"no document of {args.dataset} has a composite in {args.composites}")
    docs = {n: Document(doc_id=n, domain="news_en", text=(args.dataset / f"{n}.md").read_text(encoding="utf-8"))
            for n in names}
    rows: dict[str, dict[str, dict[str, object]]] = {}
    spread: dict[str, dict[str, list[float]]] = {}
    theirs_images: dict[str, Path] = {}
    mine: dict[str, list[Path]] = {}
    for name in names:
        theirs = args.composites / f"{name}.jpg"
        rows[name] = {"theirs": looks(theirs)}
        spread[name] = {c: [] for c in (*GEOMETRY, "xheight_pitch", "bulge_median")}
        mine[name] = []
        for seed in args.seeds:
            path, cpu = ours(docs[name], seed, args.work)
            m = looks(path)
            mine[name].append(path)
            if seed == args.seeds[0]:
                rows[name]["ours"], theirs_images[name] = m, theirs
            for c in spread[name]:
                spread[name][c].append(float(m[c]))  # type: ignore[arg-type]
            print(f"{name} seed {seed}: " + (f"built in {cpu:.1f} s CPU; " if cpu else "") + json.dumps(m), flush=True)
        print(f"{name} theirs: {json.dumps(rows[name]['theirs'])}", flush=True)
    ned = {} if args.no_ned else raw_ned(args.work, theirs_images, mine, docs)
    text = tables(rows, spread, ned)
    if args.layouts:
        text += "\n\n" + scales(rows, docs, args.layouts)
    took = (f"{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU in this process "
            "(the pipeline's jobs run in their own)")
    print(text)
    print(took)
    args.out.write_text(
        "# Paper fidelity (`python bench/paper_fidelity.py`)\n\n"
        f"Documents: {', '.join(names)}; N = {N}; ours at seed(s) {' '.join(map(str, args.seeds))}. "
        f"Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {took}.\n\n{text}\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
