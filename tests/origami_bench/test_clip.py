"""SS through open_clip with a tiny randomly initialised model saved to a temporary checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shredfold.metrics.clip import load_clip, weights_id
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.env import render_folded
from shredfold.origami_bench.targets import target_state
from shredfold.spec import ClipSettings

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
    assert -1.0 <= clip.similarity(a, b) <= 1.0
    assert weights_id(settings)["checkpoint"] != weights_id(ClipSettings(model=str(config)))["model"]
