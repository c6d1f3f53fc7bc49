"""Flat-Folder's designs are known by their bytes, wherever they lie, and carry the paper's
category and tier."""

from __future__ import annotations

import collections
import json
import shutil
from pathlib import Path

import pytest

from shredfold.origami_bench import flat_folder as ff
from shredfold.origami_bench.designs import folder_designs

M = ff.manifest()


def test_a_file_is_known_by_its_bytes_as_the_pinned_file_or_a_later_revision(shared_dir: Path) -> None:
    matches = [M.identify(p.read_bytes()) for p in sorted((shared_dir / "flat-folder" / "instagram").glob("*.fold"))]
    assert matches and all(m is not None for m in matches)  # all() over no files would pass
    revised = [m for m in matches if m is not None and m.revision is not None]
    assert (len(matches) - len(revised), len(revised)) == (181, 19)
    medal = next(m for m in revised if m.entry.name == "013_mitanioripa_Medal.fold")
    assert medal.revision is not None and medal.revision.startswith("c2bf9a7")
    assert medal.revision in {commit for commit, _ in medal.entry.later}
    assert M.identify(b'{"file_spec": 1.1}') is None


def test_the_tiers_of_the_366_are_the_recorded_thirds() -> None:
    raw = json.loads((Path(ff.__file__).parent / "data" / "flat_folder" / "manifest.json").read_text())
    tiers = collections.Counter(ff.tier(d["vertices"], d["creases"]) for d in raw["designs"])
    assert dict(tiers) == {"easy": 123, "medium": 123, "hard": 120}
    assert [ff.tier(120, 210), ff.tier(121, 0), ff.tier(0, 211), ff.tier(401, 0), ff.tier(0, 801)] == [
        "easy", "medium", "medium", "hard", "hard",
    ]  # fmt: skip


def test_fold_counts_are_the_files_vertices_and_non_border_edges() -> None:
    meta = {"vertices_coords": [[0, 0], [1, 0], [1, 1]], "edges_vertices": [[0, 1], [1, 2], [2, 0]], "edges_assignment": ["B", "M", "v"]}
    assert ff.fold_counts(meta) == (3, 2)


def test_the_fetched_folder_is_under_the_cache_and_its_absence_says_what_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ff.CACHE_ENV, str(tmp_path / "cache"))
    assert ff.default_folder() == tmp_path / "cache" / "flat-folder" / M.commit
    with pytest.raises(FileNotFoundError, match=r"run `shredfold designs fetch`"):
        ff.fetched_folder()
    monkeypatch.delenv(ff.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ff.default_folder() == tmp_path / "xdg" / "shredfold" / "flat-folder" / M.commit


def test_a_local_folder_of_flat_folder_files_gets_their_categories_and_tiers(shared_dir: Path, tmp_path: Path) -> None:
    src = shared_dir / "flat-folder" / "instagram"
    for name in ("009_ku_Unassigned_Triangle_Pleat.fold", "196_komatsu_Giraffe.fold"):
        shutil.copy(src / name, tmp_path / name)
    shutil.copy(Path(ff.__file__).parent / "builtin" / "waterbomb-base.fold", tmp_path / "mine.fold")
    designs, errors = folder_designs(tmp_path, None)
    assert not errors
    by_id = {d.id: d for d in designs}
    assert set(by_id) == {"flat_folder/009_ku_Unassigned_Triangle_Pleat", "flat_folder/196_komatsu_Giraffe", "folder/mine"}
    giraffe = by_id["flat_folder/196_komatsu_Giraffe"]
    assert (giraffe.source, giraffe.category, giraffe.tier) == ("flat_folder", "animals/mammals", "medium")
    assert (giraffe.vertices, giraffe.creases) == (114, 251)  # the FOLD file's counts, as tiers.yaml has them
    assert by_id["flat_folder/009_ku_Unassigned_Triangle_Pleat"].tier == "easy"
    assert by_id["folder/mine"].source == "folder" and by_id["folder/mine"].tier == ""
    # the fetched folder admits only Flat-Folder's files
    designs, errors = folder_designs(tmp_path, None, flat_folder_only=True)
    assert len(designs) == 2 and len(errors) == 1
    assert "mine.fold: SHA-256 " in str(errors[0]) and "is not one of Flat-Folder's designs at 191aaa9" in str(errors[0])
