"""`shredfold export --format hf`: a folder `datasets.load_dataset` reads, whose rows and image
bytes are the store's, the same bytes every time, that never replaces a user's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from shredfold.cli import main
from shredfold.origami_bench.items import MCQ_STAGE
from shredfold.origami_bench.prompts import mcq_request
from shredfold.origami_bench.targets import TARGET_STAGE
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.shred.presentation import paper_image
from shredfold.shred.prompts import PAPER_SYSTEM, PAPER_TASK, build_request
from shredfold.shred.sample_folder import SAMPLE_STAGE, load_public, load_truth
from shredfold.store import Store, sha256_file
from tests.export.tiny_export import TinyExport, write_inputs

datasets = pytest.importorskip("datasets")


def load(folder: Path, config: str | None, cache: Path, split: str | None = None) -> object:
    """The export as `datasets` loads it, images left as their bytes (not decoded)."""
    ds = datasets.load_dataset(str(folder), config, split=split, cache_dir=str(cache))
    splits = [ds] if split else list(ds.values())
    for i, d in enumerate(splits):
        for name, feature in d.features.items():
            if isinstance(feature, datasets.Image):
                splits[i] = splits[i].cast_column(name, datasets.Image(decode=False))
            elif isinstance(feature, datasets.List) and isinstance(feature.feature, datasets.Image):
                splits[i] = splits[i].cast_column(name, datasets.List(datasets.Image(decode=False)))
    return splits[0] if split else dict(zip(ds.keys(), splits, strict=True))


def plan_of(tiny: TinyExport):  # noqa: ANN201
    store = Store(tiny.results / "store")
    return make_plan(load_spec(tiny.spec), store), store


def test_shredbench_rows_are_the_stores_samples(tiny_export: TinyExport, tmp_path: Path) -> None:
    plan, store = plan_of(tiny_export)
    rows = load(tiny_export.out, "shredbench", tmp_path, split="test")
    planned = [i for s in plan.sets_of("shred") for i in s.items]
    assert [r["key"] for r in rows] == [i.key for i in planned]  # every sample, in plan order
    for row, item in zip(rows, planned, strict=True):
        sample = store.object(SAMPLE_STAGE, item.key)
        public, truth = load_public(sample), load_truth(sample)
        assert (row["domain"], row["n"], row["kind"], row["doc_id"]) == (item.doc.domain, item.n, item.kind, item.doc.doc_id)
        assert [p["bytes"] for p in row["pieces"]] == public.pieces and len(public.pieces) == item.n
        assert row["composite"]["bytes"] == public.composite
        assert row["paper_image"]["bytes"] == paper_image(public.composite)
        assert (row["truth"], row["truth_html"], row["source"]) == (truth.text, truth.html, truth.source)
        assert (row["truth_html"] is not None) == (item.kind == "table")
        pieces = build_request(kind=item.kind, lang=item.lang, n=item.n, images=public.pieces, composite=False, item=None)
        assert row["prompt_pieces"] == pieces.messages[1].text and row["system"] == pieces.messages[0].text
        assert (row["system_paper"], row["prompt_paper"], row["protocol"]) == (PAPER_SYSTEM, PAPER_TASK, "shredfold")


def test_origami_rows_are_the_stores_items(tiny_export: TinyExport, tmp_path: Path) -> None:
    plan, store = plan_of(tiny_export)
    mcq = load(tiny_export.out, "origami_mcq", tmp_path)
    assert set(mcq) == {"mcq_assoc", "mcq_causal"}
    for variant, rows in mcq.items():
        planned = [i for s in plan.sets_of("origami_mcq") if s.labels["task"] == variant for i in s.items]
        kept = [i for i in planned if "dropped" not in store.get_json(MCQ_STAGE, i.key, "item.json")]
        assert kept and [r["key"] for r in rows] == [i.key for i in kept]
        for row, item in zip(rows, kept, strict=True):
            meta = store.get_json(MCQ_STAGE, item.key, "item.json")
            assert row["reference"]["bytes"] == store.read_bytes(MCQ_STAGE, item.key, "reference.png")
            assert [o["bytes"] for o in row["options"]] == [store.read_bytes(MCQ_STAGE, item.key, f"option_{c}.png") for c in "ABCD"]
            assert (row["answer"], row["option_kinds"], row["design"], row["tier"]) == (meta["answer"], meta["kinds"], item.design.id, item.tier)
            assert (row["step"] is None) == (variant == "mcq_assoc")
            step = None if row["step"] is None else json.loads(row["step"])
            assert step == meta.get("step")
            request = mcq_request(row["reference"]["bytes"], [o["bytes"] for o in row["options"]], item=None, step=step)
            assert (row["system"], row["prompt"]) == (request.messages[0].text, request.messages[1].text)
    full = load(tiny_export.out, "origami_fullstep", tmp_path, split="test")
    targets = [i for s in plan.sets_of("origami_fullstep") for i in s.items]
    assert [r["key"] for r in full] == [t.key for t in targets] and len(targets) == 2
    for row, t in zip(full, targets, strict=True):
        assert row["target"]["bytes"] == store.read_bytes(TARGET_STAGE, t.key, "target.png")
        assert json.loads(row["target_fold"]) == json.loads(store.read_text(TARGET_STAGE, t.key, "state.fold"))
        assert row["category"] == t.design.category == "procedural"


def test_the_first_config_loads_without_a_name(tiny_export: TinyExport, tmp_path: Path) -> None:
    ds = datasets.load_dataset(str(tiny_export.out), cache_dir=str(tmp_path))
    assert list(ds) == ["test"] and ds["test"].num_rows == 4 and "composite" in ds["test"].features


def test_the_card_names_licences_protocol_spec_version_and_every_key(tiny_export: TinyExport) -> None:
    text = (tiny_export.out / "README.md").read_text()
    head = yaml.safe_load(text.split("---\n")[1])
    assert [c["config_name"] for c in head["configs"]] == ["shredbench", "origami_mcq", "origami_fullstep"]
    assert set(head["license"]) == {"mit", "unknown", "other"}  # shredfold's, the jsonl corpus's, DejaVu's
    info = {i["config_name"]: i for i in head["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in info["origami_mcq"]["splits"]} == {"mcq_assoc": 3, "mcq_causal": 3}
    assert "| protocol | `shredfold` |" in text and "DejaVuSans.ttf" in text and "SIL Open Font" not in text
    assert tiny_export.spec.read_text().strip() in text
    prov = json.loads((tiny_export.out / "shredfold.json").read_text())
    assert prov["shredfold"] and prov["spec"]["text"] == tiny_export.spec.read_text()
    plan, _ = plan_of(tiny_export)
    for s in plan.item_sets.values():
        assert s.key in text and all(k in text for k in s.item_keys)
    for rel, digest in prov["files"].items():
        assert sha256_file(tiny_export.out / rel) == digest
    shred = next(t for t in prov["tasks"] if t["task"] == "shred")
    assert shred["signatures"]["prompt"] == "v1" and any(k.startswith("text/table") for k in shred["signatures"])


def test_an_export_is_the_same_bytes_every_time(tiny_export: TinyExport, tmp_path: Path) -> None:
    again = tmp_path / "again"
    assert main(["export", str(again), "--spec", str(tiny_export.spec), "--results", str(tiny_export.results)]) == 0
    first = sorted(p.relative_to(tiny_export.out) for p in tiny_export.out.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second and len(first) == 6
    for rel in first:
        assert (tiny_export.out / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_without_build_a_missing_item_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_inputs(tmp_path / "fresh")
    out = tmp_path / "out"
    rc = main(["export", str(out), "--spec", str(spec), "--results", str(tmp_path / "fresh" / "results"), "--no-build"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "is not in" in err and "run Snakemake on the spec first" in err
    assert not out.exists() and not list(tmp_path.glob(".out.tmp-*"))  # nothing half-written


def test_an_export_never_replaces_a_users_files(tiny_export: TinyExport, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    args = ["--spec", str(tiny_export.spec), "--results", str(tiny_export.results)]
    assert main(["export", str(mine), *args]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["export", str(mine), *args, "--force"]) == 2
    assert "is not a shredfold export" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "keep me"
    # an earlier export is replaced with --force
    earlier = tmp_path / "earlier"
    assert main(["export", str(earlier), *args]) == 0
    (earlier / "stale.txt").write_text("from before")
    assert main(["export", str(earlier), *args, "--force"]) == 0
    assert not (earlier / "stale.txt").exists() and (earlier / "README.md").is_file()


def test_the_licences_follow_where_the_designs_come_from() -> None:
    from shredfold.origami_bench.design import Design
    from shredfold.origami_bench.flat_folder import manifest
    from shredfold.tasks.origamibench.common import design_licences

    def design(source: str) -> Design:
        return Design.model_construct(id=source, key="0" * 64, source=source, category="x")

    assert [lic.hub_id for lic in design_licences([design("procedural"), design("builtin")])] == ["mit"]
    flat = design_licences([design("flat_folder"), design("folder")])
    assert [lic.hub_id for lic in flat] == ["mit", "mit", "unknown"]
    assert manifest().commit in flat[1].what and flat[1].source.startswith("https://github.com/origamimagiro/flat-folder/")
