"""SS: cosine similarity of CLIP image embeddings (open_clip_torch), never downloaded.

Weights come from ``origami.clip``:

- ``pretrained: TAG`` with a pinned file (:mod:`.clip_weights`, fetched by ``shredfold
  weights fetch clip``): the file whose bytes have the pinned SHA-256, looked up in the
  cache and open_clip's Hugging Face cache; a tag without a pin is used only when open_clip's
  own file for it is already on disk (identified by the tag, not its bytes);
- ``checkpoint: PATH``: a state dict / open_clip checkpoint file, or a folder written by
  ``shredfold clip finetune`` (its own model config, weights and recipe).

Without weights :func:`load_clip` returns ``None`` and the reason; the caller leaves SS
empty and logs the reason — it never makes up a number. Weights that are there but are not
what they claim (a fine-tuned file whose SHA-256 is not its recipe's) raise
:class:`ClipWeightsError`. ``model`` is an open_clip config name, or a path to a JSON model
config (its stem becomes the name), which is how tests use a tiny randomly initialised
model. torch is imported only here, only when SS is scored.

Every loaded model carries a :attr:`Clip.label` naming the weights by the SHA-256 of the
bytes read (``ViT-B-32/openai e6d1bd7789aa``): the ``ss_weights`` column.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shredfold.errors import InputError
from shredfold.metrics import clip_weights as cw
from shredfold.store import sha256_file

LABEL_DIGITS = 12  # hex digits of the SHA-256 in a label


class ClipWeights(Protocol):
    """Where the weights come from (the spec's ``origami.clip`` section has these fields)."""

    model: str
    checkpoint: Path | None
    pretrained: str | None
    cache_dir: Path | None


class ClipWeightsError(InputError):
    """Weights on disk that are not what their pin or recipe says."""


_HASH_LIMIT = 64 << 20  # larger plain checkpoints are identified by path, size and mtime


def model_name(settings: ClipWeights) -> str:
    """The open_clip config name (a JSON config's stem)."""
    return Path(settings.model).stem if settings.model.endswith(".json") else settings.model


def weights_id(settings: ClipWeights) -> dict[str, Any]:
    """What makes two SS columns comparable (enters the score cell's key and the metric
    signature); reads no weights file whole (a fine-tuned folder's recipe has its hash, a
    pinned tag its pin), imports no torch."""
    out: dict[str, Any] = {"model": settings.model, "pretrained": settings.pretrained}
    model_path = Path(settings.model)
    if model_path.suffix == ".json" and model_path.is_file():
        out["model"] = sha256_file(model_path)
    ck = settings.checkpoint
    if ck is not None and cw.is_finetuned(Path(ck)):
        recipe = cw.read_recipe(Path(ck))
        out["model"] = sha256_file(Path(ck) / cw.CONFIG)
        out["checkpoint"] = recipe["weights"]["sha256"]
    elif ck is not None and Path(ck).is_file():
        st = Path(ck).stat()
        out["checkpoint"] = (
            sha256_file(ck) if st.st_size <= _HASH_LIMIT else f"{ck}:{st.st_size}:{st.st_mtime_ns}"
        )
    elif ck is None and settings.pretrained is not None:
        pin = cw.pins().get((model_name(settings), settings.pretrained))
        if pin is not None:
            out["sha256"] = pin.sha256
    return out


@dataclass
class Clip:
    model: Any
    preprocess: Any
    label: str  # the weights, by the SHA-256 of their bytes
    config: dict[str, Any]  # the open_clip model config it was built from (what fine-tuning writes)
    source: str  # the name open_clip knows it by ("local-dir:…" for a fine-tuned folder)

    def tokenizer(self) -> Any:
        import open_clip

        return open_clip.get_tokenizer(self.source)

    def embed(self, png: bytes) -> Any:
        import torch
        from PIL import Image

        img = self.preprocess(Image.open(io.BytesIO(png)).convert("RGB")).unsqueeze(0)
        with torch.no_grad():
            v = self.model.encode_image(img).float()
        return v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)

    def similarity(self, a: bytes, b: bytes) -> float:
        return float((self.embed(a) * self.embed(b)).sum())


def label(name: str, source: str, sha256: str) -> str:
    return f"{name}/{source} {sha256[:LABEL_DIGITS]}"


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
    ck = Path(settings.checkpoint) if settings.checkpoint is not None else None
    if ck is not None and cw.is_finetuned(ck):
        return _load_finetuned(open_clip, ck), ""
    if ck is not None:
        if not ck.is_file():
            return None, f"checkpoint {ck} is not a file or a fine-tuned folder"
        model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=None)
        state = torch.load(ck, map_location="cpu", weights_only=True)
        if isinstance(state, dict) and "state_dict" in state:
            state = state["state_dict"]
        state = {k.removeprefix("module."): v for k, v in state.items()}
        model.load_state_dict(state)
        model.eval()
        config = open_clip.get_model_config(name)
        return Clip(model, preprocess, label(name, "checkpoint", sha256_file(ck)), config, name), ""
    tag = str(settings.pretrained)
    pin = cw.pins().get((name, tag))
    if pin is not None:
        return _load_pinned(open_clip, name, pin, settings.cache_dir)
    cached = _cached_pretrained(open_clip, name, tag, settings.cache_dir)
    if cached is None:
        return None, f"pretrained {settings.model}/{tag} is not in the local cache (and has no pin to fetch)"
    cfg = open_clip.get_pretrained_cfg(name, tag)
    model, _, preprocess = open_clip.create_model_and_transforms(
        name, pretrained=str(cached), force_quick_gelu=bool(cfg.get("quick_gelu")),
        image_mean=cfg.get("mean"), image_std=cfg.get("std"),
        image_interpolation=cfg.get("interpolation"), image_resize_mode=cfg.get("resize_mode"),
    )  # fmt: skip  (a file path gets none of the tag's settings unless told)
    model.eval()
    config = {**open_clip.get_model_config(name), **({"quick_gelu": True} if cfg.get("quick_gelu") else {})}
    return Clip(model, preprocess, label(name, tag, sha256_file(cached)), config, name), ""


def _load_pinned(open_clip: Any, name: str, pin: cw.Pin, cache_dir: Path | None) -> tuple[Clip | None, str]:
    found = cw.candidates(pin, cache_dir)
    for path in found:
        if sha256_file(path) == pin.sha256:
            model, _, preprocess = open_clip.create_model_and_transforms(
                name, pretrained=str(path), **pin.open_clip_args()
            )
            model.eval()
            config = {**open_clip.get_model_config(name), **({"quick_gelu": True} if pin.quick_gelu else {})}
            return Clip(model, preprocess, label(name, pin.pretrained, pin.sha256), config, name), ""
    where = cw.weights_folder(pin, cache_dir)
    other = f" ({len(found)} file(s) of its size with other bytes: {', '.join(map(str, found))})" if found else ""
    return None, (
        f"pretrained {name}/{pin.pretrained} (SHA-256 {pin.sha256[:LABEL_DIGITS]}…) is not at {where}{other}: "
        f"run `shredfold weights fetch clip --model {name} --pretrained {pin.pretrained}`"
    )


def _load_finetuned(open_clip: Any, folder: Path) -> Clip:
    recipe = cw.read_recipe(folder)
    want = recipe["weights"]["sha256"]
    got = sha256_file(folder / cw.WEIGHTS)
    if got != want:
        raise ClipWeightsError(
            f"{folder / cw.WEIGHTS}: SHA-256 {got}, its recipe says {want}: the weights were changed"
        )
    source = f"local-dir:{folder}"
    model, _, preprocess = open_clip.create_model_and_transforms(source)
    model.eval()
    config = json.loads((folder / cw.CONFIG).read_text(encoding="utf-8"))["model_cfg"]
    return Clip(model, preprocess, label(str(recipe.get("model", folder.name)), "finetuned", got), config, source)


def _cached_pretrained(open_clip: Any, name: str, tag: str, cache_dir: Path | None) -> Path | None:
    """The local file of an unpinned pretrained tag, looked up without any network access."""
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
