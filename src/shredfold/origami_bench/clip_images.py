"""The pictures ``shredfold clip finetune`` trains on: every design a spec names (built-in,
procedural, Flat-Folder's, a folder), folded and drawn by the benchmark's own code — the
full-step target picture SS compares against, at the spec's ``image_size`` — captioned by
its category.

A picture the pipeline already made is read from the store (the target object of that
design and size); the others are drawn here and not stored (the pipeline owns the store).
"""

from __future__ import annotations

from collections.abc import Callable

from shredfold.metrics.clip_finetune import Picture
from shredfold.origami_bench.catalogue import load_catalogue
from shredfold.origami_bench.targets import TARGET_STAGE, target_key, target_state
from shredfold.spec import OrigamiBenchSpec
from shredfold.store import Store


def design_pictures(
    ob: OrigamiBenchSpec, seed: int, store: Store | None = None, progress: Callable[[str], None] | None = None
) -> list[Picture]:
    from shredfold.origami_bench.env import render_folded

    say = progress or (lambda _: None)
    designs = load_catalogue(ob, seed, store).designs
    out = []
    stored = 0
    for n, d in enumerate(designs, 1):
        key = target_key(d, ob.image_size)
        if store is not None and store.has(TARGET_STAGE, key):
            png = store.read_bytes(TARGET_STAGE, key, "target.png")
            stored += 1
        else:
            png = render_folded(target_state(d), ob.image_size)
        out.append(Picture(key=key, design=d.id, category=d.category, png=png))
        if n % 50 == 0 or n == len(designs):
            say(f"pictures: {n}/{len(designs)} designs ({stored} from the store)")
    return out
