"""SS: cosine similarity of CLIP image embeddings (open_clip_torch), never downloaded.

Weights come from ``origami.clip.checkpoint`` (a local state dict or open_clip checkpoint)
or ``origami.clip.pretrained`` (an open_clip tag, used only when its file is already in the
cache). Without weights :func:`load_clip` returns ``None`` and the reason; the caller leaves
SS empty and logs the reason — it never makes up a number. ``model`` is an open_clip config
name, or a path to a JSON model config (its stem becomes the name), which is how tests use a
tiny randomly initialised model. torch is imported only here, only when SS is scored.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shredfold.store import sha256_file


class ClipWeights(Protocol):
    """Where the weights come from (the spec's ``origami.clip`` section has these fields)."""

    model: str
    checkpoint: Path | None
    pretrained: str | None
    cache_dir: Path | None

_HASH_LIMIT = 64 << 20  # larger checkpoints are identified by path, size and mtime


def weights_id(settings: ClipWeights) -> dict[str, Any]:
    """What makes two SS columns comparable (enters the score cell's key); no torch."""
    out: dict[str, Any] = {"model": settings.model, "pretrained": settings.pretrained}
    model_path = Path(settings.model)
    if model_path.suffix == ".json" and model_path.is_file():
        out["model"] = sha256_file(model_path)
    ck = settings.checkpoint
    if ck is not None and Path(ck).is_file():
        st = Path(ck).stat()
        out["checkpoint"] = (
            sha256_file(ck) if st.st_size <= _HASH_LIMIT else f"{ck}:{st.st_size}:{st.st_mtime_ns}"
        )
    return out


@dataclass
class Clip:
    model: Any
    preprocess: Any

    def embed(self, png: bytes) -> Any:
        import torch
        from PIL import Image

        img = self.preprocess(Image.open(io.BytesIO(png)).convert("RGB")).unsqueeze(0)
        with torch.no_grad():
            v = self.model.encode_image(img).float()
        return v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)

    def similarity(self, a: bytes, b: bytes) -> float:
        return float((self.embed(a) * self.embed(b)).sum())


def load_clip(settings: ClipWeights) -> tuple[Clip | None, str]:
    """The CLIP model, or ``None`` and why SS cannot be computed."""
    if settings.checkpoint is None and settings.pretrained is None:
        return None, "no CLIP weights configured (origami.clip.checkpoint or .pretrained)"
    try:
        import open_clip
        import torch
    except ImportError as exc:
        return None, f"open_clip_torch is not installed ({exc})"
    torch.manual_seed(0)
    name = settings.model
    if name.endswith(".json"):
        open_clip.add_model_config(Path(name))
        name = Path(name).stem
    if settings.checkpoint is not None:
        model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=None)
        state = torch.load(settings.checkpoint, map_location="cpu", weights_only=True)
        if isinstance(state, dict) and "state_dict" in state:
            state = state["state_dict"]
        state = {k.removeprefix("module."): v for k, v in state.items()}
        model.load_state_dict(state)
    else:
        cached = _cached_pretrained(open_clip, name, str(settings.pretrained), settings.cache_dir)
        if cached is None:
            return None, f"pretrained {settings.model}/{settings.pretrained} is not in the local cache"
        model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=str(cached))
    model.eval()
    return Clip(model, preprocess), ""


def _cached_pretrained(open_clip: Any, name: str, tag: str, cache_dir: Path | None) -> Path | None:
    """The local file of a pretrained tag, looked up without any network access."""
    cfg = open_clip.get_pretrained_cfg(name, tag)
    if not cfg:
        return None
    roots = [cache_dir] if cache_dir else []
    roots += [Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub",
              Path.home() / ".cache" / "clip"]
    hub = cfg.get("hf_hub", "").rstrip("/")
    url = cfg.get("url", "")
    for root in roots:
        if root is None or not Path(root).is_dir():
            continue
        if url:
            p = Path(root) / os.path.basename(url)
            if p.is_file():
                return p
        if hub:
            repo = "models--" + hub.replace("/", "--")
            for p in (Path(root) / repo).glob("snapshots/*/open_clip_*"):
                if p.is_file():
                    return p
    return None


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
