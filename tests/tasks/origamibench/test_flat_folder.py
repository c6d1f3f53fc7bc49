"""A spec naming ``designs: {flat_folder: true}`` plans on the fetched designs, each with the
paper's category and tier; a local copy of the same files gives the same designs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.origami_bench import designs as design_sources
from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.catalogue import load_catalogue
from shredfold.origami_bench.fetch import fetch
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.spec import SpecError
from shredfold.store import Store
from tests.origami_bench.archives import SMALL, design_members, write_archive

M = ff.manifest()


def spec(tmp_path: Path, designs: str, extra: str = "") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"name: ff\norigami:\n  designs: {designs}\n  tasks: [fullstep]\n{extra}models: [origami-random]\n")
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ff.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def fetched(shared_dir: Path, tmp_path: Path, cache: Path) -> Path:
    """A few shared designs of each tier fetched (through a file:// archive) to where
    ``flat_folder: true`` reads."""
    url = write_archive(tmp_path / "ff.tar.gz", design_members(shared_dir / "flat-folder" / "instagram", SMALL))
    report = fetch(url, allow_partial=True)
    assert report.folder == ff.default_folder() and report.present == len(SMALL)
    return report.folder


def targets(plan) -> list:  # type: ignore[no-untyped-def]
    return [t.design for s in plan.item_sets.values() for t in s.items]


def test_flat_folder_true_plans_on_the_fetched_designs_by_category_and_tier(fetched: Path, tmp_path: Path) -> None:
    plan = make_plan(load_spec(spec(tmp_path, "{builtin: false, procedural: 0, flat_folder: true}")))
    designs = targets(plan)
    assert sorted(d.id for d in designs) == sorted(f"flat_folder/{n.removesuffix('.fold')}" for n in SMALL)
    by_name = M.by_name()
    for d in designs:
        name = d.id.split("/", 1)[1] + ".fold"
        meta = json.loads((fetched / name).read_text())
        assert d.source == "flat_folder" and d.category == by_name[name].category
        assert d.tier == ff.tier(*ff.fold_counts(meta))
    tiers = {s.labels["tier"]: len(s.items) for s in plan.item_sets.values()}
    assert tiers == {"easy": 3, "medium": 2, "hard": 2}
    cats = {d.id: d.category for d in designs}
    assert cats["flat_folder/196_komatsu_Giraffe"] == "animals/mammals"
    assert cats["flat_folder/145_beber_Hexagonal_Tessellation_of_Dodecagons_#1"] == "geometry-tessellations"
    # the spec's own thresholds tier the other sources, never the paper's designs
    high = "  tiers: {medium_vertices: 5000, medium_creases: 5000, hard_vertices: 9000, hard_creases: 9000}\n"
    other_thresholds = make_plan(load_spec(spec(tmp_path, "{builtin: false, procedural: 0, flat_folder: true}", high)))
    assert [d.tier for d in targets(other_thresholds)] == [d.tier for d in designs]


def test_a_local_copy_of_the_same_files_gives_the_same_designs(fetched: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in SMALL:
        shutil.copy(fetched / name, copy / name)
    a = targets(make_plan(load_spec(spec(tmp_path, "{builtin: false, procedural: 0, flat_folder: true}"))))
    b = targets(make_plan(load_spec(spec(tmp_path, f"{{builtin: false, procedural: 0, folder: {copy}}}"))))
    assert [(d.key, d.id, d.category, d.tier) for d in a] == [(d.key, d.id, d.category, d.tier) for d in b]


def test_designs_not_fetched_are_a_one_line_plan_error(cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, "{flat_folder: true}")
    with pytest.raises(SpecError, match=r"origami.designs: Flat-Folder's designs are not at .*run `shredfold designs fetch`"):
        make_plan(load_spec(path))
    assert main(["plan", str(path), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "shredfold designs fetch" in err and str(cache) in err


def test_a_file_changed_in_the_fetched_folder_is_named(fetched: Path, tmp_path: Path) -> None:
    edited = fetched / SMALL[0]
    edited.write_text(edited.read_text().replace("[", "[ ", 1))
    with pytest.raises(SpecError) as info:
        make_plan(load_spec(spec(tmp_path, "{builtin: false, procedural: 0, flat_folder: true}")))
    assert f"{edited}: SHA-256 " in str(info.value) and "is not one of Flat-Folder's designs" in str(info.value)


def test_all_200_shared_designs_plan_with_their_categories_and_tiers_and_no_solving(
    shared_dir: Path, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instagram = shared_dir / "flat-folder" / "instagram"
    url = write_archive(tmp_path / "ff.tar.gz", design_members(instagram))
    assert fetch(url, allow_partial=True).present == 200
    # whether each folds flat ships with the package (known.json): nothing is validated here
    monkeypatch.setattr(design_sources, "flat_fold_problem", lambda *a: pytest.fail("a design was solved"))
    path = spec(tmp_path, "{builtin: false, procedural: 0, flat_folder: true}")
    resolved, store = load_spec(path), Store(tmp_path / "store")
    plan = make_plan(resolved, store, write=True)
    designs_ = targets(plan)
    assert resolved.spec.origami is not None
    assert load_catalogue(resolved.spec.origami, resolved.spec.seed, store).invalid == ()
    assert len(designs_) == 200 and all(s.asked and not s.needs for s in plan.item_sets.values())
    by_name = M.by_name()
    for d in designs_:
        name = d.id.split("/", 1)[1] + ".fold"
        assert d.category == by_name[name].category
        assert d.tier == ff.tier(*ff.fold_counts(json.loads((instagram / name).read_text())))
    tiers = {s.labels["tier"]: len(s.items) for s in plan.item_sets.values()}
    assert tiers == {"easy": 70, "medium": 66, "hard": 64}  # tiers.yaml's split of the shared 200
    assert len({d.category for d in designs_}) >= 10
