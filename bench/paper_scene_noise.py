"""The paper scene (``synthesis.blender.preset: paper``): samples vs time vs difference to a
high-sample reference, and the CPU time of a whole N = 16 sample. Notes: paper_scene_notes.md.

    python bench/paper_scene_noise.py                       # the notes' run (~1 h on 2 busy vCPUs)
    python bench/paper_scene_noise.py --reference 32 --window 256 --settings 0.125:4,0.125:16

One real sample's pieces (the paper spec's settings: news_en, N = 16, seed 0, jagged 0) are
built into the authors' scene once. Then, on a ``--window``² px window of the 4096² frame
(the one crossed by the most outlines: paper, cut edges, curled rims, text and backdrop):

* *reference*: Cycles shades the page texture itself (their material, their
  Blackman-Harris 1.5 px pixel filter, AgX), ``--reference`` samples per pixel;
* *theirs at few samples*: the same render at ``--theirs`` samples (their script's cheap
  setting), with its CPU time extrapolated to the whole frame (time beyond the scene's
  sync, per pixel, x 4096², plus the sync);
* *ours*: the preset's pipeline (exact visibility and texture, Cycles lighting at a fraction
  of the size) at each ``scale:samples`` of ``--settings``.

Each is compared with the reference in 8-bit grey (Rec. 601 luma): mean |difference| over the
window, over paper and over the backdrop (by the frame's footprint), the RMS, the mean
signed difference (bias) on paper, on the backdrop and on the shadow at the paper's feet
(backdrop pixels 2-24 px from paper), and the backdrop's noise (standard
deviation of the difference over backdrop pixels at least 16 px from paper). The reference
has noise of its own: a second reference with another seed, compared with the first, shows
that floor (its differences are about sqrt(2) x the reference's noise). CPU seconds are ``time.process_time`` (all threads; Blender runs
with one), pinned to one core with ``--core``.

The whole-sample timing builds and writes the same sample through :func:`build_sample`
(page, cut, pieces, scene, composite, encoders) at the preset's default and prints each
stage's CPU seconds: the speed target is <= 60 s for N = 16.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from shredfold.corpus.loaders import load_builtin
from shredfold.shred.blender_paper import finish, prepare
from shredfold.shred.glyphs import page_glyphs
from shredfold.shred.modes import PAPER_SCENE
from shredfold.shred.pieces import cut_pieces
from shredfold.shred.raster import Sheets, visible
from shredfold.shred.render import render_page
from shredfold.shred.sample import build_sample, streams, write_sample
from shredfold.shred.sample_key import draw_key, sample_key
from shredfold.shred.text_cut import cut_holding_text
from shredfold.spec import BlenderSettings, RenderSettings, SynthesisSettings

SIZE = 4096


def busiest_window(sheets: Sheets, side: int) -> tuple[int, int]:
    """Top-left of the ``side``² window (on a 16 px grid) crossed by the most outlines."""
    cell = 16
    labels = visible(sheets, SIZE // cell, float(PAPER_SCENE["mask_threshold"]))
    edge = np.zeros(labels.shape, dtype=np.int64)
    edge[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    edge[1:, :] |= labels[1:, :] != labels[:-1, :]
    k = side // cell
    sums = np.pad(edge.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    score = sums[k:, k:] - sums[:-k, k:] - sums[k:, :-k] + sums[:-k, :-k]
    iy, ix = np.unravel_index(int(np.argmax(score)), score.shape)
    return int(ix) * cell, int(iy) * cell


def luma(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])


def compare(img: np.ndarray, ref: np.ndarray, paper: np.ndarray, far: np.ndarray, feet: np.ndarray) -> dict[str, float]:
    d = luma(img) - luma(ref)
    ground = ~paper
    return {
        "bias_shadow": float(d[feet].mean()),
        "mae": float(np.abs(d).mean()),
        "mae_paper": float(np.abs(d[paper]).mean()),
        "mae_backdrop": float(np.abs(d[ground]).mean()),
        "rms": float(np.sqrt((d**2).mean())),
        "bias_paper": float(d[paper].mean()),
        "bias_backdrop": float(d[ground].mean()),
        "noise_backdrop": float(d[far].std()),
    }


def row(name: str, cpu: float, m: dict[str, float]) -> str:
    return (f"{name:28s} {cpu:8.1f} {m['mae']:6.2f} {m['mae_paper']:6.2f} {m['mae_backdrop']:6.2f} "
            f"{m['rms']:6.2f} {m['bias_paper']:+6.2f} {m['bias_backdrop']:+6.2f} {m['bias_shadow']:+6.2f} "
            f"{m['noise_backdrop']:6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", default="news_en")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--reference", type=int, default=256)
    ap.add_argument("--theirs", type=int, default=4)
    ap.add_argument("--settings", default="0.125:4,0.125:8,0.125:16,0.125:32,0.125:64,0.25:4,0.25:16,0.0625:16")
    ap.add_argument("--core", type=int, default=0, help="pin to this CPU (-1: do not pin)")
    ap.add_argument("--skip-sample", action="store_true", help="skip the whole-sample timing")
    ap.add_argument("--cache", type=Path, default=Path("results/bench/paper_scene_noise"),
                    help="where the reference renders are kept between runs")
    args = ap.parse_args()
    if args.core >= 0:
        os.sched_setaffinity(0, {args.core})
    os.environ.setdefault("SHREDFOLD_BLENDER_THREADS", "1")
    threads = int(os.environ["SHREDFOLD_BLENDER_THREADS"])
    doc = load_builtin(args.domain)[0]
    render = RenderSettings()
    synth = SynthesisSettings(mode="blender", jagged=0.0, blender=BlenderSettings(preset="paper"))
    print(f"{args.domain} N={args.n}, threads {threads}, load {os.getloadavg()[0]:.1f}")

    if not args.skip_sample:
        timings: dict[str, float] = {}
        t = time.perf_counter()
        built = build_sample(doc, args.n, render, synth, 0, timings=timings)
        with tempfile.TemporaryDirectory() as tmp:
            write_sample(built, Path(tmp) / "s", timings=timings)
        cpu = {k[:-4]: v for k, v in timings.items() if k.endswith(".cpu")}
        print(f"whole sample (default {synth.blender.quality()}): CPU {sum(cpu.values()):.1f} s, "
              f"wall {time.perf_counter() - t:.1f} s, load {os.getloadavg()[0]:.1f}")
        print("  " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))

    prep_key = sample_key(doc, args.n, render, synth, 0)[:16]
    rng = streams(draw_key(doc, args.n, render, synth, 0))
    page = render_page(doc, render, rng["render"])
    pixels = np.asarray(page.image)
    h, w = pixels.shape[:2]
    polygons = cut_holding_text(w, h, args.n, rng["cut"], synth.jagged, page_glyphs(doc, render).boxes)
    pieces = cut_pieces(pixels, polygons, rng["pose"], synth.max_rotation)
    t = time.process_time()
    prep = prepare(pieces, rng["scraps"])
    scene_cpu = time.process_time() - t
    x0, y0 = busiest_window(prep.sheets, args.window)
    window = (x0, y0, args.window, args.window)
    inside = (slice(y0, y0 + args.window), slice(x0, x0 + args.window))
    print(f"window: x {x0}, y {y0}, {args.window}² px")
    textures = [c.rgb for c in prep.parts]
    sc = prep.scene

    def textured(samples: int, seed: int) -> np.ndarray:
        """A textured render of the window, kept in --cache (the references cost minutes)."""
        import cv2

        path = args.cache / f"{prep_key}-{x0}-{y0}-{args.window}-{samples}-{seed}.png"
        if path.exists():
            return cv2.imread(str(path), cv2.IMREAD_COLOR)[..., ::-1].copy()
        img = sc.render_textured(textures, SIZE, samples, seed, threads, window)
        args.cache.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), img[..., ::-1])
        return img
    try:
        t = time.process_time()
        sc.render_textured(textures, 8, 1, 1, threads, (0, 0, 8, 8))
        sync = time.process_time() - t
        t = time.process_time()
        ref = textured(args.reference, 12345)
        ref_cpu = time.process_time() - t
        print(f"reference: {args.reference} samples, {args.window}² px, CPU {ref_cpu:.1f} s (sync {sync:.1f} s; "
              "~0 when read from --cache)")

        first = None
        lines = []
        for spec in args.settings.split(","):
            scale, samples = spec.split(":")
            q = {**synth.blender.quality(), "paper_scale": float(scale), "paper_samples": int(samples)}
            before = dict(prep.timings)
            frame = finish(prep, q, threads)
            cpu = sum(prep.timings[k] - before.get(k, 0.0) for k in prep.timings) + scene_cpu
            if first is None:
                from scipy import ndimage

                first = frame
                paper = frame.labels[inside] >= 0
                out = ndimage.distance_transform_edt(~paper)
                far, feet = out > 16, (out > 2) & (out <= 24)
            lines.append(row(f"ours 1/{round(1 / float(scale))} x {samples} spp", cpu,
                             compare(frame.image[inside], ref, paper, far, feet)))

        t = time.process_time()
        theirs = sc.render_textured(textures, SIZE, args.theirs, 777, threads, window)  # timed: no cache
        their_cpu = time.process_time() - t
        full = (their_cpu - sync) * SIZE**2 / args.window**2 + sync
        half = textured(args.reference, 999)
    finally:
        sc.clear()
    print(f"{'':28s} {'CPU s':>8s} {'MAE':>6s} {'paper':>6s} {'ground':>6s} {'RMS':>6s} "
          f"{'bias p':>6s} {'bias g':>6s} {'bias s':>6s} {'noise':>6s}")
    lines.append(row(f"theirs {args.theirs} spp (frame, est.)", full, compare(theirs, ref, paper, far, feet)))
    lines.append(row(f"theirs {args.reference} spp, other seed", float("nan"), compare(half, ref, paper, far, feet)))
    print("\n".join(lines))
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
