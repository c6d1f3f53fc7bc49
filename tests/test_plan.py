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
