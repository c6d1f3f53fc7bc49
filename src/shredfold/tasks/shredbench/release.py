"""What a release records and redoes for ShredBench: the facts of the machine that shape its
samples and its reference readers' answers (font and OCR-model hashes, the sample version),
the sample stage a release made ``--with-samples`` carries, and ``verify`` making those
samples again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from shredfold.store import MANIFEST as OBJECT_MANIFEST
from shredfold.store import Store, sha256_file


def environment() -> dict[str, Any]:
    from shredfold.shred.fonts import FONTS, FontMissingError, font_hashes
    from shredfold.shred.ocr import engine_identity
    from shredfold.shred.sample_key import SAMPLE_VERSION

    fonts: dict[str, str] = {}
    for role in sorted(FONTS):
        try:
            fonts.update(font_hashes([role]))
        except FontMissingError:
            fonts[role] = "absent"
    return {
        "fonts": fonts,
        "ocr": {**engine_identity(), "models": ocr_model_hashes()},
        "sample_version": SAMPLE_VERSION,
    }


def ocr_model_hashes() -> dict[str, str]:
    """SHA-256 of the OCR engine's model files (they ship inside its wheel)."""
    try:
        dist = metadata.distribution("rapidocr-onnxruntime")
    except metadata.PackageNotFoundError:
        return {}
    out = {}
    for f in dist.files or []:
        if str(f).endswith(".onnx"):
            located = Path(str(dist.locate_file(f)))
            if located.is_file():
                out[Path(str(f)).name] = sha256_file(located)
    return dict(sorted(out.items()))


def check_samples(
    store: Store, sets_of: Callable[[str], Iterable[Any]], folder_of: Callable[[str, str], str], scratch: Path,
    report: Any,
) -> None:
    """Make every flat-mode sample of the release again and compare it, file by file, with
    the release's own bytes (``folder_of(stage, key)``: the object's folder in the release)."""
    from shredfold.shred.sample import make_sample
    from shredfold.shred.sample_folder import SAMPLE_STAGE
    from shredfold.shred.sample_key import sample_key

    made = 0
    for item_set in sets_of("shred"):
        for item in item_set.items:
            if not store.has(SAMPLE_STAGE, item.key):
                continue
            folder = folder_of(SAMPLE_STAGE, item.key)
            if item.outside is not None:
                report.notes.append(f"{folder}: an outside sample (its source files are not part of a release); not regenerated")
                continue
            if item.synthesis.mode != "flat":
                report.notes.append(f"{folder}: {item.synthesis.mode}-mode samples are not byte-reproducible across CPUs; not regenerated")
                continue
            key = sample_key(item.doc, item.n, item.render, item.synthesis, item.seed)
            if key != item.key:
                report.add(folder, item.key[:12], "key", item.key, key)
            tmp = scratch / item.key
            tmp.mkdir(parents=True)
            make_sample(item.doc, item.n, item.render, item.synthesis, item.seed, tmp)
            # Against the release's own bytes (a file edited without its object's manifest
            # is caught here as well as by the hashes).
            names = set(store.manifest(SAMPLE_STAGE, item.key)) - {OBJECT_MANIFEST}
            want = {n: sha256_file(store.path(SAMPLE_STAGE, item.key) / n) for n in names
                    if (store.path(SAMPLE_STAGE, item.key) / n).is_file()}  # fmt: skip
            want.update({n: "(absent)" for n in names if n not in want})
            have = {p.relative_to(tmp).as_posix(): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
            for name in sorted(set(want) | set(have)):
                if want.get(name) != have.get(name):
                    report.add(f"{folder}/{name}", item.key[:12], "sha256", want.get(name, "(absent)"), have.get(name, "(absent)"))
            made += 1
    report.counts["samples"] = made
