"""Where SS's CLIP weights live: pinned open_clip downloads in the user's cache, and the
folders ``shredfold clip finetune`` writes.

**Pinned tags.** ``data/clip_weights.json`` names, per open_clip model and pretrained tag,
the file open_clip itself would download (its Hugging Face repository and file, at a fixed
revision), its size and SHA-256, and the preprocessing the tag needs (open_clip applies it
for a tag, not for a file: QuickGELU, mean and std, interpolation). ``shredfold weights
fetch clip`` downloads it into ``<cache>/clip/<model>/<pretrained>/`` — the cache being
``$SHREDFOLD_CACHE`` as for Flat-Folder's designs, or the spec's ``origami.clip.cache_dir``
/ ``--to`` — refusing other bytes with both hashes; SS then reads it from there (or from
open_clip's own Hugging Face cache, where the same bytes may already lie), never from the
network.

**Fine-tuned folders** hold ``open_clip_config.json`` (open_clip's own format, so
``open_clip.create_model("local-dir:FOLDER")`` loads them too), the weights
``open_clip_model.safetensors`` and ``recipe.json`` (how they were made, their size and
SHA-256).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from shredfold.download import FetchError, cache_root, download
from shredfold.store import atomic_write_json, file_mode, sha256_file

MARKER = ".shredfold-clip.json"  # written beside a fetched file: what was fetched from where
CONFIG = "open_clip_config.json"
WEIGHTS = "open_clip_model.safetensors"
RECIPE = "recipe.json"
HF_URL = "https://huggingface.co/{repo}/resolve/{revision}/{file}"


@dataclass(frozen=True)
class Pin:
    """One pinned weights file of an open_clip model and pretrained tag."""

    model: str
    pretrained: str
    hf_repo: str
    revision: str
    file: str
    size: int
    sha256: str
    quick_gelu: bool
    mean: tuple[float, ...]
    std: tuple[float, ...]
    interpolation: str
    resize_mode: str

    @property
    def url(self) -> str:
        return HF_URL.format(repo=self.hf_repo, revision=self.revision, file=self.file)

    def open_clip_args(self) -> dict[str, Any]:
        """What ``open_clip.create_model_and_transforms`` must be told when given this file
        as a path (it applies the tag's settings only when it downloads by tag)."""
        return {
            "force_quick_gelu": self.quick_gelu,
            "image_mean": self.mean,
            "image_std": self.std,
            "image_interpolation": self.interpolation,
            "image_resize_mode": self.resize_mode,
        }


def parse_pins(doc: dict[str, Any]) -> dict[tuple[str, str], Pin]:
    out = {}
    for w in doc["weights"]:
        pin = Pin(
            model=str(w["model"]), pretrained=str(w["pretrained"]), hf_repo=str(w["hf_repo"]),
            revision=str(w["revision"]), file=str(w["file"]), size=int(w["size"]),
            sha256=str(w["sha256"]), quick_gelu=bool(w["quick_gelu"]),
            mean=tuple(float(x) for x in w["mean"]), std=tuple(float(x) for x in w["std"]),
            interpolation=str(w["interpolation"]), resize_mode=str(w["resize_mode"]),
        )  # fmt: skip
        out[(pin.model, pin.pretrained)] = pin
    return out


@cache
def pins() -> dict[tuple[str, str], Pin]:
    text = (resources.files("shredfold.metrics") / "data" / "clip_weights.json").read_text(encoding="utf-8")
    return parse_pins(json.loads(text))


def pin_for(model: str, pretrained: str) -> Pin:
    """The pin of a model and tag; a one-line error naming the pinned ones otherwise."""
    pin = pins().get((model, pretrained))
    if pin is None:
        known = ", ".join(f"--model {m} --pretrained {p}" for m, p in sorted(pins()))
        raise FetchError(f"no pinned SHA-256 for open_clip {model}/{pretrained}; pinned: {known}")
    return pin


def default_root() -> Path:
    return cache_root() / "clip"


def weights_folder(pin: Pin, root: Path | None = None) -> Path:
    """``<root>/<model>/<pretrained>``, the root defaulting to ``$SHREDFOLD_CACHE/clip``."""
    return Path(root if root is not None else default_root()) / pin.model / pin.pretrained


# ---------------------------------------------------------------- fetching


@dataclass(frozen=True)
class Fetched:
    path: Path
    sha256: str
    size: int
    changed: bool  # False: the file was already there with the pinned bytes

    def line(self) -> str:
        what = "written" if self.changed else "already there"
        return f"{self.path} ({what}): {self.size} bytes, SHA-256 {self.sha256}"


def fetch_weights(pin: Pin, url: str | None = None, to: Path | None = None) -> Fetched:
    """Download ``pin``'s file (from ``url``, default the Hugging Face hub) into its cache
    folder, checked against the pin before it is put in place. A file already there is
    never replaced: with the pinned bytes it is kept, with others the fetch is refused."""
    url = url or pin.url
    folder = weights_folder(pin, to)
    target = folder / pin.file
    if folder.exists() and not folder.is_dir():
        raise FetchError(f"{folder} exists and is not a folder; choose another --to")
    if target.exists() or target.is_symlink():
        return _existing(target, pin)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{pin.file}.", suffix=".download", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            got = download(url, fh, pin.size)
            size = fh.tell()
            fh.flush()
            os.fsync(fh.fileno())
        if (got, size) != (pin.sha256, pin.size):
            raise FetchError(
                f"{url}: not the pinned {pin.model}/{pin.pretrained} weights: SHA-256 {got} "
                f"({size} bytes), the pin is {pin.sha256} ({pin.size} bytes); nothing written"
            )
        os.chmod(tmp, file_mode())
        try:
            os.link(tmp, target)  # never over a file that appeared meanwhile
        except FileExistsError:
            return _existing(target, pin)
    finally:
        tmp.unlink(missing_ok=True)
    marker = {
        "model": pin.model, "pretrained": pin.pretrained, "file": pin.file, "url": url,
        "size": pin.size, "sha256": pin.sha256,
    }  # fmt: skip
    atomic_write_json(folder / MARKER, marker, indent=1)
    return Fetched(target, pin.sha256, pin.size, changed=True)


def _existing(target: Path, pin: Pin) -> Fetched:
    if target.is_symlink() or not target.is_file():
        raise FetchError(f"{target} exists and is not a regular file; refusing to touch it")
    got = sha256_file(target)
    if got != pin.sha256:
        raise FetchError(
            f"{target} exists with other bytes: SHA-256 {got}, the pin is {pin.sha256}; "
            "refusing to touch it: move it away and fetch again"
        )
    return Fetched(target, got, target.stat().st_size, changed=False)


# ---------------------------------------------------------------- finding


def _hf_hub_roots() -> list[Path]:
    roots = []
    if os.environ.get("HF_HUB_CACHE"):
        roots.append(Path(os.environ["HF_HUB_CACHE"]))
    hf_home = os.environ.get("HF_HOME")
    roots.append(Path(hf_home) / "hub" if hf_home else Path.home() / ".cache" / "huggingface" / "hub")
    return roots


def candidates(pin: Pin, cache_dir: Path | None = None) -> list[Path]:
    """Where the pinned file may already lie, in the order SS looks: the spec's
    ``cache_dir``, the shredfold cache, open_clip's Hugging Face cache (any revision).
    Only files of the pinned size are listed; the caller checks their bytes."""
    spots = [weights_folder(pin, cache_dir) / pin.file] if cache_dir is not None else []
    spots.append(weights_folder(pin) / pin.file)
    repo = "models--" + pin.hf_repo.replace("/", "--")
    for root in _hf_hub_roots():
        spots += sorted((root / repo).glob(f"snapshots/*/{pin.file}"))
    out: list[Path] = []
    for p in spots:
        if p not in out and p.is_file() and p.stat().st_size == pin.size:
            out.append(p)
    return out


# ---------------------------------------------------------------- fine-tuned folders


def is_finetuned(path: Path) -> bool:
    return path.is_dir() and (path / RECIPE).is_file() and (path / CONFIG).is_file()


def read_recipe(folder: Path) -> dict[str, Any]:
    """A fine-tuned folder's recipe, with the checks that cost no hashing (the weights file
    is there and has the recorded size); a one-line error otherwise."""
    try:
        recipe = json.loads((folder / RECIPE).read_text(encoding="utf-8"))
        weights = recipe["weights"]
        want_size, want_sha = int(weights["size"]), str(weights["sha256"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{folder / RECIPE}: not a readable fine-tune recipe ({exc})") from None
    path = folder / WEIGHTS
    if not path.is_file():
        raise ValueError(f"{folder}: no {WEIGHTS} beside its recipe")
    if path.stat().st_size != want_size:
        raise ValueError(f"{path}: {path.stat().st_size} bytes, its recipe says {want_size}")
    if len(want_sha) != 64:
        raise ValueError(f"{folder / RECIPE}: weights.sha256 is not a SHA-256")
    return dict(recipe)
