"""Throughput of the OpenAI-compatible adapter on loopback, and the cost of a cache lookup.

Starts ``shredfold serve --model echo`` in its own process (so server and client do not share
a GIL) and sends requests through :class:`OpenAICompatible` from a thread pool, as the query
stage does, at each concurrency. Then times what a cached item costs the query stage: the
response key (hashing every image), the store lookup, and reading the stored answer.

    python bench/adapter_speed.py                       # small requests: adapter overhead
    python bench/adapter_speed.py --image-kb 400 --images 8   # ShredBench-sized bodies
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from shredfold.calls import Response, response_key
from shredfold.models.envelope import cached_response, store_response
from shredfold.models.openai_compat import OpenAICompatible
from shredfold.shred.prompts import build_request
from shredfold.spec import ModelConfig
from shredfold.store import Store


def noise_png(kb: int, seed: int) -> bytes:
    """A PNG of roughly ``kb`` kilobytes (noise does not compress)."""
    side = max(8, int((kb * 1024 / 3) ** 0.5))
    pixels = np.random.default_rng(seed).integers(0, 256, (side, side, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def requests(count: int, images: int, kb: int) -> list:
    pool = [noise_png(kb, s) for s in range(images + 3)]
    return [
        build_request(
            kind="prose", lang="en", n=images, composite=False, item=None,
            images=[pool[(i + k) % len(pool)] for k in range(images)],
        )
        for i in range(count)
    ]


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shredfold", "serve", "--model", "echo", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if " at http://" not in line:  # it could not start (its reason is on stderr)
        proc.kill()
        proc.wait()
        raise SystemExit(f"shredfold serve did not start (said {line!r})")
    return proc, line.split(" at ")[1].strip()


def throughput(url: str, concurrency: int, reqs: list, max_side: int) -> float:
    cfg = ModelConfig(
        id="echo", base_url=url, model="echo", max_concurrency=concurrency,
        images={"max_side": max_side}, timeout_s=60,
    )
    adapter = OpenAICompatible(cfg)
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(adapter.complete, reqs[: concurrency * 2]))  # warm the connections
        t0 = time.perf_counter()
        list(pool.map(adapter.complete, reqs))
        elapsed = time.perf_counter() - t0
    adapter.close()
    return len(reqs) / elapsed


def cache_lookup(reqs: list, identity: dict) -> tuple[float, float]:
    """Seconds per call: (hit: key + has + read, miss: key + has)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp))
        for r in reqs:
            store_response(store, response_key(identity, r), identity, r, Response(text="x" * 2000))
        t0 = time.perf_counter()
        for r in reqs:
            assert cached_response(store, response_key(identity, r)) is not None
        hit = (time.perf_counter() - t0) / len(reqs)
        other = {**identity, "decoding": {"temperature": 0.5}}
        t0 = time.perf_counter()
        for r in reqs:
            assert cached_response(store, response_key(other, r)) is None
        miss = (time.perf_counter() - t0) / len(reqs)
    return hit, miss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--images", type=int, default=2, help="images per request")
    ap.add_argument("--image-kb", type=int, default=4, help="size of each image")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    reqs = requests(args.requests, args.images, args.image_kb)
    body_kb = sum(len(i) for i in reqs[0].images) * 4 / 3 / 1024
    print(f"{os.cpu_count()} CPUs; {args.requests} requests of {args.images} image(s), "
          f"~{body_kb:.0f} KB base64 per body; median of {args.repeats}")  # fmt: skip
    proc, url = start_server()
    try:
        for c in args.concurrency:
            rates = [throughput(url, c, reqs, max_side=8192) for _ in range(args.repeats)]
            print(f"  concurrency {c:3d}: {statistics.median(rates):8.1f} requests/s")
    finally:
        proc.terminate()
        proc.wait()
    identity = OpenAICompatible(ModelConfig(id="m", base_url=url, model="m")).identity()
    hit, miss = cache_lookup(reqs[:200], identity)
    print(f"  cache lookup per call: hit {hit * 1e3:.3f} ms (key + exists + read), "
          f"miss {miss * 1e3:.3f} ms (key + exists)")  # fmt: skip


if __name__ == "__main__":
    main()
