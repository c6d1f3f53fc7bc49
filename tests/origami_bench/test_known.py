"""What the package ships about Flat-Folder's designs (``data/flat_folder/known.json``) is what
the engine computes: a record for every file of the manifest, recomputed here for a few
cheap designs (``bench/flat_folder_known.py`` recomputes all of them)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench import known
from shredfold.origami_bench.crease_order import OrderBook, shipped_order
from shredfold.origami_bench.designs import design_from_file
from shredfold.origami_bench.facts import facts_of
from shredfold.store import sha256_bytes

# cheap to recompute: an order found in 9 steps, one searched without an order, a later
# revision with a 2-step order, and the design the old conversion broke (32 states)
CHEAP = (
    "009_ku_Unassigned_Triangle_Pleat.fold",
    "001_traditional_Sailboat.fold",
    "244_komatsuoripa_Smallbird_Base.fold",
    "360_fung_I_Heart_Cat_v2_(shaped).fold",
)


def test_every_file_of_the_manifest_has_a_record() -> None:
    m, data = ff.manifest(), known.known_file()
    assert data.commit == m.commit and data.format == known.KNOWN_FORMAT
    wanted = {e.sha256 for e in m.entries} | {sha for e in m.entries for _, sha in e.later}
    assert set(data.designs) == wanted
    for e in m.entries:
        rec = data.designs[e.sha256]
        assert rec.file == e.name and rec.revision is None
        assert (rec.vertices, rec.creases) == (e.vertices, e.creases)
        assert rec.category == e.category and rec.tier == ff.tier(e.vertices, e.creases)
        for commit, sha in e.later:
            assert data.designs[sha].file == e.name and data.designs[sha].revision == commit


def test_records_are_consistent() -> None:
    for rec in known.known_file().designs.values():
        if rec.folds_flat == "yes":
            assert rec.problem is None and not rec.why_not
            # a layer order this engine found, or Flat-Folder's verdict without one
            assert rec.layer_order == (rec.decided_by == "shredfold")
            assert rec.states is None or rec.states >= 1
        else:
            assert rec.problem and not rec.layer_order and rec.states is None
        if rec.decided_by == "flat-folder":
            assert rec.revision is None and rec.states_by == "flat-folder"
        if rec.crease_order is not None and rec.crease_order.steps is not None:
            assert rec.folds_flat == "yes" and len(rec.crease_order.steps) >= 2 and not rec.crease_order.reason


def test_every_pinned_design_folds_flat_as_flat_folder_finds() -> None:
    # Flat-Folder's own csv at the pinned commit counts states > 0 for all 366: so does the
    # package, by this engine or (beyond its budget) by that csv
    pinned = [known.known(e.sha256) for e in ff.manifest().entries]
    assert all(rec is not None and rec.folds_flat == "yes" for rec in pinned)


@pytest.mark.parametrize("name", CHEAP)
def test_a_cheap_designs_record_is_what_the_engine_computes(shared_dir: Path, name: str) -> None:
    path = shared_dir / "flat-folder" / "instagram" / name
    shipped = known.known(sha256_bytes(path.read_bytes()))
    assert shipped is not None
    budget = known.known_file().budget
    got = known.Known.model_validate({"file": shipped.file, "revision": shipped.revision, **facts_of(path, budget["validate_s"], budget["count_s"])})
    assert got == shipped


def test_the_shipped_crease_order_is_what_the_plan_uses(shared_dir: Path) -> None:
    design = design_from_file(shared_dir / "flat-folder" / "instagram" / CHEAP[0], "flat_folder")
    order = OrderBook().known(design)  # no store, no search: the package's
    assert order is not None and order.found and order == shipped_order(design)
    assert order.steps is not None and len(order.steps) == 9


def test_states_agree_with_flat_folders_reference(shared_dir: Path) -> None:
    reference = {r["file"]: r for r in csv.DictReader((shared_dir / "flat-folder" / "reference.csv").open())}
    compared = 0
    for path in sorted((shared_dir / "flat-folder" / "instagram").glob("*.fold")):
        rec = known.known(sha256_bytes(path.read_bytes()))
        assert rec is not None
        if rec.states is not None and rec.states_by == "shredfold":
            assert rec.states == int(reference[path.name]["states"]), path.name
            compared += 1
    assert compared >= 150
