"""SS through open_clip with a tiny randomly initialised model saved to a temporary checkpoint."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from shredfold.metrics.clip import load_clip, weights_id
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.targets import target_state
from shredfold.spec import ClipSettings
from shredfold.store import sha256_file

TINY = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 8, "vocab_size": 64, "width": 32, "heads": 2, "layers": 1},
}


def test_without_weights_ss_is_empty_with_a_reason() -> None:
    clip, why = load_clip(ClipSettings())
    assert clip is None and "no CLIP weights" in why


def test_tiny_checkpoint_through_the_same_code_path(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    open_clip = pytest.importorskip("open_clip")
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps(TINY))
    open_clip.add_model_config(config)
    torch.manual_seed(1)
    model = open_clip.create_model("tiny-clip", pretrained=None)
    checkpoint = tmp_path / "tiny.pt"
    torch.save(model.state_dict(), checkpoint)

    settings = ClipSettings(model=str(config), checkpoint=checkpoint)
    clip, why = load_clip(settings)
    assert clip is not None, why
    a, b = (render_folded(target_state(d), 64) for d in builtin_designs()[:2])
    assert clip.similarity(a, a) == pytest.approx(1.0, abs=1e-5)

    # SS of two different pictures is the cosine of the checkpoint's own embeddings,
    # computed here with open_clip directly.
    _, _, preprocess = open_clip.create_model_and_transforms("tiny-clip", pretrained=None)
    model.eval()

    def embedding(png: bytes):
        with torch.no_grad():
            v = model.encode_image(preprocess(Image.open(io.BytesIO(png)).convert("RGB")).unsqueeze(0))
        return v / v.norm(dim=-1, keepdim=True)

    want = float((embedding(a) * embedding(b)).sum())
    assert clip.similarity(a, b) == pytest.approx(want, abs=1e-5)
    assert clip.similarity(b, a) == pytest.approx(want, abs=1e-5)
    assert want < 1.0 - 1e-4  # the two designs do look different to it


def test_weights_are_identified_by_their_bytes(tmp_path: Path) -> None:
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps(TINY))
    first, copy, other = tmp_path / "a.pt", tmp_path / "copy-of-a.pt", tmp_path / "b.pt"
    first.write_bytes(b"weights one")
    copy.write_bytes(b"weights one")
    other.write_bytes(b"weights two")

    def wid(ck: Path) -> dict:
        return weights_id(ClipSettings(model=str(config), checkpoint=ck))

    assert wid(first)["checkpoint"] == sha256_file(first)
    assert wid(first) == wid(copy)  # the same bytes at another path
    assert wid(first)["checkpoint"] != wid(other)["checkpoint"]
    assert wid(first)["model"] == sha256_file(config)  # a JSON config by its content
    assert weights_id(ClipSettings(model="ViT-B-32"))["model"] == "ViT-B-32"  # a name as is
