"""Full-step GS of ``origami-search`` by tier: procedural targets and Flat-Folder's designs.

Procedural designs are the pipeline's own (``procedural_design`` with the default spec's fold
counts, tiered by the default thresholds), drawn in index order until every tier has
``--per-tier`` of them; Flat-Folder's are a sample of ``--ff-sample`` spread evenly over the
tiers (every k-th in file order). Each target is solved and drawn as the full-step task does
(``target_state``, ``render_folded``, ``silhouette``), each episode is played by
``run_episode`` with the agent answering in process, and GS is the task's ``gs``.

The agent is whichever ``shredfold`` is imported: run once on this branch and once with
``PYTHONPATH=/work/main/src`` (the agent before), then ``--compare`` the two JSON files.

    nice -n 10 python bench/fullstep_search.py --out after.json
    PYTHONPATH=/work/main/src nice -n 10 python bench/fullstep_search.py --out before.json
    python bench/fullstep_search.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from shredfold.origami_bench.design import TIERS, Design, tier_of
from shredfold.spec import DesignSources, ModelConfig, OrigamiBenchSpec


def procedural_targets(per_tier: int, seed: int, most: int) -> list[Design]:
    from shredfold.origami_bench.designs import procedural_design

    ob = OrigamiBenchSpec()
    src = DesignSources(procedural=most, procedural_folds=ob.designs.procedural_folds)
    chosen: dict[str, list[Design]] = {t: [] for t in TIERS}
    for i in range(most):
        d = procedural_design(i, src, seed)
        d = d.model_copy(update={"tier": tier_of(d.vertices, d.creases, ob.tiers)})
        if len(chosen[d.tier]) < per_tier:
            chosen[d.tier].append(d)
        if all(len(v) >= per_tier for v in chosen.values()):
            break
    return [d for t in TIERS for d in chosen[t]]


def flat_folder_targets(folder: Path, sample: int, tiers: tuple[str, ...] = TIERS) -> list[Design]:
    from shredfold.origami_bench.designs import folder_designs

    found, errors = folder_designs(folder, None)
    for e in errors:
        print(f"skipped: {e}")
    out = []
    per = max(1, sample // len(TIERS))
    for t in tiers:
        tier = [d for d in found if d.tier == t]
        step = max(1, len(tier) // per)
        out += tier[::step][:per]
    return out


def solved(design: Design, size: int, cache: Path | None) -> tuple[bytes, np.ndarray, float]:
    """The target picture and silhouette (cached by design key), and seconds to solve."""
    from shredfold.origami_bench.env import render_folded, silhouette
    from shredfold.origami_bench.targets import target_state

    if cache is not None:
        png, npy = cache / f"{design.key}-{size}.png", cache / f"{design.key}-{size}.npy"
        if png.is_file() and npy.is_file():
            return png.read_bytes(), np.load(npy), 0.0
    t0 = time.perf_counter()
    state = target_state(design)
    data, mask = render_folded(state, size), silhouette(state, size)
    secs = time.perf_counter() - t0
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        for path, write in ((png, lambda fh: fh.write(data)), (npy, lambda fh: np.save(fh, mask))):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                write(fh)
            os.replace(tmp, path)
    return data, mask, secs


def play(design: Design, size: int, step_limit: int, cache: Path | None) -> dict[str, Any]:
    from shredfold.models.builtin.origami_agents import OrigamiSearch
    from shredfold.origami_bench.env import EnvConfig, gs, run_episode, silhouette

    target_png, target_mask, solve_s = solved(design, size, cache)
    agent = OrigamiSearch(ModelConfig(id="origami-search", adapter="origami-search"), None)
    env = EnvConfig(kind="fold", step_limit=step_limit, image_size=size)
    t0 = time.perf_counter()
    episode = run_episode(target_png, env, lambda r: (agent.complete(r).text, {}), item=None)
    secs = time.perf_counter() - t0
    return {
        "design": design.id,
        "tier": design.tier,
        "folds_in_design": len(design.sequence) if design.sequence else None,
        "gs": gs(silhouette(episode.final, size), target_mask),
        "steps": episode.steps,
        "seconds": round(secs, 3),
        "solve_seconds": round(solve_s, 3),
        "error": episode.error,
    }


def table(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out = {}
    for t in TIERS:
        r = [x for x in rows if x["tier"] == t]
        if r:
            out[t] = {
                "n": len(r),
                "gs": round(float(np.mean([x["gs"] for x in r])), 4),
                "gs_min": round(float(np.min([x["gs"] for x in r])), 4),
                "exact": sum(x["gs"] >= 0.999 for x in r),
                "s_per_episode": round(float(np.mean([x["seconds"] for x in r])), 2),
            }
    return out


def compare(before: Path, after: Path) -> None:
    b, a = json.loads(before.read_text()), json.loads(after.read_text())
    for part in ("procedural", "flat_folder"):
        print(f"{part}: tier  n  GS before -> after  (s/episode before -> after)")
        for t in TIERS:
            x, y = b["summary"].get(part, {}).get(t), a["summary"].get(part, {}).get(t)
            if x and y:
                print(f"  {t:7s} {y['n']:3d}  {x['gs']:.4f} -> {y['gs']:.4f}  "
                      f"({x['s_per_episode']:.2f} -> {y['s_per_episode']:.2f})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-tier", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--most", type=int, default=400, help="most procedural designs drawn")
    ap.add_argument("--step-limit", type=int, default=OrigamiBenchSpec().step_limit)
    ap.add_argument("--size", type=int, default=OrigamiBenchSpec().image_size)
    ap.add_argument("--flat-folder", type=Path, default=Path(__file__).parents[1] / "../shared/flat-folder/instagram")
    ap.add_argument("--ff-sample", type=int, default=30, help="Flat-Folder designs (0: none)")
    ap.add_argument("--ff-tiers", nargs="+", choices=TIERS, default=list(TIERS), help="play only these tiers' share")
    ap.add_argument("--cache", type=Path, default=None, help="folder for solved targets")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--compare", type=Path, nargs=2, default=None, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    import shredfold

    print(f"agent from {Path(shredfold.__file__).parent}, step limit {args.step_limit}")
    parts = {"procedural": procedural_targets(args.per_tier, args.seed, args.most)}
    if args.ff_sample and args.flat_folder.is_dir():
        parts["flat_folder"] = flat_folder_targets(args.flat_folder, args.ff_sample, tuple(args.ff_tiers))
    rows: dict[str, list[dict[str, Any]]] = {}
    for part, designs in parts.items():
        rows[part] = []
        for d in designs:
            row = play(d, args.size, args.step_limit, args.cache)
            rows[part].append(row)
            print(f"{part} {row['design']} {row['tier']} gs={row['gs']:.4f} steps={row['steps']} "
                  f"{row['seconds']:.1f}s", flush=True)  # fmt: skip
    summary = {part: table(r) for part, r in rows.items()}
    print(json.dumps(summary, indent=1))
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "summary": summary,
                                   "rows": rows}, indent=1))  # fmt: skip
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
