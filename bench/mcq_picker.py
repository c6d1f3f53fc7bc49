"""Accuracy of the built-in MCQ pickers on a spec's one-step items, and what the item gates
did (distractors replaced, items dropped). Items are planned and built as the pipeline's
origami_mcq task does (catalogue, crease orders for designs without a fold sequence,
plan_mcq, build_mcq); the agents answer the request a
model is sent (mcq_request: the causal items' prompt names the step made), through their
adapters. ``--unnamed`` asks the causal items with the associative wording (no step), as
before the prompt named it, for comparison.

``--flat-folder [FOLDER]`` plans the items over Flat-Folder's designs instead of the spec's
catalogue (the fetched folder of ``shredfold designs fetch`` by default, read without solving
them): their steps are the shipped simple folds (:mod:`shredfold.origami_bench.simple_folds`)
or a crease order; accuracy is also given by the paper's tiers and categories.

Run: python bench/mcq_picker.py [--spec specs/default.yaml] [--items N] [--store results/store] [--unnamed]
     python bench/mcq_picker.py --flat-folder [--items 366]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from pathlib import Path

from shredfold.models.builtin.origami_agents import OrigamiRandom, OrigamiSearch
from shredfold.origami_bench.catalogue import load_catalogue
from shredfold.origami_bench.crease_order import OrderBook
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.mcq import McqDropped, StateCache, build_mcq, plan_mcq
from shredfold.origami_bench.prompts import AnswerError, mcq_request, parse_mcq
from shredfold.spec import ModelConfig, read_spec
from shredfold.store import Store

AGENTS = {"origami-search": OrigamiSearch, "origami-random": OrigamiRandom}
# distractors made by folding the reference once more along another line or with the other
# assignment: also "the reference after exactly one more simple fold", so right by the
# associative wording, wrong by the causal one (it names the fold)
ALSO_ONE_FOLD = ("other-assignment", "nearby-line")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", type=Path, default=Path("specs/default.yaml"))
    ap.add_argument("--items", type=int, default=None, help="items per variant (default: the spec's)")
    ap.add_argument("--store", type=Path, default=None, help="read a cached catalogue from this store")
    ap.add_argument("--unnamed", action="store_true", help="causal items without their step (the old prompt)")
    ap.add_argument("--variants", nargs="+", default=["mcq_assoc", "mcq_causal"], help="variants to run")
    ap.add_argument("--flat-folder", nargs="?", type=Path, const=True, default=None,
                    help="Flat-Folder's designs instead of the spec's (default folder: the fetched one)")  # fmt: skip
    args = ap.parse_args()
    spec, _ = read_spec(args.spec)
    ob = spec.origami
    if ob is None:
        raise SystemExit(f"{args.spec}: the spec has no origami section")
    store = Store(args.store) if args.store else None
    if args.flat_folder is not None:
        designs = flat_folder_designs(None if args.flat_folder is True else args.flat_folder)
    else:
        designs = list(load_catalogue(ob, spec.seed, store).designs)
    agents = {name: cls(ModelConfig(id=name, adapter=name), None) for name, cls in AGENTS.items()}
    orders = OrderBook(store)  # read from the store when given, never written
    cache = StateCache(orders)
    n_items = args.items or ob.mcq_items
    for variant in args.variants:
        if variant not in ob.tasks:
            continue
        specs = plan_mcq(designs, variant, n_items, spec.seed, ob.image_size, orders)  # type: ignore[arg-type]
        right: Counter[str] = Counter()
        parts: dict[str, Counter[str]] = defaultdict(Counter)  # "tier easy" -> right / items per agent
        right_by_step: dict[str, Counter[str]] = {name: Counter() for name in agents}
        picked: dict[str, Counter[str]] = {name: Counter() for name in agents}
        rejected: Counter[str] = Counter()
        replaced = dropped = built = ambiguous = 0
        steps: list[dict[str, object] | None] = []
        seconds: Counter[str] = Counter()
        for s in specs:
            t0 = time.perf_counter()
            try:
                item = build_mcq(s, designs, ob.image_size, cache)
            except McqDropped as exc:
                dropped += 1
                print(f"  dropped {s.design.id} step {s.k}: {exc}")
                continue
            seconds["build"] += time.perf_counter() - t0
            built += 1
            replaced += bool(item.rejected)
            ambiguous += any(k in ALSO_ONE_FOLD for k in item.kinds)
            rejected.update(item.rejected)
            steps.append(item.step)
            request = mcq_request(item.reference, list(item.options), item=None, step=None if args.unnamed else item.step)
            for name, agent in agents.items():
                t0 = time.perf_counter()
                try:
                    letter = parse_mcq(agent.complete(request).text)
                except AnswerError:
                    letter = ""
                seconds[name] += time.perf_counter() - t0
                right[name] += letter == item.answer
                for part in (f"tier {s.design.tier}", f"category {s.design.category}"):
                    parts[part][name] += letter == item.answer
                    parts[part]["items"] += name == next(iter(agents))
                right_by_step[name][str(item.step["kind"]) if item.step else "none"] += letter == item.answer
                if letter and letter != item.answer:
                    picked[name][item.kinds["ABCD".index(letter)]] += 1
        print(f"{variant}: {len(specs)} planned, {built} built, {dropped} dropped, "
              f"{replaced} with distractors replaced ({dict(rejected)}); "
              f"build {seconds['build'] / max(built, 1):.2f} s/item")
        named = Counter(str(item_step["kind"]) for item_step in steps if item_step is not None)
        print(f"  {ambiguous} of {built} items offer another option that is one fold of the reference "
              f"too ({' or '.join(ALSO_ONE_FOLD)}); steps named in the prompt: "
              f"{dict(named) if not args.unnamed else 'none (--unnamed)'}")
        for name in agents:
            acc = right[name] / max(built, 1)
            print(f"  {name}: accuracy {acc:.3f} ({right[name]}/{built}), wrong picks by kind "
                  f"{dict(picked[name])}, {seconds[name] / max(built, 1):.2f} s/item")
            if named:
                print(f"    right by the kind of step named: {dict(right_by_step[name])} of {dict(named)}")
        if args.flat_folder is not None:
            print(f"  by tier and category ({', '.join(agents)}):")
            for part in sorted(parts, key=lambda p: (not p.startswith("tier"), p)):
                c = parts[part]
                print(f"    {part:36s} {c['items']:4d} items  " + "  ".join(f"{c[n] / c['items']:.3f}" for n in agents))


def flat_folder_designs(folder: Path | None) -> list[Design]:
    """Flat-Folder's designs in a fetched folder, read (not solved), with their categories
    and tiers; a design whose steps are neither shipped simple folds nor a crease order gives
    no items (plan_mcq skips it)."""
    from shredfold.origami_bench.designs import folder_designs
    from shredfold.origami_bench.flat_folder import fetched_folder
    from shredfold.origami_bench.simple_folds import shipped_for

    found, errors = folder_designs(folder or fetched_folder(), None, flat_folder_only=True)
    for e in errors:
        print(f"not read: {e}")
    # a design the shipped data has not searched yet would have its crease order searched
    # here (minutes for the large ones): left out, and counted
    searched = [d for d in found if shipped_for(d) is not None]
    print(f"{len(found)} Flat-Folder designs, {len(searched)} searched by the shipped simple-fold data "
          f"({dict(Counter(d.tier for d in searched))})")  # fmt: skip
    return searched


if __name__ == "__main__":
    main()
