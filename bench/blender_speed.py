"""Blender scrap synthesis: seconds per 512² piece for each preset, the wall time of one N = 16
sample, and the OCR baseline's NED on flat vs blender samples of the same documents.

    python bench/blender_speed.py                    # everything (~10 min on 2 vCPUs)
    python bench/blender_speed.py --skip-ocr         # timings only
    python bench/blender_speed.py --ocr-only         # the OCR comparison only
    SHREDFOLD_BLENDER_THREADS=1 python bench/blender_speed.py --presets default

Pieces: a page of the built-in corpus cut into as many pieces as make ~512² each (upright,
so the numbers do not depend on the random angles). Each preset renders them ``--repeats``
times after one warm-up piece (the first render in a process loads Cycles' kernels); we
print CPU seconds (``time.process_time``: all threads of this process, the figure for
"one core" when Blender runs with one thread) and wall seconds, the minimum and the median
over repeats. On a shared machine wall time is inflated by other processes; CPU time much
less so. The load average is printed next to every figure.

OCR: each document becomes a sample in flat and in blender mode (same render settings,
seed, N, max_rotation): N = 1 upright (readability alone) and N = 8 at the default
rotation (the benchmark's setting); the OCR baseline (``ocr-islands``: turn each scrap
upright, read it with :func:`shredfold.shred.ocr.reader.read_text`, concatenate in
presented order) is scored with
:func:`shredfold.metrics.text.ned` against the truth.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from shredfold.corpus.loaders import load_builtin
from shredfold.shred.pieces import cut_pieces
from shredfold.shred.render import render_page
from shredfold.shred.synth import get_synthesizer
from shredfold.shred.voronoi import cut
from shredfold.spec import BLENDER_PRESETS, BlenderSettings, RenderSettings, SynthesisSettings


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def pieces_512(count: int) -> list:
    doc = load_builtin("news_en")[0]
    page = np.asarray(render_page(doc, RenderSettings(), np.random.default_rng(0)).image)
    h, w = page.shape[:2]
    n = max(2, round(w * h / 512**2))
    polys = cut(w, h, n, np.random.default_rng(1), 3.0)
    pieces = cut_pieces(page, polys, np.random.default_rng(2), 0.0)
    return pieces[:count]


def time_presets(presets: list[str], count: int, repeats: int) -> None:
    pieces = pieces_512(count)
    area = statistics.mean(p.image.shape[0] * p.image.shape[1] for p in pieces)
    print(f"{len(pieces)} pieces, mean image {math.sqrt(area):.0f}² px "
          f"(threads={os.environ.get('SHREDFOLD_BLENDER_THREADS', '1')})")
    for preset in presets:
        synth = get_synthesizer(
            SynthesisSettings(mode="blender", blender=BlenderSettings(preset=preset))
        )
        t0, c0 = time.perf_counter(), time.process_time()
        synth.scraps(pieces[:1], np.random.default_rng(99))
        warm = (time.perf_counter() - t0, time.process_time() - c0)
        cpu, wall = [], []
        for r in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            synth.scraps(pieces, np.random.default_rng(r))
            wall.append((time.perf_counter() - t0) / len(pieces))
            cpu.append((time.process_time() - c0) / len(pieces))
        norm = 512**2 / area
        print(
            f"  {preset:8s} {BLENDER_PRESETS[preset]}\n"
            f"           s/piece cpu min {min(cpu):.2f} median {statistics.median(cpu):.2f}"
            f" (per 512²: {min(cpu) * norm:.2f}) | wall min {min(wall):.2f}"
            f" median {statistics.median(wall):.2f} | first piece incl. kernel load"
            f" {warm[1]:.2f} cpu {warm[0]:.2f} wall | {load()}"
        )


def time_sample(n: int, preset: str, repeats: int) -> None:
    from shredfold.shred.sample import make_sample

    doc = load_builtin("news_en")[0]
    synth = SynthesisSettings(mode="blender", blender=BlenderSettings(preset=preset))
    make_sample(doc, 1, RenderSettings(width=400), synth, 0, Path(tempfile.mkdtemp()))  # warm
    for mode_synth, label in ((synth, f"blender/{preset}"), (SynthesisSettings(), "flat")):
        cpu, wall = [], []
        for r in range(repeats):
            out = Path(tempfile.mkdtemp())
            t0, c0 = time.perf_counter(), time.process_time()
            make_sample(doc, n, RenderSettings(), mode_synth, r, out)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(
            f"  N={n} sample, {label:16s} wall min {min(wall):.1f} s median "
            f"{statistics.median(wall):.1f} s | cpu min {min(cpu):.1f} s | {load()}"
        )


def ocr_ned(docs: list[tuple[str, int]], configs: list[tuple[int, float]], preset: str) -> None:
    """NED of the OCR baseline per document and (N, max_rotation), flat vs blender.

    The two modes' samples have different keys, hence different cuts and angles: at N = 1
    with no rotation they differ only in synthesis (a pure readability comparison); at
    N > 1 the baseline's NED is dominated by the order it concatenates pieces in.
    """
    import io

    from PIL import Image

    from shredfold.corpus.document import domain_kind
    from shredfold.metrics.text import ned
    from shredfold.shred.ocr import reader as ocr
    from shredfold.shred.ocr.orient import upright
    from shredfold.shred.sample import load_public, load_truth, make_sample

    rows: dict[tuple[int, float], dict[str, list[float]]] = {}
    print(f"  {'document':28s} {'N':>3s} {'rot':>4s} {'flat':>6s} {'blender':>8s}")
    for domain, i in docs:
        doc = load_builtin(domain)[i]
        kind = domain_kind(domain)
        for n, rot in configs:
            neds = {}
            for mode in ("flat", "blender"):
                synth = SynthesisSettings(
                    mode=mode, max_rotation=rot, blender=BlenderSettings(preset=preset)
                )
                out = Path(tempfile.mkdtemp())
                make_sample(doc, n, RenderSettings(), synth, 0, out)
                sample, truth = load_public(out), load_truth(out)
                parts = []
                for png in sample.pieces:
                    text = ocr.read_text(
                        upright(Image.open(io.BytesIO(png))),
                        kind="code" if kind == "code" else "prose",
                    )
                    if text.strip():
                        parts.append(text)
                neds[mode] = ned("\n".join(parts), truth.text, kind)
                rows.setdefault((n, rot), {"flat": [], "blender": []})[mode].append(neds[mode])
            print(f"  {doc.doc_id:28s} {n:3d} {rot:4.0f} {neds['flat']:6.3f} {neds['blender']:8.3f}",
                  flush=True)
    for (n, rot), r in rows.items():
        print(f"  {'mean':28s} {n:3d} {rot:4.0f} {statistics.mean(r['flat']):6.3f} "
              f"{statistics.mean(r['blender']):8.3f}   ({load()})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # The paper preset renders one frame of all pieces, not a scrap per piece:
    # bench/paper_scene_noise.py times it.
    ap.add_argument("--presets", default=",".join(p for p in BLENDER_PRESETS if p != "paper"))
    ap.add_argument("--pieces", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sample-repeats", type=int, default=2)
    ap.add_argument("--skip-ocr", action="store_true")
    ap.add_argument("--ocr-only", action="store_true")
    args = ap.parse_args()

    if not args.ocr_only:
        print("seconds per piece, by preset:", flush=True)
        time_presets(args.presets.split(","), args.pieces, args.repeats)
        print("one sample:")
        time_sample(16, "default", args.sample_repeats)
    if not args.skip_ocr:
        print("OCR baseline NED (lower is better), flat vs blender/default:", flush=True)
        docs = [("news_en", 0), ("news_en", 1), ("news_en", 2), ("code_python", 0), ("news_zh", 0)]
        ocr_ned(docs, [(1, 0.0), (8, 180.0)], "default")


if __name__ == "__main__":
    main()
