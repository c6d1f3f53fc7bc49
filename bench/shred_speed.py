"""ShredBench sample synthesis speed: samples per second at N = 12, flat mode.

Uses the longest built-in English news article (a ~1600 x 2000 px page), makes a few
samples with different seeds and prints samples/s and where the time goes.

    python bench/shred_speed.py [--samples 5] [--n 12] [--domain news_en]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from shredfold.corpus.document import Document
from shredfold.shred.formats import ENCODING
from shredfold.shred.sample import build_sample, write_sample
from shredfold.spec import RenderSettings, SynthesisSettings

STAGES = ("key", "render", "cut", "pieces", "scraps", "composite", "encode", "write")

_FALLBACK = "# A long inline article\n\n" + "\n\n".join(
    f"Paragraph {i}: the council met again on Tuesday to discuss the budget for the coming "
    "year, the state of the roads, the new library and the plans for the riverside park, "
    "which residents have asked about at every public meeting since the spring."
    for i in range(14)
)


def longest_document(domain: str) -> Document:
    try:
        from shredfold.corpus.loaders import load_builtin

        docs = load_builtin(domain)
    except (ImportError, ValueError):
        docs = []
    if not docs:
        return Document(doc_id="inline", domain="news_en", text=_FALLBACK)
    return max(docs, key=lambda d: len(d.text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--domain", default="news_en")
    args = ap.parse_args()

    doc = longest_document(args.domain)
    render, synth = RenderSettings(), SynthesisSettings()
    with tempfile.TemporaryDirectory() as tmp:
        build_sample(doc, args.n, render, synth, seed=-1)  # warm fonts, imports, caches
        totals: dict[str, list[float]] = {s: [] for s in STAGES}
        cpus: dict[str, list[float]] = {s: [] for s in STAGES}
        walls = []
        sizes = []
        for seed in range(args.samples):
            timings: dict[str, float] = {}
            out = Path(tmp) / str(seed)
            t0 = time.perf_counter()
            built = build_sample(doc, args.n, render, synth, seed, timings)
            write_sample(built, out, timings)
            walls.append(time.perf_counter() - t0)
            for s in STAGES:
                totals[s].append(timings.get(s, 0.0))
                cpus[s].append(timings.get(f"{s}.cpu", 0.0))
            sizes.append(sum(p.stat().st_size for p in out.rglob("*") if p.is_file()))
        page_w, page_h = built.page.image.size
        comp_h, comp_w = built.table.image.shape[:2]

    mean = statistics.fmean(walls)
    print(f"document: {doc.doc_id} ({doc.domain}), page {page_w}x{page_h} px, N = {args.n}")
    print(f"composite {comp_w}x{comp_h} px; encoders {ENCODING}")
    print(f"samples/s: {1 / mean:.2f}  ({mean * 1000:.0f} ms per sample, {args.samples} samples)")
    print(f"bytes per sample: {statistics.fmean(sizes) / 1e6:.1f} MB")
    cpu_total = sum(statistics.fmean(cpus[s]) for s in STAGES)
    print(f"CPU time per sample: {cpu_total * 1000:.0f} ms (OpenCV may use 2 threads)")
    print(f"  {'stage':<10} {'wall ms':>8} {'share':>6} {'cpu ms':>8}")
    for s in STAGES:
        ms = statistics.fmean(totals[s]) * 1000
        cpu = statistics.fmean(cpus[s]) * 1000
        print(f"  {s:<10} {ms:8.0f} {ms / (mean * 1000):6.1%} {cpu:8.0f}")


if __name__ == "__main__":
    main()
