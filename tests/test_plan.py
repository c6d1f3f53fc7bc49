import pytest

from shredfold.plan import load_plan, make_plan, write_plan
from shredfold.resolve import load_spec

SPEC = """\
name: p
shred:
  domains: [news_en, table]
  granularities: [1, 8]
  documents_per_domain: 2
models: [oracle, ocr-islands]
"""


def plan_of(tmp_path, text, name="s.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return make_plan(load_spec(p))


def test_grid_is_sets_by_domain_and_n_and_cells_by_model(tmp_path):
    plan = plan_of(tmp_path, SPEC)
    assert sorted((s.labels["domain"], s.labels["n"], len(s.items)) for s in plan.item_sets.values()) == [
        ("news_en", 1, 2), ("news_en", 8, 2), ("table", 1, 2), ("table", 8, 2)
    ]
    assert len(plan.cells) == 8
    assert {c.model.id for c in plan.cells} == {"oracle", "ocr-islands"}
    cell = plan.cells[0]
    assert cell.query_key in cell.query_path and cell.score_key in cell.score_path
    assert plan.cell(cell.score_key, cell.score_where) is cell


def test_keys_are_stable_across_loads(tmp_path):
    a = plan_of(tmp_path, SPEC, "a.yaml").summary()
    b = plan_of(tmp_path, SPEC, "b.yaml").summary()
    assert a["sets"] == b["sets"] and a["cells"] == b["cells"]


def test_render_override_changes_only_that_domain(tmp_path):
    base = plan_of(tmp_path, SPEC, "a.yaml")
    changed = plan_of(
        tmp_path,
        SPEC.replace("models:", "  render_by_domain:\n    table:\n      texture: 0.1\nmodels:"),
        "b.yaml",
    )
    old = {(s.labels["domain"], s.labels["n"]): s.key for s in base.item_sets.values()}
    new = {(s.labels["domain"], s.labels["n"]): s.key for s in changed.item_sets.values()}
    assert [k for k in old if old[k] != new[k]] == [("table", 1), ("table", 8)]


def test_adding_a_model_keeps_other_cells(tmp_path):
    base = plan_of(tmp_path, SPEC, "a.yaml")
    more = plan_of(tmp_path, SPEC.replace("[oracle, ocr-islands]", "[oracle, ocr-islands, {id: o2, adapter: oracle}]"), "b.yaml")
    assert {c.score_path for c in base.cells} < {c.score_path for c in more.cells}
    assert len(more.cells) - len(base.cells) == 4


def test_seed_changes_every_sample(tmp_path):
    a = plan_of(tmp_path, SPEC, "a.yaml")
    b = plan_of(tmp_path, "seed: 9\n" + SPEC, "b.yaml")
    assert not set(a.item_sets) & set(b.item_sets)


def test_a_plan_file_gives_jobs_the_same_plan(tmp_path):
    plan = plan_of(tmp_path, SPEC)
    rel = write_plan(plan, tmp_path)
    assert rel == write_plan(plan, tmp_path)  # content-addressed: one file per plan
    again = load_plan(tmp_path / rel)
    assert again.summary() == plan.summary()
    cell = plan.cells[-1]
    assert again.cell(cell.query_key, cell.query_where).query_path == cell.query_path
    assert again.item_set(cell.item_set.key).items == cell.item_set.items


IMAGING = ["PIL", "bpy", "cv2", "openvino", "rapidocr_onnxruntime", "skimage", "torch"]
ENGINE = ["pysat", "scipy", "shapely"]  # the layer solver's


def test_planning_writes_nothing_and_loads_no_imaging_library(tmp_path):
    # built-in bases without a fold sequence get their MCQ steps from a crease order,
    # searched with the layer solver at plan time (like design validation), never drawn
    designs, loaded = "{builtin: true, procedural: 0}", ENGINE
    import subprocess
    import sys

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC + f"origami:\n  designs: {designs}\n  mcq_items: 4\n")
    code = (
        "import sys\n"
        "from shredfold.plan import make_plan\n"
        "from shredfold.resolve import load_spec\n"
        f"make_plan(load_spec({str(spec)!r}))\n"
        f"heavy = set({IMAGING + ENGINE + ['httpx', 'duckdb', 'pyarrow']!r})\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(loaded)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


# ---------------------------------------------------------------- quick runs (limit)


def test_a_limited_plan_asks_the_first_items_of_each_cell_under_their_own_keys(tmp_path):
    from shredfold.plan import with_limit

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("documents_per_domain: 2", "documents_per_domain: 3"))
    full = make_plan(load_spec(spec))
    quick = make_plan(with_limit(load_spec(spec), 2))
    assert len(quick.item_sets) == len(full.item_sets) and len(quick.cells) == len(full.cells)
    by_labels = {tuple(s.labels.values()): s for s in full.item_sets.values()}
    for s in quick.item_sets.values():
        whole = by_labels[tuple(s.labels.values())]
        # the same items (same sample keys, so the same requests and cached answers), a prefix
        assert s.item_keys == whole.item_keys[:2] and s.items == whole.items[:2]
        assert s.limit == 2 and s.key != whole.key
        assert s.where == f"first-2/{whole.where}" and s.path.startswith("results/sets/first-2/")
    full_paths = {c.score_path for c in full.cells} | {c.query_path for c in full.cells}
    for c in quick.cells:
        assert c.query_path.startswith("results/cells/first-2/") and c.score_path.startswith("results/cells/first-2/")
        assert c.query_path not in full_paths and c.score_path not in full_paths
        assert c.name.endswith("(first 2)")
        assert quick.cell(c.score_key, c.score_where) is c
    assert quick.limits() == {"shred": 2} and full.limits() == {}


def test_a_limit_no_smaller_than_a_set_leaves_it_the_full_set(tmp_path):
    from shredfold.plan import with_limit

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)  # two documents a set
    full = make_plan(load_spec(spec))
    same = make_plan(with_limit(load_spec(spec), 2))
    assert same.summary()["sets"] == full.summary()["sets"]
    assert [(c.query_path, c.score_path, c.name) for c in same.cells] == [
        (c.query_path, c.score_path, c.name) for c in full.cells
    ]
    assert same.limits() == {}


def test_the_spec_limits_each_benchmark_and_config_overrides_both(tmp_path):
    from shredfold.plan import limit_of, parse_limit, with_limit

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("documents_per_domain: 2", "documents_per_domain: 3\n  limit: 1"))
    resolved = load_spec(spec)
    assert limit_of(resolved, "shred") == 1 and limit_of(resolved, "origami") is None
    assert all(len(s.items) == 1 for s in make_plan(resolved).item_sets.values())
    assert limit_of(with_limit(resolved, 2), "shred") == 2
    assert with_limit(resolved, None) is resolved
    assert parse_limit(None) is None and parse_limit("") is None and parse_limit(3) == 3 and parse_limit("4") == 4
    for bad in (0, -1, "x", 2.5, True):
        with pytest.raises(ValueError, match="limit="):
            parse_limit(bad)


def test_a_limited_plan_survives_its_plan_file(tmp_path):
    from shredfold.plan import with_limit

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("documents_per_domain: 2", "documents_per_domain: 3"))
    quick = make_plan(with_limit(load_spec(spec), 2))
    loaded = load_plan(tmp_path / write_plan(quick, tmp_path))
    assert loaded.summary() == quick.summary()
    assert loaded.limits() == {"shred": 2}
    assert [c.name for c in loaded.cells] == [c.name for c in quick.cells]


def test_origami_limit_cuts_each_cell_to_its_first_items_under_their_keys(tmp_path):
    from shredfold.plan import limit_of
    from shredfold.store import Store

    spec = tmp_path / "s.yaml"
    spec.write_text("name: o\norigami:\n  designs: {builtin: true}\n  tasks: [mcq_assoc, fullstep]\n"
                    "  mcq_items: 4\n  fullstep_targets: 3\n  limit: 1\nmodels: [origami-random]\n")  # fmt: skip
    resolved = load_spec(spec)
    assert limit_of(resolved, "origami") == 1 and limit_of(resolved, "shred") is None
    store = Store(tmp_path / "store")  # the design catalogue, read once for both plans
    quick = make_plan(resolved, store)
    full = make_plan(resolved.model_copy(update={"spec": resolved.spec.model_copy(update={
        "origami": resolved.spec.origami.model_copy(update={"limit": None})})}), store)  # fmt: skip
    whole = {s.where: s for s in full.item_sets.values()}
    cut = [s for s in quick.item_sets.values() if s.limit is not None]
    assert {s.task for s in cut} == {"origami_mcq", "origami_fullstep"}
    for s in quick.item_sets.values():
        base = whole[s.where.removeprefix("first-1/")]
        assert s.items == base.items[:1]
        assert (s.key == base.key) == (len(base.items) <= 1) == (s.limit is None)
    assert quick.limits() == {"origami": 1} and full.limits() == {}
    assert all(c.name.endswith("(first 1)") == (c.item_set.limit is not None) for c in quick.cells)


def test_a_plan_file_records_no_absolute_path_and_its_jobs_still_find_every_file(tmp_path, monkeypatch):
    # A published plan (or release) must not carry its author's home directory or machine
    # layout: the spec is recorded relative to the working directory, what it names
    # relative to the spec, an outside set's files relative to the set's folder.
    import json

    from shredfold.shred.sample_folder import SAMPLE_STAGE
    from shredfold.stages.build import run_set
    from shredfold.store import Store
    from tests.shred.outside_sets import folder_set

    work, data = tmp_path / "project", tmp_path / "data"
    (work / "specs").mkdir(parents=True)
    folder_set(data / "shreds")
    (work / "specs" / "o.yaml").write_text("name: o\nshred:\n  samples:\n    folder: ../../data/shreds\nmodels: [oracle]\n")
    monkeypatch.chdir(work)
    plan = make_plan(load_spec("specs/o.yaml"))
    fake_home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(fake_home))
    rel = write_plan(plan, work)
    text = (work / rel).read_text()
    assert str(tmp_path) not in text and '"/' not in text, text[:2000]
    spec = json.loads(text)["spec"]
    assert spec["path"] == "specs/o.yaml" and spec["spec"]["shred"]["samples"]["folder"] == "../../data/shreds"
    files = [f["path"] for s in json.loads(text)["sets"] for i in s["items"] for f in [*i["outside"]["pieces"], i["outside"]["truth"]]]
    assert files and all(not f.startswith("/") for f in files) and "news_en/2/memo/piece_1.png" in files

    again = load_plan(work / rel)  # as a job in the working directory reads it
    assert again.spec.path == plan.spec.path and again.spec.spec == plan.spec.spec
    store = Store(work / "results" / "store")
    for s in again.item_sets.values():  # the set job stores the samples from the set's files
        run_set(again, s.key, str(work / s.path), store)
    assert sorted(store.keys(SAMPLE_STAGE)) == sorted(i.key for s in plan.item_sets.values() for i in s.items)

    # under the home directory, and outside the working directory: "~/…"
    inside_home = fake_home / "corpus.jsonl"
    fake_home.mkdir()
    inside_home.write_text('{"id": "a", "domain": "news_en", "text": "Gulls."}\n')
    (work / "specs" / "h.yaml").write_text(f"name: h\nshred:\n  domains: [news_en]\n  granularities: [1]\n"
                                           f"  documents_per_domain: 1\n  corpus:\n    jsonl: {inside_home}\nmodels: [oracle]\n")
    text = (work / write_plan(make_plan(load_spec("specs/h.yaml")), work)).read_text()
    assert '"~/corpus.jsonl"' in text and str(tmp_path) not in text
    assert load_plan(work / write_plan(make_plan(load_spec("specs/h.yaml")), work)).spec.spec.shred.corpus.jsonl == inside_home


def test_a_plan_file_keeps_what_each_set_needs_and_an_older_plan_file_still_loads(tmp_path, monkeypatch):
    import json
    import shutil
    from pathlib import Path

    import pytest

    builtin = Path(__file__).resolve().parents[1] / "src" / "shredfold" / "origami_bench" / "builtin"
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(builtin / "book-fold.fold", folder / "book.fold")
    spec = f"name: p\norigami:\n  designs: {{builtin: false, procedural: 0, folder: {folder}}}\n  tasks: [fullstep]\nmodels: [origami-random]\n"
    monkeypatch.chdir(tmp_path)  # the working directory, as a job's
    plan = plan_of(tmp_path, spec)
    (check,) = [s for s in plan.item_sets.values() if not s.asked]  # the design's validation
    (target,) = [s for s in plan.item_sets.values() if s.asked]
    assert target.needs == (check.key,) and all(c.item_set is not check for c in plan.cells)
    rel = write_plan(plan, tmp_path)
    again = load_plan(tmp_path / rel)
    assert again.item_set(target.key).needs == (check.key,) and not again.item_set(check.key).asked
    doc = json.loads((tmp_path / rel).read_text())
    (item,) = target.items
    (recorded,) = [s for s in doc["sets"] if s["key"] == target.key]
    # the design's file named within the spec's design folder (a plan records no absolute path)
    assert recorded["items"][0]["design"]["origin"] == {"root": "folder", "path": "book.fold", "sha256": item.design.origin.sha256}
    assert str(tmp_path) not in (tmp_path / rel).read_text() and str(tmp_path.resolve()) not in (tmp_path / rel).read_text()
    assert Path(again.item_set(target.key).items[0].design.origin.path).resolve() == (folder / "book.fold").resolve()

    # format 1, as written before sets had needs (and designs their files): a plan without
    # OrigamiBench items still loads; one with them is refused, saying why
    doc["format"] = 1
    for s in doc["sets"]:
        del s["needs"], s["asked"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"old.json: plan format 1 \(OrigamiBench designs as segments; format 2 names their files\): plan again"):
        load_plan(tmp_path / "old.json")
    shred = json.loads((tmp_path / write_plan(plan_of(tmp_path, SPEC, "shred.yaml"), tmp_path)).read_text())
    shred["format"] = 1
    for s in shred["sets"]:
        del s["needs"], s["asked"]
    (tmp_path / "old-shred.json").write_text(json.dumps(shred))
    old = load_plan(tmp_path / "old-shred.json")
    assert len(old.item_sets) == 4 and all(s.asked and not s.needs for s in old.item_sets.values())


def test_a_cell_whose_latest_manifest_is_broken_is_queried_again_and_said_so(tmp_path):
    from shredfold.plan import resolve_attempts
    from shredfold.tasks.manifest import ManifestRow, QueryManifest, write_manifest

    plan = plan_of(tmp_path, SPEC)
    done, broken = plan.cells[:2]
    rows = [ManifestRow(item=k, response=k, cached=True, error=None) for k in done.item_set.item_keys]
    write_manifest(tmp_path / done.query_path, QueryManifest.of(done, rows, requests=0))
    (tmp_path / broken.query_path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / broken.query_path).write_text('{"cell": "edited by hand", "items": []')
    notes: list[str] = []
    resolved = resolve_attempts(plan, tmp_path, note=notes.append)
    assert [c.attempt for c in resolved.cells[:3]] == [0, 1, 0]
    assert notes == [
        f"{tmp_path / broken.query_path}: query manifest is not JSON: Expecting ',' delimiter (line 1, "
        "column 39); the cell is queried again at a new attempt (answers from the response cache) "
        "and this file moved to results/superseded/"
    ]


def test_an_adapter_naming_a_benchmark_no_task_runs_stops_the_plan(tmp_path, monkeypatch):
    from shredfold.models import adapter as adapters
    from shredfold.models import registry
    from shredfold.models.adapter import AdapterBase, adapter

    registry.adapters()  # loaded first, so the registry the test leaves behind is whole
    monkeypatch.setattr(adapters, "_ADAPTERS", dict(adapters._ADAPTERS))
    plan = plan_of(tmp_path, SPEC)  # an endpoint adapter declares none: it answers every benchmark

    @adapter("misspelt", benchmarks=("shred", "shreds"))
    class Misspelt(AdapterBase):
        pass

    with pytest.raises(ValueError, match="'misspelt' names benchmarks no task runs: shreds"):
        plan_of(tmp_path, SPEC)
    assert {c.model.id for c in plan.cells} == {"oracle", "ocr-islands"}


def test_an_endpoint_model_answers_every_benchmark(tmp_path):
    from shredfold.models import registry
    from shredfold.spec import ModelConfig
    from shredfold.tasks.registry import tasks

    endpoint = ModelConfig(id="m", adapter="openai", model="x", base_url="http://127.0.0.1:1/v1")
    assert all(registry.answers(endpoint, t.benchmark) for t in tasks())
    assert not registry.answers(registry.builtin_config("oracle"), "origami")
