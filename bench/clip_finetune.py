"""Time of `shredfold clip finetune` per step, on CPU with one thread (as it trains), for a
full-size open_clip architecture randomly initialised (no download: the time of a step does
not depend on the weights' values), on a spec's designs drawn by the benchmark.

Run: python bench/clip_finetune.py [--spec specs/default.yaml] [--model ViT-B-32] [--steps 3] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from shredfold.metrics.clip import Clip
from shredfold.metrics.clip_finetune import Hyper, finetune
from shredfold.origami_bench.clip_images import design_pictures
from shredfold.spec import ClipSettings, read_spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=Path("specs/default.yaml"))
    ap.add_argument("--model", default="ViT-B-32")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    import open_clip
    import torch

    spec, _ = read_spec(args.spec)
    assert spec.origami is not None, f"{args.spec} has no origami section"
    t0 = time.perf_counter()
    pictures = design_pictures(spec.origami, spec.seed)
    t1 = time.perf_counter()
    print(f"{len(pictures)} pictures drawn in {t1 - t0:.1f} s")
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms(args.model, pretrained=None)
    clip = Clip(model, preprocess, f"{args.model}/random 000000000000", open_clip.get_model_config(args.model), args.model)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="clip-bench-") as tmp:
        t2, c2 = time.perf_counter(), time.process_time()
        recipe = finetune(
            ClipSettings(model=args.model), pictures, Hyper(steps=args.steps, batch_size=args.batch_size),
            Path(tmp) / "out", progress=lines.append, loaded=clip,
        )  # fmt: skip
        t3, c3 = time.perf_counter(), time.process_time()
    evals = 2 * len(pictures)  # the loss over the pictures, before and after
    print(f"{args.model}: {args.steps} steps of {recipe['hyper']['batch_size_used']} pictures and 2 passes over "
          f"{len(pictures)} pictures in {t3 - t2:.1f} s wall, {c3 - c2:.1f} s CPU (one thread; "
          f"{evals} picture forwards besides the steps)")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
