"""Where the default spec's time goes: CPU per built-in OCR model and item, and inside them.

Runs the shred cells of the given models (default: ``ocr-islands`` and ``jigsaw-ocr``) of a
spec (default: ``specs/default.yaml``) straight through the models, bypassing the response
cache, on samples from a store (built there first when missing). For each item it prints
CPU seconds (``time.process_time``: the bench is meant to run on a busy machine, where wall
time says little) and the NED of the answer; then per model p50/total CPU, and how that
CPU splits between the OCR engine's detector, its recogniser and the rest. ``--profile``
adds a cProfile of one N=16 item per model (top functions by own time). ``--json`` writes
the per-item numbers (to compare two versions of the code row by row).

    python bench/default_profile.py [--store results/store] [--spec specs/default.yaml]
        [--models ocr-islands jigsaw-ocr] [--n 16] [--domain code_java] [--profile]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shredfold.models import registry
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.shred.sample_folder import SAMPLE_STAGE, load_truth
from shredfold.store import Store
from shredfold.tasks.base import JobContext
from shredfold.tasks.registry import get as get_task
from shredfold.tasks.shredbench.task import score_text, shred_request


class _Meter:
    """CPU seconds and calls spent in the OCR engine's detector and recogniser."""

    def __init__(self) -> None:
        self.cpu = {"detect": 0.0, "recognise": 0.0}
        self.calls = {"detect": 0, "recognise": 0}
        self.crops = 0

    def wrap(self, name: str, fn: Callable[..., Any], count: Callable[..., int] | None = None) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[name] += time.process_time() - t0
                self.calls[name] += 1
                if count is not None:
                    self.crops += count(*args, **kwargs)

        return timed

    def reset(self) -> None:
        self.cpu = dict.fromkeys(self.cpu, 0.0)
        self.calls = dict.fromkeys(self.calls, 0)
        self.crops = 0


# Phases of the two models, timed where they are looked up at call time (module globals).
PHASES = (
    ("shredfold.shred.solvers.jigsaw.solve", "solve"),
    ("shredfold.shred.solvers.jigsaw.read", "read_words"),
    ("shredfold.shred.ocr.orient", "quarter_turn"),
    ("shredfold.shred.ocr.orient", "text_angle"),
    ("shredfold.shred.ocr.reader", "read_text"),
)


def _instrument(meter: _Meter) -> None:
    import importlib

    from shredfold.shred.ocr import reader

    for module_name, name in PHASES:
        module = importlib.import_module(module_name)
        label = f"{module_name.rsplit('.', 1)[-1]}.{name}"
        meter.cpu[label], meter.calls[label] = 0.0, 0
        setattr(module, name, meter.wrap(label, getattr(module, name)))
    engine = reader.engine()
    # The detector: RapidOCR's text_det (called by engine(...) with use_rec=False); the
    # recogniser: text_rec on a list of crops.
    engine.text_det = meter.wrap("detect", engine.text_det)
    engine.text_rec = meter.wrap("recognise", engine.text_rec, lambda crops, *a, **k: len(crops))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default="results/store")
    ap.add_argument("--spec", default="specs/default.yaml")
    ap.add_argument("--models", nargs="+", default=["ocr-islands", "jigsaw-ocr"])
    ap.add_argument("--n", type=int, nargs="*", help="only these granularities")
    ap.add_argument("--domain", nargs="*", help="only these domains")
    ap.add_argument("--profile", action="store_true", help="cProfile one N=16 item per model")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", help="write the per-item numbers here")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    spec = load_spec(args.spec)
    store = Store(args.store)
    plan = make_plan(spec, store)
    job = JobContext(spec, store)
    task = get_task("shred")
    meter = _Meter()
    rows: list[dict[str, Any]] = []
    models: dict[str, Any] = {}
    for cell in plan.cells:
        if cell.task != "shred" or cell.model.id not in args.models:
            continue
        domain, n = str(cell.labels["domain"]), int(cell.labels["n"])
        if (args.n and n not in args.n) or (args.domain and domain not in args.domain):
            continue
        t0 = time.process_time()
        task.build(cell.item_set, job)
        build_cpu = time.process_time() - t0
        if cell.model.id not in models:
            models[cell.model.id] = registry.build_model(cell.model, store)
            if len(models) == 1:
                _instrument(meter)
        model = models[cell.model.id]
        for item in cell.item_set.items:
            request = shred_request(cell, item, job)
            meter.reset()
            # CPU time, not wall: on a busy machine wall time mostly measures the neighbours.
            profiler = cProfile.Profile(time.process_time) if args.profile and n == 16 else None
            c0, w0 = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            text = model.complete(request).text
            if profiler:
                profiler.disable()
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            truth = load_truth(store.object(SAMPLE_STAGE, item.key))
            ned = score_text(text, truth.text, truth.html, item.kind, item.lang, False)["ned"]
            row = {
                "model": cell.model.id, "domain": domain, "n": n, "item": item.key[:12],
                "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "build_cpu_s": round(build_cpu, 2),
                "detect_cpu_s": round(meter.cpu["detect"], 2), "detect_calls": meter.calls["detect"],
                "rec_cpu_s": round(meter.cpu["recognise"], 2), "rec_calls": meter.calls["recognise"],
                "rec_crops": meter.crops, "ned": round(float(ned), 4),
                "phases_cpu_s": {k: round(v, 2) for k, v in meter.cpu.items() if "." in k and meter.calls[k]},
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            if profiler:
                out = io.StringIO()
                stats = pstats.Stats(profiler, stream=out)
                stats.sort_stats("tottime").print_stats(args.top)
                stats.sort_stats("cumulative").print_stats("shredfold", args.top)
                print(f"--- cProfile {cell.model.id} {domain} N={n} (CPU s; by own, cumulative time)")
                print(out.getvalue())
    print()
    print(f"{'model':<14}{'items':>6}{'p50 CPU s':>11}{'total CPU s':>13}{'detect':>9}{'recog':>9}{'other':>9}")
    for mid in args.models:
        mine = [r for r in rows if r["model"] == mid]
        if not mine:
            continue
        total = sum(r["cpu_s"] for r in mine)
        det = sum(r["detect_cpu_s"] for r in mine)
        rec = sum(r["rec_cpu_s"] for r in mine)
        print(
            f"{mid:<14}{len(mine):>6}{statistics.median(r['cpu_s'] for r in mine):>11.2f}"
            f"{total:>13.1f}{det:>9.1f}{rec:>9.1f}{total - det - rec:>9.1f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
