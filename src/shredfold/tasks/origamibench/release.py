"""What a release records and carries for OrigamiBench: the engine's version (a fact of the
code that shapes every fold), and SS's CLIP weights where the spec names local files, so
that ``verify`` re-scores SS from the release alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shredfold.spec import ResolvedSpec

CLIP = "clip"  # the release's folder of carried weights


def environment() -> dict[str, Any]:
    from shredfold.origami import ENGINE_VERSION

    return {"engine_version": ENGINE_VERSION}


def carried(spec: ResolvedSpec) -> dict[str, Path]:
    """SS's weights where the spec names local files (release path → file)."""
    from shredfold.metrics.clip_weights import CONFIG, RECIPE, WEIGHTS, is_finetuned

    ob = spec.spec.origami
    if ob is None:
        return {}
    out: dict[str, Path] = {}
    ck = ob.clip.checkpoint
    if ck is not None and is_finetuned(Path(ck)):
        out.update({f"{CLIP}/{Path(ck).name}/{n}": Path(ck) / n for n in (CONFIG, WEIGHTS, RECIPE)})
    elif ck is not None and Path(ck).is_file():
        out[f"{CLIP}/{Path(ck).name}"] = Path(ck)
    model = Path(ob.clip.model)
    if model.suffix == ".json" and model.is_file():
        out[f"{CLIP}/{model.name}"] = model
    return out


def from_carried(spec: ResolvedSpec, root: Path) -> ResolvedSpec:
    """``spec`` with SS's weights read from the release at ``root`` where it carries them
    (the paths it recorded are the releasing machine's)."""
    ob = spec.spec.origami
    if ob is None or not (root / CLIP).is_dir():
        return spec
    update: dict[str, Any] = {}
    ck = ob.clip.checkpoint
    if ck is not None and (root / CLIP / Path(ck).name).exists():
        update["checkpoint"] = root / CLIP / Path(ck).name
    model = Path(ob.clip.model)
    if model.suffix == ".json" and (root / CLIP / model.name).is_file():
        update["model"] = str(root / CLIP / model.name)
    if not update:
        return spec
    origami = ob.model_copy(update={"clip": ob.clip.model_copy(update=update)})
    return spec.model_copy(update={"spec": spec.spec.model_copy(update={"origami": origami})})
