"""`shredfold plan SPEC --cost`: the bill of a plan, per model, before any call — figures
checked against hand computation for every image rule; built-ins free; no sample built."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
import yaml
from PIL import Image

from shredfold.cli import main
from shredfold.cost import estimate
from shredfold.models.accounting import text_tokens
from shredfold.origami_bench.prompts import mcq_request
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.shred.formats import COMPOSITE_FILE
from shredfold.shred.prompts import build_request
from shredfold.shred.render import page_size
from shredfold.shred.sample_folder import SAMPLE_STAGE
from shredfold.store import Store
from shredfold.tasks.origamibench.bill import MCQ_STEP
from shredfold.tasks.shredbench.bill import COMPOSITE_AREA, PIECE_AREA
from tests.models.samples import shared_samples

PIECES = [(1000, 700), (2400, 1800)]  # the second is sent at 1600 × 1200 (max_side 1600)
COMPOSITE = (3000, 2000)  # sent at 1600 × 1067
PRICE_IN, PRICE_OUT, MAX_TOKENS = 2.0, 8.0, 1000

# Image tokens of the two pieces as sent, by hand, for each rule:
RULES = {
    # OpenAI tiles (85 + 170/tile): 1000×700 is 2×2 tiles; 1600×1200 has its short side cut
    # to 768 (1024×768): 2×2 tiles. 765 each.
    "tiles": ({"rule": "openai-tiles"}, "high", 765 + 765),
    "tiles-low": ({"rule": "openai-tiles"}, "low", 85 + 85),
    # OpenAI patches × 1.62: 32×22 = 704 patches → 1141; 50×38 = 1900 > 1536, shrunk so the
    # height fits 33 patches (r = 0.88): 44×33 = 1452 → 2353.
    "patches": ({"rule": "openai-patches", "multiplier": 1.62}, "high", 1141 + 2353),
    # Qwen (28 px, ≤ 1280 blocks, +2): 700×1008 → 25×36 = 900 + 2; 1204×1596 is over the cap:
    # beta = √(1920000/1003520) = 1.3832, sides floor(1200/β/28) = 30 and floor(1600/β/28) = 41.
    "qwen": ({"rule": "qwen-patches"}, "high", 902 + 1232),
    # Gemini: 2×1 and 3×2 tiles of 768 px at 258.
    "gemini": ({"rule": "gemini"}, "high", 2 * 258 + 6 * 258),
    "gemini-3": ({"rule": "gemini", "tokens": 1120, "tile": None}, "high", 2 * 1120),
    # One token per 750 px: ⌈700000/750⌉ = 934 and 1920000/750 = 2560.
    "per-pixel": ({"rule": "per-pixel", "pixels_per_token": 750}, "high", 934 + 2560),
    # No rule: 28-px blocks, 36×25 and 58×43.
    "none": (None, "high", 900 + 2494),
}


def png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 190, 170)).save(buf, format="PNG")
    return buf.getvalue()


def model(name: str, rule: dict | None, detail: str, mode: str = "pieces") -> dict:
    return {
        "id": name, "adapter": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
        "price_input_per_mtok": PRICE_IN, "price_output_per_mtok": PRICE_OUT,
        "decoding": {"max_tokens": MAX_TOKENS}, "images": {"mode": mode, "detail": detail, "max_side": 1600},
        **({"image_tokens": rule} if rule else {}),
    }  # fmt: skip


def write_spec(tmp_path: Path, models: list, **extra: object) -> Path:
    spec = {"name": "bill", "shred": {"domains": ["news_en"], "granularities": [2], "documents_per_domain": 1},
            "models": models, **extra}  # fmt: skip
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Store]:
    """A spec with one model per rule (and the oracle), and its one sample in the store, made
    by hand with pieces and a composite of known sizes."""
    models = ["oracle", *(model(n, r, d) for n, (r, d, _) in RULES.items()),
              model("composite", {"rule": "openai-tiles"}, "high", mode="composite")]  # fmt: skip
    spec = write_spec(tmp_path, models)
    store = Store(tmp_path / "results" / "store")
    (item,) = make_plan(load_spec(spec)).sets_of("shred")[0].items
    with store.writing(SAMPLE_STAGE, item.key) as tmp:
        (tmp / "pieces").mkdir()
        for k, (w, h) in enumerate(PIECES):
            (tmp / "pieces" / f"{k:02d}.png").write_bytes(png(w, h))
        (tmp / COMPOSITE_FILE).write_bytes(b"not read")
        meta = {"n": 2, "piece_files": ["pieces/00.png", "pieces/01.png"],
                "composite": {"width": COMPOSITE[0], "height": COMPOSITE[1]}}  # fmt: skip
        (tmp / "sample.json").write_text(json.dumps(meta))
    return spec, store


def test_each_image_rule_prices_the_stored_pieces_as_computed_by_hand(stored) -> None:
    spec, store = stored
    plan = make_plan(load_spec(spec))
    (item,) = plan.sets_of("shred")[0].items
    report = {m.model: m for m in estimate(plan, store).models}
    prompt = build_request(kind="prose", lang="en", n=2, images=[b"", b""], composite=False, item=None).text
    text = math.ceil(len(prompt) / 4)  # the prompt is ASCII: four characters a token
    answer = text_tokens(item.doc.text)  # typical: the transcription is about the document
    for name, (_, _, image) in RULES.items():
        m = report[name]
        assert (m.requests, m.images, m.pixels) == (1, 2, 1000 * 700 + 1600 * 1200), name
        assert (m.text_tokens, m.image_tokens) == (text, image), name
        assert m.usd_max == pytest.approx(((text + image) * PRICE_IN + MAX_TOKENS * PRICE_OUT) / 1e6), name
        assert m.usd_typical == pytest.approx(((text + image) * PRICE_IN + answer * PRICE_OUT) / 1e6), name
    # Composite mode sends the table top instead: 1600×1067, short side to 768 → 3×2 tiles.
    assert (report["composite"].images, report["composite"].image_tokens) == (1, 85 + 6 * 170)


def test_built_ins_cost_nothing(stored) -> None:
    spec, store = stored
    oracle = next(m for m in estimate(make_plan(load_spec(spec)), store).models if m.model == "oracle")
    assert not oracle.endpoint and oracle.requests == 1
    assert (oracle.images, oracle.input_tokens, oracle.usd_typical, oracle.usd_max) == (0, 0, 0.0, 0.0)


def test_without_stored_samples_sizes_come_from_the_page_geometry(tmp_path: Path) -> None:
    plan = make_plan(load_spec(write_spec(tmp_path, [model("api", None, "high") | {"images": {"max_side": 8192}}])))
    (item,) = plan.sets_of("shred")[0].items
    report = estimate(plan, None)
    w, h = page_size(item.doc, item.render)
    side = round(math.sqrt(PIECE_AREA * w * h / 2))
    (api,) = report.models
    assert (api.images, api.pixels) == (2, 2 * side * side)
    assert any("0 of 1 samples read from the store, 1 estimated from page geometry" in n for n in report.notes)
    assert COMPOSITE_AREA > 1  # the composite estimate is stated in the same note
    assert any(f"{COMPOSITE_AREA:g} × page area" in n for n in report.notes)


def test_stored_samples_give_their_real_sizes_and_nothing_is_written(tmp_path_factory, tmp_path) -> None:
    samples = shared_samples(tmp_path_factory)
    store = Store(samples / "results" / "store")
    spec = tmp_path / "spec.yaml"
    spec.write_text((samples / "spec.yaml").read_text().replace("models: [oracle]", "models: [api]"))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "api.yaml").write_text(yaml.safe_dump(model("api", None, "high") | {"images": {"max_side": 8192}}))
    plan = make_plan(load_spec(spec))
    before = sorted(p.relative_to(samples) for p in samples.rglob("*"))
    report = estimate(plan, store)
    real = 0
    for s in plan.sets_of("shred"):
        for item in s.items:
            meta = json.loads(store.read_text(SAMPLE_STAGE, item.key, "sample.json"))
            for name in meta["piece_files"]:
                w, h = Image.open(io.BytesIO(store.read_bytes(SAMPLE_STAGE, item.key, name))).size
                real += w * h
    assert report.models[0].pixels == real
    assert any("4 of 4 samples read from the store, 0 estimated" in n for n in report.notes)
    assert sorted(p.relative_to(samples) for p in samples.rglob("*")) == before


def test_origami_requests_carry_image_size_pictures_and_full_step_is_an_upper_bound(tmp_path: Path) -> None:
    origami = {"designs": {"builtin": True, "procedural": 0}, "tasks": ["mcq_assoc", "fullstep"],
               "mcq_items": 3, "step_limit": 4, "image_size": 256}  # fmt: skip
    spec = {"name": "fold", "origami": origami, "models": [model("api", {"rule": "per-pixel"}, "high")]}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    plan = make_plan(load_spec(path))
    mcq = sum(len(s.items) for s in plan.sets_of("origami_mcq"))
    targets = sum(len(s.items) for s in plan.sets_of("origami_fullstep"))
    report = estimate(plan, None)
    (api,) = report.models
    assert api.requests == mcq + 4 * targets
    assert api.images == 5 * mcq + 3 * 4 * targets
    assert api.pixels == api.images * 256 * 256
    assert api.image_tokens == api.images * math.ceil(256 * 256 / 784)
    mcq_text = text_tokens(mcq_request(b"", [b""] * 4, item=None).text)
    assert api.text_tokens > mcq * mcq_text  # full-step turns add their own texts
    assert any("4 turns per episode (step_limit), an upper bound" in n for n in report.notes)


def test_the_command_prints_a_row_per_model_a_total_and_its_rules(stored, capsys) -> None:
    spec, store = stored
    results = store.root.parent
    assert main(["plan", str(spec), "--cost", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line and line.split()[0] in
            {"oracle", "tiles", "total"}}  # fmt: skip
    assert rows["oracle"][1:3] == ["(built-in)", "1"] and rows["oracle"][-4:-2] == ["0.0000", "0.0000"]
    assert rows["total"][1] == str(1 + len(RULES) + 1)
    assert "tiles: openai-tiles (base_tokens=85" in out and "max = decoding.max_tokens" in out
    assert main(["plan", str(spec), "--cost", "--json", "--results", str(results)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["total"]["requests"] == 1 + len(RULES) + 1
    assert doc["total"]["usd_max"] == pytest.approx(sum(m["usd_max"] for m in doc["models"]))
    assert not (store.root / ".spend").exists()  # planning wrote nothing


def test_an_outside_set_is_priced_at_the_sizes_of_its_files(tmp_path: Path) -> None:
    from tests.shred.outside_sets import folder_set

    folder_set(tmp_path / "set")
    spec = {"name": "bill", "shred": {"samples": {"folder": "set"}}, "models": [model("api", None, "high") | {"images": {"max_side": 8192}}]}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    report = estimate(make_plan(load_spec(tmp_path / "spec.yaml")), None)
    (api,) = report.models
    # two 240x90 pieces (news_en), and the 400x300 photograph the pieces-mode model is shown
    assert (api.requests, api.images, api.pixels) == (2, 3, 2 * 240 * 90 + 400 * 300)


@pytest.mark.parametrize("variant", ["mcq_assoc", "mcq_causal"])
def test_a_causal_mcq_request_is_billed_with_the_step_its_prompt_names(tmp_path: Path, variant: str) -> None:
    origami = {"designs": {"builtin": True, "procedural": 0}, "tasks": [variant], "mcq_items": 3, "image_size": 256}
    spec = {"name": "fold", "origami": origami, "models": [model("api", {"rule": "per-pixel"}, "high")]}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    plan = make_plan(load_spec(path))
    mcq = sum(len(s.items) for s in plan.sets_of("origami_mcq"))
    (api,) = estimate(plan, None).models
    unnamed = text_tokens(mcq_request(b"", [b""] * 4, item=None).text)
    named = text_tokens(mcq_request(b"", [b""] * 4, item=None, step=MCQ_STEP).text)
    assert named > unnamed
    assert api.text_tokens == mcq * (named if variant == "mcq_causal" else unnamed)
