"""Simple-fold sequences for Flat-Folder's designs: find them (writing the shipped data
file), and count the one-step items they give.

1. ``find`` runs :func:`~shredfold.origami_bench.simple_folds.find_simple_folds` on every
   design of a fetched folder (``shredfold designs fetch``) in ``--workers`` processes and
   writes ``src/shredfold/origami_bench/data/flat_folder/simple_folds.json``: by the FOLD
   file's SHA-256, the design id and key and what was found (the file holds no timings, so
   a second run on any machine writes the same bytes).
2. ``items`` counts the designs that give one-step items: for each design and variant, its
   steps (shipped simple folds, else a crease order) are tried in a seeded order until an
   item built as the origami_mcq task builds it passes the gates. (The picker's accuracy on
   such items: ``bench/mcq_picker.py --flat-folder``.)

    nice -n 10 python bench/simple_folds.py find [--workers 2]
    python bench/simple_folds.py find --journal-only   # the file from the designs searched so far
    nice -n 10 python bench/simple_folds.py items [--out-items coverage.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from shredfold.origami_bench.design import TIERS, Design

DATA = Path(__file__).parents[1] / "src/shredfold/origami_bench/data/flat_folder/simple_folds.json"


def read_designs(folder: Path) -> list[tuple[str, Design]]:
    """(SHA-256 of the file, design) for every Flat-Folder design in the folder."""
    from shredfold.origami_bench.designs import folder_designs

    found, errors = folder_designs(folder, None, flat_folder_only=True)
    for e in errors:
        print(f"not read: {e}")
    return [(d.origin.sha256, d) for d in found if d.origin is not None]


def _find(args: tuple[str, Design]) -> tuple[str, Design, dict[str, Any], float]:
    from shredfold.origami_bench.simple_folds import find_simple_folds

    sha, design = args
    t0 = time.process_time()
    try:
        found = find_simple_folds(design).model_dump(mode="json")
    except Exception as exc:  # noqa: BLE001 - one design's crash must not lose the others'
        found = {"error": f"{type(exc).__name__}: {exc}"}
    return sha, design, found, time.process_time() - t0


def find(args: argparse.Namespace) -> None:
    from shredfold.origami_bench.flat_folder import manifest
    from shredfold.origami_bench.simple_folds import finder_params

    designs = read_designs(args.folder)
    if args.limit:
        designs = designs[: args.limit]
    # each design's result is appended to a journal as it comes, so a stopped run resumes
    journal = args.journal
    journal.parent.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    cpu: dict[str, float] = {}
    if journal.is_file():
        for line in journal.read_text().splitlines():
            row = json.loads(line)
            if row["params"] == finder_params() and "error" not in row["found"]:
                rows[row["sha256"]] = {k: row[k] for k in ("design", "tier", "category", "found")}
                cpu[row["sha256"]] = row["cpu_s"]
        print(f"resumed {len(rows)} designs from {journal}")
    # The data file is the record a journal leaves once it is deleted: designs it already
    # holds under the same finder are not searched again (the finder is a pure function of
    # the design), so a run on another machine only adds the rest.
    if args.out.is_file():
        shipped = json.loads(args.out.read_text())
        if shipped.get("params") == finder_params():
            kept = {k: v for k, v in shipped["designs"].items() if k not in rows}
            rows.update(kept)
            print(f"kept {len(kept)} designs from {args.out} (same finder parameters)")
    todo = [] if args.journal_only else [(sha, d) for sha, d in designs if sha not in rows]
    errors = 0
    t0 = time.monotonic()
    with mp.get_context("spawn").Pool(args.workers) as pool, journal.open("a") as log:
        for sha, d, found, secs in pool.imap(_find, todo):
            row = {"design": d.id, "tier": d.tier, "category": d.category, "found": found}
            if "error" in found:
                errors += 1
                print(f"{d.id} {d.tier}: ERROR {found['error']}", flush=True)
            else:
                rows[sha] = row
                cpu[sha] = secs
                what = f"{len(found['sequence'])} folds, {found['score']:.3f}" if found["sequence"] else found["reason"]
                print(f"{d.id} {d.tier}: {what} ({secs:.1f} s)", flush=True)
            log.write(json.dumps({"sha256": sha, "params": finder_params(), "cpu_s": round(secs, 2), **row}) + "\n")
            log.flush()
    times = list(cpu.values()) or [0.0]
    print(f"{len(todo)} designs found in {time.monotonic() - t0:.0f} s; CPU per design (all {len(times)}) "
          f"p50 {np.median(times):.1f} s, max {max(times):.1f} s, total {sum(times) / 60:.0f} min")  # fmt: skip
    summarise(rows)
    if errors:
        raise SystemExit(f"{errors} designs crashed the finder (see above); {args.out} not written")
    data = {
        "about": "Simple-fold sequences of Flat-Folder's designs for one-step items "
        "(shredfold.origami_bench.simple_folds; written by bench/simple_folds.py find)",
        "upstream_commit": manifest().commit,
        "params": finder_params(),
        # the pinned designs not searched yet (a run stopped early, --journal-only) give no
        # simple folds; a resumed run fills them in
        "searched": len(rows),
        "pinned": len(manifest().entries),
        "designs": {k: rows[k] for k in sorted(rows)},
    }
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")


def summarise(rows: dict[str, dict[str, Any]]) -> None:
    by_tier: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    scores = defaultdict(list)
    for r in rows.values():
        f = r["found"]
        by_tier[r["tier"]]["found" if f["sequence"] else "none"] += 1
        if f["sequence"]:
            scores[r["tier"]].append(f["score"])
        else:
            reasons[f["reason"].split(" (")[0].split(":")[0]] += 1
    for t in TIERS:
        s = scores[t]
        print(f"  {t}: {by_tier[t]['found']} with a sequence, {by_tier[t]['none']} without; "
              f"score mean {np.mean(s) if s else float('nan'):.3f}")  # fmt: skip
    print(f"  reasons: {dict(reasons)}")


def items(args: argparse.Namespace) -> None:
    """Which designs give one-step items: for each design and variant, its steps are tried
    in a seeded order until an item passes the gates (built as the task builds it)."""
    from shredfold.origami_bench.crease_order import OrderBook
    from shredfold.origami_bench.items import MCQ_STAGE, MCQ_VERSION, McqSpec
    from shredfold.origami_bench.mcq import McqDropped, StateCache, build_mcq, rng_for, step_count
    from shredfold.origami_bench.simple_folds import shipped, with_simple_folds
    from shredfold.store import content_key

    read = read_designs(args.folder)
    # designs the shipped data has not searched yet give no items here (their crease order
    # would be searched: minutes for the large ones); counted as such
    designs = [with_simple_folds(d) for sha, d in read if sha in shipped()]
    print(f"{len(read)} designs read, {len(designs)} searched by the shipped data")
    orders = OrderBook()
    cache = StateCache(orders)
    variants = ("mcq_assoc", "mcq_causal")
    rows: dict[str, dict[str, Any]] = {}
    t0 = time.monotonic()
    for d in designs[args.start :]:
        n = step_count(d, orders)
        row: dict[str, Any] = {"tier": d.tier, "category": d.category, "steps": n,
                               "from": "none" if not n else "simple folds" if d.sequence else "crease order"}  # fmt: skip
        for variant in variants:
            key = content_key(MCQ_STAGE, MCQ_VERSION, {"bench": "simple_folds", "variant": variant}, [d.key])
            row[variant] = None
            why: list[str] = []
            for k in (int(x) for x in rng_for(key).permutation(n)):
                spec = McqSpec(key=content_key(MCQ_STAGE, MCQ_VERSION, {"k": k}, [key]), variant=variant, index=0,
                               design=d, k=k, answer=k % 4, tier=d.tier)  # type: ignore[arg-type]  # fmt: skip
                try:
                    build_mcq(spec, designs, args.size, cache)
                except McqDropped as exc:
                    why.append(str(exc).split(" (")[0][:60])
                    continue
                row[variant] = k
                break
            row[f"{variant}_dropped"] = why
        rows[d.id] = row
        print(f"{d.id} {d.tier}: {n} steps ({row['from']}); item at step {row['mcq_assoc']} / {row['mcq_causal']}",
              flush=True)  # fmt: skip
    print(f"built in {time.monotonic() - t0:.0f} s")
    print(f"designs: {len(designs)}; steps from: {dict(Counter(r['from'] for r in rows.values()))}")
    for what in (*variants, "both"):
        gives = [r for r in rows.values() if all(r[v] is not None for v in (variants if what == "both" else (what,)))]
        by, of = Counter(r["tier"] for r in gives), Counter(r["tier"] for r in rows.values())
        tiers = ", ".join(f"{t} {by[t]}/{of[t]}" for t in TIERS)
        print(f"  give {what} items: {len(gives)} of {len(rows)} ({len(gives) / len(rows):.1%}; {tiers})")
    none = [(i, r) for i, r in rows.items() if r["mcq_assoc"] is None or r["mcq_causal"] is None]
    for i, r in none:
        print(f"  no item: {i} ({r['from']}, {r['steps']} steps) dropped: assoc {r['mcq_assoc_dropped'][:2]}, "
              f"causal {r['mcq_causal_dropped'][:2]}")  # fmt: skip
    if args.out_items:
        args.out_items.write_text(json.dumps(rows, indent=1))


def main() -> None:
    from shredfold.origami_bench.flat_folder import fetched_folder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["find", "items"])
    ap.add_argument("--folder", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--journal", type=Path, default=Path("results/simple_folds.journal"), help="find's results so far (resumed)")
    ap.add_argument("--journal-only", action="store_true", help="find: write the data file from the journal, search nothing")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--out-items", type=Path, default=None)
    ap.add_argument("--start", type=int, default=0, help="items: count from the N-th design on (all stay distractors)")
    args = ap.parse_args()
    args.folder = args.folder or fetched_folder()
    {"find": find, "items": items}[args.what](args)


if __name__ == "__main__":
    main()
