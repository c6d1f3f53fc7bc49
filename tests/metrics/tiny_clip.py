"""A tiny randomly initialised open_clip model for the SS tests: a custom model config (one
layer per tower, width 32, 32-pixel images) registered with open_clip, its weights made
here from a seed — nothing is downloaded. The text tower keeps open_clip's tokenizer
vocabulary (49,408 tokens) so real captions can be tokenised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TINY: dict[str, Any] = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
NAME = "tiny-clip"


def tiny_config(folder: Path) -> Path:
    """The config file a spec names as ``origami.clip.model`` (its stem is the model name)."""
    path = folder / f"{NAME}.json"
    path.write_text(json.dumps(TINY))
    return path


def tiny_weights(folder: Path, seed: int = 1, file: str = "tiny.pt") -> tuple[Path, Path]:
    """(config, weights): a randomly initialised model saved as a state dict (``.pt``) or as
    safetensors (a name ending ``.safetensors``)."""
    import open_clip
    import torch

    config = tiny_config(folder)
    open_clip.add_model_config(config)
    torch.manual_seed(seed)
    model = open_clip.create_model(NAME, pretrained=None)
    path = folder / file
    if file.endswith(".safetensors"):
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    else:
        torch.save(model.state_dict(), path)
    return config, path
