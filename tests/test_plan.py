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


def test_a_plan_file_keeps_what_each_set_needs_and_an_older_plan_file_still_loads(tmp_path):
    import json
    import shutil
    from pathlib import Path

    builtin = Path(__file__).resolve().parents[1] / "src" / "shredfold" / "origami_bench" / "builtin"
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(builtin / "book-fold.fold", folder / "book.fold")
    spec = f"name: p\norigami:\n  designs: {{builtin: false, procedural: 0, folder: {folder}}}\n  tasks: [fullstep]\nmodels: [origami-random]\n"
    plan = plan_of(tmp_path, spec)
    (check,) = [s for s in plan.item_sets.values() if not s.asked]  # the design's validation
    (target,) = [s for s in plan.item_sets.values() if s.asked]
    assert target.needs == (check.key,) and all(c.item_set is not check for c in plan.cells)
    rel = write_plan(plan, tmp_path)
    again = load_plan(tmp_path / rel)
    assert again.item_set(target.key).needs == (check.key,) and not again.item_set(check.key).asked
    doc = json.loads((tmp_path / rel).read_text())
    doc["format"] = 1  # as written before sets had needs
    for s in doc["sets"]:
        del s["needs"], s["asked"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = load_plan(tmp_path / "old.json")
    assert all(s.asked and not s.needs for s in old.item_sets.values())
