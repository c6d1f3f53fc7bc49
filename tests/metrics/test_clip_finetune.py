"""`shredfold clip finetune`: a tiny randomly initialised open_clip model fine-tuned for a
few steps on CPU on the pictures of a spec's designs (built-in and procedural, drawn by the
benchmark), captioned by category; the folder it writes (weights, config, recipe) is what
SS then loads, named by the weights' SHA-256."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from shredfold.cli import main
from shredfold.metrics import clip_weights as cw
from shredfold.metrics.clip import ClipWeightsError, load_clip, weights_id
from shredfold.metrics.clip_finetune import FinetuneError, Hyper, Picture, finetune
from shredfold.origami_bench.clip_images import design_pictures
from shredfold.resolve import load_spec
from shredfold.spec import ClipSettings
from shredfold.store import sha256_bytes, sha256_file
from tests.metrics.tiny_clip import NAME, tiny_weights

pytest.importorskip("open_clip")
STEPS = 6
SPEC = """\
name: clip-finetune
seed: 3
origami:
  designs:
    builtin: true
    procedural: 3
    procedural_folds: [1, 2]
  tasks: [fullstep]
  image_size: 64
  clip:
    model: {config}
    checkpoint: {checkpoint}
models: [origami-random]
"""


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The command run once: a tiny base, a spec naming it, the fine-tuned folder."""
    work = tmp_path_factory.mktemp("finetune")
    config, checkpoint = tiny_weights(work)
    spec = work / "spec.yaml"
    spec.write_text(SPEC.format(config=config, checkpoint=checkpoint))
    # every picture in every step, as drawn, at a small rate: plain descent, so the loss over
    # the pictures must fall (random batches of a random tiny model only wander)
    args = ["clip", "finetune", str(spec), "--out", str(work / "tuned"), "--steps", str(STEPS),
            "--batch-size", "16", "--lr", "0.0001", "--no-symmetries", "--results", str(work / "results")]  # fmt: skip
    assert main(args) == 0
    recipe = json.loads((work / "tuned" / cw.RECIPE).read_text())
    return {"work": work, "spec": spec, "config": config, "checkpoint": checkpoint, "out": work / "tuned", "recipe": recipe}


def test_the_folder_holds_weights_config_and_a_recipe_of_how_they_were_made(tuned: dict[str, Any]) -> None:
    out, recipe = tuned["out"], tuned["recipe"]
    assert sorted(p.name for p in out.iterdir()) == sorted([cw.CONFIG, cw.WEIGHTS, cw.RECIPE])
    w = recipe["weights"]
    assert w["sha256"] == sha256_file(out / cw.WEIGHTS) and w["size"] == (out / cw.WEIGHTS).stat().st_size
    # the base: the spec's tiny checkpoint, by the hash of its bytes
    assert recipe["model"] == NAME
    assert recipe["base"]["weights"] == f"{NAME}/checkpoint {sha256_file(tuned['checkpoint'])[:12]}"
    assert recipe["base"]["id"]["checkpoint"] == sha256_file(tuned["checkpoint"])
    # the data: every design of the spec, drawn by the benchmark, captioned by its category
    pictures = design_pictures(load_spec(tuned["spec"]).spec.origami, 3)
    assert len(pictures) == 13 + 3
    assert [(i["key"], i["design"], i["category"], i["sha256"]) for i in recipe["data"]["items"]] == [
        (p.key, p.design, p.category, sha256_bytes(p.png)) for p in pictures
    ]
    assert recipe["data"]["categories"] == ["geometry", "procedural"]
    assert recipe["data"]["captions"] == ["origami: geometry", "origami: procedural"]
    assert recipe["hyper"]["steps"] == STEPS and recipe["hyper"]["lr"] == 0.0001
    assert recipe["hyper"]["batch_size_used"] == 16 and not recipe["hyper"]["symmetries"]
    assert recipe["versions"]["torch"] == "2.14.1" and recipe["versions"]["open_clip_torch"] == "3.3.0"
    t = recipe["training"]
    assert len(t["loss"]) == STEPS and all(x > 0 for x in t["loss"])
    assert t["set_loss_after"] < t["set_loss_before"]  # it learned something about the captions
    config = json.loads((out / cw.CONFIG).read_text())
    assert config["model_cfg"] == json.loads(tuned["config"].read_text())
    assert config["preprocess_cfg"]["size"] == [32, 32] or config["preprocess_cfg"]["size"] == 32


def test_ss_loads_the_fine_tuned_folder_and_names_it_by_its_hash(tuned: dict[str, Any]) -> None:
    import open_clip
    import torch
    from PIL import Image

    out, recipe = tuned["out"], tuned["recipe"]
    sha = recipe["weights"]["sha256"]
    tuned_settings = ClipSettings(checkpoint=out)
    base_settings = ClipSettings(model=str(tuned["config"]), checkpoint=tuned["checkpoint"])
    assert weights_id(tuned_settings)["checkpoint"] == sha
    assert weights_id(tuned_settings)["model"] == sha256_file(out / cw.CONFIG)
    clip, why = load_clip(tuned_settings)
    base, _ = load_clip(base_settings)
    assert clip is not None and base is not None, why
    assert clip.label == f"{NAME}/finetuned {sha[:12]}"
    pictures = design_pictures(load_spec(tuned["spec"]).spec.origami, 3)
    a, b = pictures[0].png, pictures[-1].png
    assert clip.similarity(a, a) == pytest.approx(1.0, abs=1e-5)
    # the embedding is that of the folder's weights (open_clip loading the file itself), not the base's
    model, _, preprocess = open_clip.create_model_and_transforms(NAME, pretrained=str(out / cw.WEIGHTS))
    model.eval()
    with torch.no_grad():
        want = model.encode_image(preprocess(Image.open(io.BytesIO(b)).convert("RGB")).unsqueeze(0))
    assert torch.allclose(clip.embed(b), want / want.norm(dim=-1, keepdim=True), atol=1e-6)
    assert not torch.allclose(clip.embed(b), base.embed(b), atol=1e-5)


def test_the_same_data_and_settings_give_the_same_weights_byte_for_byte(tuned: dict[str, Any], tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    ob = load_spec(tuned["spec"]).spec.origami
    hyper = Hyper(steps=STEPS, batch_size=16, lr=0.0001, symmetries=False)
    recipe = finetune(ob.clip, design_pictures(ob, 3), hyper, tmp_path / "again")
    assert recipe["weights"] == tuned["recipe"]["weights"]
    assert (tmp_path / "again" / cw.WEIGHTS).read_bytes() == (tuned["out"] / cw.WEIGHTS).read_bytes()
    assert (tmp_path / "again" / cw.RECIPE).read_bytes() == (tuned["out"] / cw.RECIPE).read_bytes()
    assert torch.get_num_threads() == threads and not torch.are_deterministic_algorithms_enabled()  # restored


def test_pictures_are_shown_in_the_squares_eight_symmetries_each_once_a_pass() -> None:
    from PIL import Image

    from shredfold.metrics.clip_finetune import order, view

    img = Image.new("RGB", (4, 4), (255, 255, 255))
    img.putpixel((0, 1), (0, 0, 0))  # no symmetry of the square maps this pixel to itself
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    seen = {bytes(view(buf.getvalue(), s).tobytes()) for s in range(8)}
    assert len(seen) == 8 and view(buf.getvalue(), 0).tobytes() == img.tobytes()
    stream = order(5, Hyper(), "some data key")
    first, second = [next(stream) for _ in range(40)], [next(stream) for _ in range(40)]
    assert sorted(first) == sorted(second) == [(i, s) for i in range(5) for s in range(8)]
    assert first != second  # a new permutation each pass
    again = order(5, Hyper(), "some data key")
    assert [next(again) for _ in range(40)] == first  # seeded from the seed and the data's key
    other = order(5, Hyper(), "other data")
    assert [next(other) for _ in range(40)] != first
    plain = order(5, Hyper(symmetries=False), "some data key")
    assert sorted(next(plain) for _ in range(5)) == [(i, 0) for i in range(5)]


def test_changed_weights_are_refused_naming_both_hashes(tuned: dict[str, Any], tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tuned["out"], copy)
    data = bytearray((copy / cw.WEIGHTS).read_bytes())
    data[-1] ^= 1
    (copy / cw.WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(ClipWeightsError) as info:
        load_clip(ClipSettings(checkpoint=copy))
    assert sha256_bytes(bytes(data)) in str(info.value) and tuned["recipe"]["weights"]["sha256"] in str(info.value)
    (copy / cw.WEIGHTS).write_bytes(bytes(data[:-1]))
    with pytest.raises(ValueError, match="bytes, its recipe says"):
        weights_id(ClipSettings(checkpoint=copy))


def test_a_folder_it_did_not_write_is_never_replaced(tuned: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(tuned["spec"])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert main(["clip", "finetune", spec, "--out", str(mine), "--steps", "1"]) == 2
    assert "was not written by `shredfold clip finetune`" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert main(["clip", "finetune", spec, "--out", str(tuned["out"]), "--steps", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds an earlier fine-tune" in err[0] and "--force" in err[0]
    assert json.loads((tuned["out"] / cw.RECIPE).read_text()) == tuned["recipe"]


def test_what_cannot_be_fine_tuned_is_one_line(tuned: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_origami = tmp_path / "shred.yaml"
    no_origami.write_text(textwrap.dedent("""\
        name: shred-only
        shred: {domains: [news_en], granularities: [1], documents_per_domain: 1}
        models: [oracle]
    """))
    assert main(["clip", "finetune", str(no_origami), "--out", str(tmp_path / "x")]) == 2
    assert "has no origami section" in capsys.readouterr().err
    no_weights = tmp_path / "bare.yaml"
    no_weights.write_text(SPEC.split("  clip:")[0] + "models: [origami-random]\n")
    assert main(["clip", "finetune", str(no_weights), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: base weights: no CLIP weights configured (origami.clip.checkpoint or .pretrained)"]
    one = [Picture("k1", "d1", "geometry", b""), Picture("k2", "d2", "geometry", b"")]
    with pytest.raises(FinetuneError, match="all pictures are of one category"):
        finetune(ClipSettings(), one, Hyper(), tmp_path / "y")
    with pytest.raises(FinetuneError, match="does not name"):
        finetune(ClipSettings(), one, Hyper(caption="origami"), tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
