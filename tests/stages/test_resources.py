"""What the rules declare: memory that grows with what a job holds, and the machine's bound."""

from types import SimpleNamespace

import pytest

from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.stages import resources as res
from shredfold.store import Store
from shredfold.tasks.origamibench import resources as origami_res
from shredfold.tasks.shredbench import resources as shred_res

SPEC = """\
name: r
shred:
  domains: [news_en]
  granularities: [1, 16]
  documents_per_domain: 1
  render: {{width: {width}}}
  synthesis: {{mode: {mode}}}
{origami}models:
  - oracle
  - ocr-islands
  - origami-random
  - {{id: api, adapter: openai, base_url: "http://127.0.0.1:9/v1", model: m}}
"""
ORIGAMI = """origami:
  designs: {{builtin: true}}
  tasks: [fullstep]
  fullstep_targets: 1
  image_size: {size}
{clip}"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Store(tmp_path_factory.mktemp("store"))  # the design catalogue, planned once


@pytest.fixture
def plan(tmp_path, store):
    def make(width=1600, mode="flat", size=None, clip=""):
        origami = ORIGAMI.format(size=size, clip=clip) if size else ""
        path = tmp_path / f"s{width}{mode}{size}{bool(clip)}.yaml"
        path.write_text(SPEC.format(width=width, mode=mode, origami=origami))
        return make_plan(load_spec(path), store, write=True)

    return make


def by(plan, **labels):
    return next(s for s in plan.item_sets.values() if all(s.labels.get(k) == v for k, v in labels.items()))


def test_declarations_cover_the_fitted_peaks_with_a_margin(plan):
    p = plan(size=256)
    s16 = by(p, n=16)
    mpx, turned = shred_res.item_pixels(s16.items[0])
    assert 1.0 < mpx < 6.0 and turned > 2 * mpx  # a news page 1600 px wide, nearly square
    (a1, a2), (d1, d2) = shred_res.SHRED_SET_AREA, shred_res.SHRED_SET_TURNED
    fitted = shred_res.SHRED_SET_BASE_MB + (a1 + a2 / 16) * mpx + (d1 + d2 / 16) * turned
    assert fitted * res.MARGIN <= res.set_mem_mb(s16, p.spec) < fitted * res.MARGIN + 50
    cells = {(c.model.id, c.task, c.labels.get("n")): c for c in p.cells}
    assert res.query_mem_mb(cells["ocr-islands", "shred", 16], p.spec) >= (shred_res.OCR_QUERY_BASE_MB + shred_res.OCR_QUERY_PER_MPX * mpx) * res.MARGIN
    assert res.query_mem_mb(cells["api", "shred", 16], p.spec) >= res.HTTP_QUERY_BASE_MB * res.MARGIN
    assert res.query_mem_mb(cells["origami-random", "origami_fullstep", None], p.spec) >= origami_res.ORIGAMI_AGENT_MB * res.MARGIN
    assert all(res.score_mem_mb(c, p.spec) >= shred_res.SCORE_MB * res.MARGIN for c in p.cells)
    assert all(res.score_threads(c, p.spec) == 1 for c in p.cells)  # no SS: one thread
    assert all(v % 50 == 0 for v in (res.set_mem_mb(s16, p.spec), res.query_mem_mb(p.cells[0], p.spec)))


def test_memory_grows_with_the_page_blender_and_the_pictures(plan):
    small, big, blender = plan(), plan(width=3200), plan(mode="blender")
    assert res.set_mem_mb(by(big, n=1), big.spec) > res.set_mem_mb(by(big, n=16), big.spec) > res.set_mem_mb(by(small, n=16), small.spec)
    assert res.set_mem_mb(by(blender, n=16), blender.spec) > res.set_mem_mb(by(small, n=16), small.spec)
    ocr = lambda p, n: next(c for c in p.cells if c.model.id == "ocr-islands" and c.labels["n"] == n)  # noqa: E731
    assert res.query_mem_mb(ocr(big, 16), big.spec) > res.query_mem_mb(ocr(small, 16), small.spec)
    origami, larger = plan(size=256), plan(size=512)
    assert res.set_mem_mb(by(larger, task="fullstep"), larger.spec) > res.set_mem_mb(by(origami, task="fullstep"), origami.spec)


def test_ss_scoring_declares_torch_and_its_threads(plan):
    p = plan(size=256, clip="  clip: {model: ViT-B-32, pretrained: openai}\n")
    full = [c for c in p.cells if c.task == "origami_fullstep"]
    shred = [c for c in p.cells if c.task == "shred"]
    assert full and all(res.score_mem_mb(c, p.spec) >= origami_res.SS_SCORE_MB * res.MARGIN for c in full)
    assert all(res.score_threads(c, p.spec) == origami_res.SS_THREADS for c in full)
    assert all(res.score_threads(c, p.spec) == 1 for c in shred)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"memory.max": "max\n", "memory.current": "100"}, None),  # v2, no limit
        ({"memory.max": str(4 * 2**30), "memory.current": str(2**30)}, 3072.0),  # v2
        ({"memory/memory.limit_in_bytes": str(2**31), "memory/memory.usage_in_bytes": str(2**29)}, 1536.0),  # v1
        ({"memory/memory.limit_in_bytes": "9223372036854771712", "memory/memory.usage_in_bytes": "1"}, None),  # v1, none
        ({}, None),
    ],
)
def test_the_cgroup_limit_is_read_from_v1_or_v2(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert res.cgroup_free_mb(tmp_path) == expected


def test_the_bound_is_what_the_machine_has_free_less_a_reserve(monkeypatch):
    import psutil

    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=8 * 2**30))
    monkeypatch.setattr(res, "cgroup_free_mb", lambda: None)
    assert res.machine_mem_mb() == 8192 - res.RESERVE_MB
    monkeypatch.setattr(res, "cgroup_free_mb", lambda: 2048.0)
    assert res.machine_mem_mb() == 2048 - res.RESERVE_MB
    monkeypatch.setattr(res, "cgroup_free_mb", lambda: 100.0)
    assert res.machine_mem_mb() == 512  # a job must be able to start at all


def test_a_design_validation_declares_what_its_solver_may_take_in_its_time_and_a_limit_leaves_it_whole(tmp_path):
    import shutil
    from pathlib import Path

    from shredfold.plan import with_limit

    builtin = Path(res.__file__).resolve().parents[1] / "origami_bench" / "builtin"
    folder = tmp_path / "designs"
    folder.mkdir()
    for name in ("waterbomb-base.fold", "preliminary-base.fold"):
        shutil.copy(builtin / name, folder / name)
    declared = {}
    for timeout in (10, 60):
        spec = tmp_path / f"s{timeout}.yaml"
        spec.write_text(f"name: v\norigami:\n  designs: {{builtin: false, procedural: 0, folder: {folder}, "
                        f"validate_timeout_s: {timeout}}}\n  tasks: [fullstep]\nmodels: [origami-random]\n")  # fmt: skip
        full = make_plan(load_spec(spec))
        checks = [s for s in full.item_sets.values() if not s.asked]
        assert len(checks) == 2
        declared[timeout] = {res.set_mem_mb(s, full.spec) for s in checks}
        assert declared[timeout] == {res._mb(origami_res.VALIDATE_BASE_MB + origami_res.VALIDATE_PER_S * timeout)}
        # a quick run cuts the target sets, never a validation: its key is what they need
        quick = make_plan(with_limit(load_spec(spec), 1))
        assert [s for s in quick.item_sets.values() if not s.asked] == checks
        cut = [s for s in quick.item_sets.values() if s.asked]
        assert cut and {k for s in cut for k in s.needs} <= {s.key for s in checks}
    assert max(declared[60]) >= 5716 * res.MARGIN  # Shrimp v2's peak in its 60 s, measured
    assert max(declared[10]) < max(declared[60])
