"""Fine-tuning an open_clip model for SS on pictures of folded paper, as OrigamiBench's
authors fine-tuned CLIP on origami: contrastive, each picture against the names of the
design categories as captions.

Each step takes a batch of pictures and every category's caption; the loss is the mean of
the two directions of CLIP's contrastive loss where a caption is shared by several pictures:
a picture against all captions (cross-entropy on its category), and a caption against the
batch's pictures (cross-entropy spread evenly over the pictures of its category, less the
spread's entropy, so that a perfect match scores 0 in both directions). Each
picture may be shown in any of the square's 8 symmetries (``symmetries``): a folded model
turned or flipped is the same model, as GS already treats it.

Deterministic: the order of pictures and symmetries comes from a generator seeded from the
seed and the data's key, torch's generator from the same, with torch's deterministic
algorithms and one thread while training (restored afterwards); the same data and settings
give the same weights, byte for byte, on the same machine (another processor may round
differently).

The result is a folder (:mod:`.clip_weights`): ``open_clip_config.json``, the weights as
``open_clip_model.safetensors`` and ``recipe.json`` — the base weights and their identity,
the data's key and every picture's key, design, category and SHA-256, the hyper-parameters,
the loss per step, the loss over all pictures and their zero-shot category accuracy before
and after, the
package versions, and the weights' size and SHA-256. It is written beside its target and
renamed into place; a folder that is not an earlier fine-tune's is never replaced.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shredfold.metrics import clip_weights as cw
from shredfold.metrics.clip import Clip, ClipWeights, load_clip, weights_id
from shredfold.store import canonical_json, content_key, sha256_bytes, sha256_file, staged_folder
from shredfold.versions import version

FORMAT = 1
WRITER = "shredfold clip finetune"
SYMMETRIES = 8  # the square's: 4 turns, each flipped or not


class FinetuneError(ValueError):
    """A fine-tune that cannot start (no base weights, no pictures, a target in the way)."""


@dataclass(frozen=True)
class Picture:
    """One training picture: a folded design as the benchmark draws it."""

    key: str  # the picture's content key (the design's target object)
    design: str
    category: str
    png: bytes


@dataclass(frozen=True)
class Hyper:
    steps: int = 200
    batch_size: int = 32
    lr: float = 1e-5
    weight_decay: float = 0.1
    seed: int = 0
    caption: str = "origami: {category}"
    symmetries: bool = True

    def check(self) -> None:
        if self.steps < 1 or self.batch_size < 2:
            raise FinetuneError("steps must be at least 1 and the batch size at least 2")
        if not (self.lr > 0 and self.weight_decay >= 0):
            raise FinetuneError("the learning rate must be positive and the weight decay not negative")
        if "{category}" not in self.caption:
            raise FinetuneError(f"caption {self.caption!r} does not name {{category}}")


def data_key(pictures: Sequence[Picture], symmetries: bool) -> str:
    rows = sorted([p.key, p.design, p.category, sha256_bytes(p.png)] for p in pictures)
    return content_key("clip_finetune_data", 1, {"symmetries": symmetries}, [canonical_json(rows).decode()])


def order(n: int, hyper: Hyper, key: str) -> Iterator[tuple[int, int]]:
    """An endless stream of (picture, symmetry): each pass a seeded permutation of all of them."""
    import numpy as np

    rng = np.random.default_rng(int(content_key("clip_finetune_order", 1, {"seed": hyper.seed}, [key])[:16], 16))
    views = SYMMETRIES if hyper.symmetries else 1
    while True:
        for flat in rng.permutation(n * views):
            yield int(flat) // views, int(flat) % views


def view(png: bytes, symmetry: int) -> Any:
    """The picture in one of the square's 8 symmetries (0: as drawn)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    if symmetry & 4:
        img = img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    for _ in range(symmetry & 3):
        img = img.transpose(Image.Transpose.ROTATE_90)
    return img


@contextmanager
def deterministic_torch(seed: int) -> Iterator[None]:
    import torch

    threads, strict = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(strict)


def _loss(logits: Any, labels: Any) -> Any:
    """Both directions of the contrastive loss over (batch × categories) logits."""
    import torch
    import torch.nn.functional as F

    to_text = F.cross_entropy(logits, labels)
    present = torch.unique(labels)  # sorted: the same order on every run
    cols = logits[:, present].T  # (present categories × batch)
    hits = (labels[None, :] == present[:, None]).float()
    counts = hits.sum(dim=1)
    # cross-entropy against the even spread over a caption's pictures, less that spread's own
    # entropy (log count), so both directions reach 0 when captions and pictures match
    to_images = (-(hits * F.log_softmax(cols, dim=1)).sum(dim=1) / counts - counts.log()).mean()
    return (to_text + to_images) / 2


def _evaluate(clip: Clip, pictures: Sequence[Picture], tokens: Any, labels: list[int]) -> tuple[float, float]:
    """The loss over all pictures as drawn, and their zero-shot category accuracy (eval
    mode, no gradient): what the per-step losses of random batches cannot show."""
    import torch

    clip.model.eval()
    with torch.no_grad():
        text = clip.model.encode_text(tokens)
        text = text / text.norm(dim=-1, keepdim=True)
        images = []
        for at in range(0, len(pictures), 64):
            chunk = torch.stack([clip.preprocess(view(p.png, 0)) for p in pictures[at : at + 64]])
            images.append(clip.model.encode_image(chunk))
        img = torch.cat(images)
        img = img / img.norm(dim=-1, keepdim=True)
        logits = clip.model.logit_scale.exp() * img @ text.T
        y = torch.tensor(labels)
        return float(_loss(logits, y)), float((logits.argmax(dim=1) == y).float().mean())


def _param_groups(model: Any, weight_decay: float) -> list[dict[str, Any]]:
    # as open_clip trains: no decay on gains, biases and the temperature
    decay, rest = [], []
    for name, p in model.named_parameters():
        if p.requires_grad:
            (rest if p.ndim < 2 or "logit_scale" in name or name.endswith(".bias") else decay).append(p)
    return [{"params": rest, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def load_base(base: ClipWeights) -> Clip:
    clip, why = load_clip(base)
    if clip is None:
        raise FinetuneError(f"base weights: {why}")
    return clip


def finetune(
    base: ClipWeights,
    pictures: Sequence[Picture],
    hyper: Hyper,
    out: Path,
    *,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    loaded: Clip | None = None,
) -> dict[str, Any]:
    """Fine-tune ``base`` (``loaded``: the model already loaded from it) on ``pictures`` and
    write the folder ``out``; its recipe."""
    hyper.check()
    check_target(out, force)
    if len(pictures) < 2:
        raise FinetuneError(f"{len(pictures)} picture(s): fine-tuning needs at least 2")
    categories = sorted({p.category for p in pictures})
    if len(categories) < 2:
        raise FinetuneError(f"all pictures are of one category ({categories[0]}): captions cannot tell them apart")
    say = progress or (lambda _: None)
    clip = loaded if loaded is not None else load_base(base)
    import torch

    key = data_key(pictures, hyper.symmetries)
    seed = int(content_key("clip_finetune_seed", 1, {"seed": hyper.seed}, [key])[:8], 16)
    index = {c: i for i, c in enumerate(categories)}
    labels = [index[p.category] for p in pictures]
    captions = [hyper.caption.format(category=c) for c in categories]
    tokens = clip.tokenizer()(captions)
    losses: list[float] = []
    with deterministic_torch(seed):
        loss_before, before = _evaluate(clip, pictures, tokens, labels)
        model = clip.model
        model.train()
        optimiser = torch.optim.AdamW(_param_groups(model, hyper.weight_decay), lr=hyper.lr)
        stream = order(len(pictures), hyper, key)
        batch = min(hyper.batch_size, len(pictures) * (SYMMETRIES if hyper.symmetries else 1))
        for step in range(hyper.steps):
            chosen = [next(stream) for _ in range(batch)]
            images = torch.stack([clip.preprocess(view(pictures[i].png, s)) for i, s in chosen])
            y = torch.tensor([labels[i] for i, _ in chosen])
            img = model.encode_image(images)
            txt = model.encode_text(tokens)
            img = img / img.norm(dim=-1, keepdim=True)
            txt = txt / txt.norm(dim=-1, keepdim=True)
            loss = _loss(model.logit_scale.exp() * img @ txt.T, y)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            with torch.no_grad():  # CLIP's clamp: a temperature of at most 100
                model.logit_scale.clamp_(0, 4.6052)
            losses.append(round(float(loss.detach()), 6))
            if step == 0 or (step + 1) % max(1, hyper.steps // 10) == 0:
                say(f"step {step + 1}/{hyper.steps}: loss {losses[-1]:.4f}")
        loss_after, after = _evaluate(clip, pictures, tokens, labels)
    recipe = {
        "format": FORMAT,
        "written_by": WRITER,
        "model": clip.label.split("/", 1)[0],
        "base": {"weights": clip.label, "id": weights_id(base)},
        "data": {
            "key": key,
            "pictures": len(pictures),
            "categories": categories,
            "captions": captions,
            "items": [
                {"key": p.key, "design": p.design, "category": p.category, "sha256": sha256_bytes(p.png)}
                for p in pictures
            ],
        },
        "hyper": {**asdict(hyper), "batch_size_used": batch, "torch_seed": seed, "optimiser": "AdamW",
                  "loss": "contrastive, category names as captions"},
        "training": {"loss": losses, "set_loss_before": round(loss_before, 6),
                     "set_loss_after": round(loss_after, 6), "category_accuracy_before": round(before, 6),
                     "category_accuracy_after": round(after, 6)},
        "versions": {p: version(p) for p in ("shredfold", "torch", "open_clip_torch", "safetensors", "numpy", "pillow")},
    }  # fmt: skip
    _write(out, clip, model, recipe)
    return recipe


def _write(out: Path, clip: Clip, model: Any, recipe: dict[str, Any]) -> None:
    from safetensors.torch import save_file

    # out was checked (check_target): absent, empty, or an earlier fine-tune (with force)
    with staged_folder(out, swap_out=out.exists()) as tmp:
        weights = tmp / cw.WEIGHTS
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(weights))
        recipe["weights"] = {"file": cw.WEIGHTS, "size": weights.stat().st_size, "sha256": sha256_file(weights)}
        preprocess = dict(model.visual.preprocess_cfg)
        config = {"model_cfg": clip.config, "preprocess_cfg": preprocess}
        (tmp / cw.CONFIG).write_text(json.dumps(config, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (tmp / cw.RECIPE).write_text(json.dumps(recipe, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def check_target(out: Path, force: bool) -> None:
    """``out`` may receive a fine-tune: absent, empty, or (with ``force``) an earlier one."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise FinetuneError(f"{out} exists and is not a folder; choose another --out")
    if not any(out.iterdir()):
        return
    written = False
    if (out / cw.RECIPE).is_file():
        try:
            written = json.loads((out / cw.RECIPE).read_text(encoding="utf-8")).get("written_by") == WRITER
        except (OSError, ValueError, AttributeError):
            written = False
    if not written:
        raise FinetuneError(f"{out} exists and was not written by `{WRITER}`; refusing to touch it")
    if not force:
        raise FinetuneError(f"{out} holds an earlier fine-tune; choose another --out, or --force to replace it")
