"""The Flat-Folder data shipped with OrigamiBench: the manifest of the 366 designs at the
pinned commit, a category for each, and complexity tiers that split them in thirds."""

from __future__ import annotations

import collections
import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

import shredfold

DATA = Path(shredfold.__file__).parent / "origami_bench" / "data" / "flat_folder"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "flat-folder" / "instagram"
TAXONOMY_ROOTS = {
    "animals",
    "people-figures",
    "fantasy-creatures",
    "geometry-tessellations",
    "bases-gadgets",
    "clothing",
    "objects",
    "plants",
    "symbols-logos",
}


def _manifest() -> dict:
    return json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))


def _yaml(name: str) -> dict:
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))


def tier(vertices: int, creases: int, thresholds: dict) -> str:
    hard, easy = thresholds["hard"], thresholds["easy"]
    if vertices > hard["vertices_above"] or creases > hard["creases_above"]:
        return "hard"
    if vertices <= easy["vertices_at_most"] and creases <= easy["creases_at_most"]:
        return "easy"
    return "medium"


def counts(text: str) -> tuple[int, int]:
    data = json.loads(text)
    letters = data.get("edges_assignment") or ["U"] * len(data["edges_vertices"])
    return len(data["vertices_coords"]), sum(1 for a in letters if str(a).upper() != "B")


def test_manifest_pins_one_upstream_commit_and_lists_all_366_designs():
    m = _manifest()
    assert m["upstream"] == "https://github.com/origamimagiro/flat-folder"
    assert re.fullmatch(r"[0-9a-f]{40}", m["commit"])
    paths = [d["path"] for d in m["designs"]]
    assert len(paths) == len(set(paths)) == 366
    # numbered 001..366 once each, all in the instagram folder
    assert sorted(Path(p).name[:3] for p in paths) == [f"{i:03d}" for i in range(1, 367)]
    for d in m["designs"]:
        assert d["path"].startswith("examples/instagram/") and d["path"].endswith(".fold")
        assert re.fullmatch(r"[0-9a-f]{64}", d["sha256"])
        assert d["title"].strip()
        assert d["vertices"] > 2 and d["creases"] > 0
        for rev in d.get("later_revisions", []):
            assert re.fullmatch(r"[0-9a-f]{40}", rev["commit"]) and rev["sha256"] != d["sha256"]


def test_every_design_has_one_category_of_the_taxonomy():
    m, cats = _manifest(), _yaml("categories.yaml")
    names = cats["categories"]
    assert 10 <= len(names) <= 14
    assert {c.split("/")[0] for c in names} <= TAXONOMY_ROOTS
    assert set(cats["designs"]) == {d["path"] for d in m["designs"]}
    assert set(cats["designs"].values()) == set(names)  # every category is used
    by = collections.Counter(cats["designs"].values())
    # the titles' obvious cases
    title = {d["path"]: d["title"] for d in m["designs"]}
    for path, cat in cats["designs"].items():
        t = title[path].lower()
        if "tessellation" in t:
            assert cat == "geometry-tessellations", title[path]
        if "dragon" in t and "dragonfly" not in t:
            assert cat == "fantasy-creatures", title[path]
        if "beetle" in t or ("mantis" in t and "shrimp" not in t):
            assert cat == "animals/insects", title[path]
    assert by["animals/insects"] > 30 and by["geometry-tessellations"] > 40


def test_every_design_has_a_tier_and_the_tiers_split_the_366_in_thirds():
    m, th = _manifest(), _yaml("tiers.yaml")
    tiers = collections.Counter(tier(d["vertices"], d["creases"], th) for d in m["designs"])
    assert sum(tiers.values()) == 366
    assert all(105 <= tiers[t] <= 139 for t in ("easy", "medium", "hard")), tiers
    # the counts the file records in its comment
    assert dict(tiers) == {"easy": 123, "medium": 123, "hard": 120}
    assert "easy 123, medium 123, hard 120" in (DATA / "tiers.yaml").read_text()


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared Flat-Folder designs not found at {SHARED}")


@needs_shared
def test_the_shared_designs_are_the_manifest_files_or_their_later_upstream_revision():
    by_name = {Path(d["path"]).name: d for d in _manifest()["designs"]}
    shared = sorted(SHARED.glob("*.fold"))
    assert len(shared) == 200
    pinned = revised = 0
    for path in shared:
        entry = by_name[path.name]  # every shared file is one of the 366
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest == entry["sha256"]:
            pinned += 1
        else:
            # upstream re-saved some files after the pinned commit; a copy of the re-save is
            # recognised, anything else is a corrupt or foreign file
            later = {rev["sha256"] for rev in entry.get("later_revisions", [])}
            assert digest in later, f"{path.name}: SHA-256 {digest} is not in the manifest"
            revised += 1
    assert (pinned, revised) == (181, 19)


@needs_shared
def test_the_tiers_split_the_shared_designs_roughly_in_thirds():
    th = _yaml("tiers.yaml")
    tiers = collections.Counter(tier(*counts(p.read_text(encoding="utf-8")), th) for p in SHARED.glob("*.fold"))
    assert sum(tiers.values()) == 200
    assert all(55 <= tiers[t] <= 78 for t in ("easy", "medium", "hard")), tiers
