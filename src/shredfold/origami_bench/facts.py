"""Computing what :mod:`.known` ships: one design file's facts, as this engine finds them.

Run over Flat-Folder's designs by ``bench/flat_folder_known.py`` (each in a worker process,
under a time and memory budget) and over a sample of them by the test that keeps
``known.json`` honest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.designs import design_from_file

STATES_LIMIT = 10_000  # per component, as Flat-Folder's instagram_data.csv counts them


def facts_of(path: Path, validate_timeout: float, count_timeout: float) -> dict[str, Any]:
    """This engine's facts about one FOLD file: whether it folds flat (one layer order within
    ``validate_timeout`` seconds), its states counted up to :data:`STATES_LIMIT` per
    component within ``count_timeout`` seconds, and the crease order search with the default
    budget. What the budget leaves open is reported as such (``undecided``; ``states``
    None), for the caller to fill from Flat-Folder's results or leave open."""
    from shredfold.origami import solve_layers
    from shredfold.origami_bench.crease_order import find_crease_order

    data = path.read_bytes()
    design = design_from_file(path, "flat_folder", data=data)
    pattern = design.pattern()
    vertices, creases = ff.fold_counts(json.loads(data))
    out: dict[str, Any] = {"vertices": vertices, "creases": creases}
    first = solve_layers(pattern, limit=1, timeout=validate_timeout)
    if first.status == "timeout":
        why = f"undecided: the layer solver found no flat-folded state within {validate_timeout:g} s"
        return {**out, "folds_flat": "undecided", "layer_order": False, "why_not": why}
    if first.status != "ok":
        why = f"{first.reason}: {first.detail}" if first.detail else first.reason
        return {**out, "folds_flat": "no", "layer_order": False, "why_not": f"does not fold flat ({why})"[:300]}
    out.update(folds_flat="yes", layer_order=True)
    count = solve_layers(pattern, limit=STATES_LIMIT, timeout=count_timeout)
    if count.status == "ok":
        out.update(states=count.states, states_limited=count.limited, states_by="shredfold")
    order = find_crease_order(design)
    out["crease_order"] = {"steps": order.steps, "reason": order.reason, "lines": order.lines}
    return out
