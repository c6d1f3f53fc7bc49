"""An outside sample into the stored layout of :mod:`.sample_folder`, so that query, score,
report and release read it as they read a rendered one.

- Images are decoded (a photograph's EXIF orientation applied, as a viewer shows it) and
  stored: the composite as RGB JPEG like a rendered sample's (:mod:`.formats`), each piece
  as lossless PNG, RGBA when it has transparency (else RGB). A composite that is already an
  RGB JPEG needing no turn keeps its own compressed data, with its metadata segments cut
  out (:func:`_jpeg_as_is`): encoding it again would add a second generation of loss to
  what the models see, and the metadata (EXIF with a phone's GPS position, XMP, comments)
  has no place in a store that a release publishes. A sample given as pieces only gets a
  composite made by the table-top compositor (its scatter seeded from the sample's key);
  one given as a composite only has no piece files, and a pieces-mode model is shown the
  composite.
- Truth (what each protocol scores against; ``text`` for ours, ``source`` for the paper's):

  ===========  ==============  ==========================================  ======================
  kind         truth file      truth.txt (``text``)                        source.txt (``source``)
  ===========  ==============  ==========================================  ======================
  prose        ``.md``         the text a reader sees (markup dropped)     the Markdown as written
  prose        ``.txt``        as written                                  as written
  code         ``.md``/``.txt``  the code (a ``.md``'s one fenced block)     the same code
  table        ``.html``/``.md`` the table's reading-order text              the table as HTML
  ===========  ==============  ==========================================  ======================

  A table's ``truth.html`` is its HTML form (a Markdown pipe table converted); TEDS
  compares against it under both protocols.
- ``hidden.json`` says where the sample came from (``origin: outside``, its id and the
  SHA-256 of every file it was made from); there are no polygons or poses, so the failure
  diagnostics that need them are left empty.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from shredfold.shred.formats import (
    COMPOSITE_FILE,
    composite_jpeg,
    encode_many,
    lossless_png,
    piece_names,
)
from shredfold.shred.outside import OUTSIDE_FORMAT, OutsideFile, OutsideSample, OutsideSetError
from shredfold.spec import SynthesisSettings

_FENCE = re.compile(r"\A\s*(`{3,}|~{3,})[^\n]*\n(.*?)\n?\1\s*\Z", re.S)


def _read(f: OutsideFile, root: Path) -> bytes:
    assert f.path is not None, "images are files"
    path = root / f.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OutsideSetError(f"{path}: cannot read: {exc.strerror}") from None
    if hashlib.sha256(data).hexdigest() != f.sha256:
        raise OutsideSetError(f"{path}: changed since the plan was made; run again to plan it anew")
    return data


def _decode(f: OutsideFile, composite: bool, root: Path, data: bytes | None = None) -> np.ndarray:
    try:
        with Image.open(io.BytesIO(_read(f, root) if data is None else data)) as img:
            img = ImageOps.exif_transpose(img)
            alpha = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
            return np.asarray(img.convert("RGBA" if alpha and not composite else "RGB"))
    except OutsideSetError:
        raise
    except Exception as exc:  # a file that passed the plan's header check but not decoding
        raise OutsideSetError(f"{root / str(f.path)}: cannot decode the image ({type(exc).__name__}: {exc})") from None


# Segments before a JPEG's scan that carry no pixels and are cut from a photograph kept as
# it is: APP1-APP15 (EXIF, XMP, ICC profiles, makers' notes) and comments. APP0 (JFIF) and
# APP14 (Adobe: how the colour channels are transformed) stay.
_JPEG_DROPPED = frozenset(range(0xE1, 0xF0)) - {0xEE} | {0xFE}
_SOS = 0xDA


def _jpeg_as_is(data: bytes, pixels: np.ndarray) -> bytes | None:
    """``data`` without its metadata segments, when it is an RGB JPEG that decodes to
    ``pixels`` as it is; ``None`` when the composite must be encoded anew (another format or
    colour mode, or an EXIF turn: ``pixels`` are turned, the bare data would not be)."""
    if data[:2] != b"\xff\xd8":
        return None
    kept, i = [data[:2]], 2
    while True:
        if i + 4 > len(data) or data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == _SOS:
            kept.append(data[i:])
            break
        end = i + 2 + int.from_bytes(data[i + 2 : i + 4], "big")
        if end > len(data):
            return None
        if marker not in _JPEG_DROPPED:
            kept.append(data[i:end])
        i = end
    out = b"".join(kept)
    try:  # what the models see must be what was decoded: else encode anew
        with Image.open(io.BytesIO(out)) as img:
            same = img.format == "JPEG" and img.mode == "RGB" and np.array_equal(np.asarray(img), pixels)
    except Exception:  # noqa: BLE001 - decoded once already; anything odd is encoded anew
        return None
    return out if same else None


def _compose(pieces: list[np.ndarray], key: str) -> np.ndarray:
    from shredfold.shred.synth import Scrap, compose

    scraps = []
    for p in pieces:
        rgba = p if p.shape[2] == 4 else np.dstack([p, np.full(p.shape[:2], 255, np.uint8)])
        scraps.append(Scrap(image=np.ascontiguousarray(rgba), paper=rgba[..., 3] > 0, origin=(0, 0)))
    rng = np.random.default_rng(int(key[:16], 16))
    return compose(scraps, rng, SynthesisSettings()).image


def truths(sample: OutsideSample) -> tuple[str, str, str | None]:
    """(truth.txt, source.txt, truth.html) of an outside sample, as the table above says."""
    doc, fmt = sample.doc, sample.ref.truth_format
    if doc.kind == "table":
        from shredfold.tables import table_text

        return table_text(doc.text), doc.text, doc.text
    if doc.kind == "code":
        m = _FENCE.match(doc.text) if fmt == "md" else None
        code = m.group(2) if m else doc.text
        return code, code, None
    if fmt == "md":
        from shredfold.shred.render import markdown_text

        return markdown_text(doc.text, doc.lang == "zh"), doc.text, None
    return doc.text, doc.text, None


def _json(obj: object) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


def write_outside_sample(sample: OutsideSample, out_dir: Path, root: Path | None = None) -> None:
    """Store an outside sample; its files are read from ``root`` (the set's folder, which
    the sample's paths are relative to), or as they are named when ``root`` is None."""
    out_dir = Path(out_dir)
    root = Path(root) if root is not None else Path()
    ref = sample.ref
    pieces = [_decode(p, composite=False, root=root) for p in ref.pieces]
    photo = None
    if ref.composite:
        given = _read(ref.composite, root)
        composite = _decode(ref.composite, composite=True, root=root, data=given)
        photo = _jpeg_as_is(given, composite)
    else:
        composite = _compose(pieces, sample.key)
    names = piece_names(len(pieces)) if pieces else []
    if pieces:
        (out_dir / "pieces").mkdir(parents=True, exist_ok=True)
    jobs = [] if photo is not None else [(composite_jpeg, composite)]
    encoded = encode_many([*jobs, *((lossless_png, p) for p in pieces)])
    (out_dir / COMPOSITE_FILE).write_bytes(photo if photo is not None else encoded[0])
    for name, data in zip(names, encoded[len(jobs) :], strict=True):
        (out_dir / name).write_bytes(data)
    text, source, html = truths(sample)
    (out_dir / "truth.txt").write_text(text, encoding="utf-8")
    (out_dir / "source.txt").write_text(source, encoding="utf-8")
    if html is not None:
        (out_dir / "truth.html").write_text(html, encoding="utf-8")
    doc = sample.doc
    public = {
        "n": sample.n,
        "domain": doc.domain,
        "kind": doc.kind,
        "lang": doc.lang,
        "origin": "outside",
        "page": None,
        "pieces": len(names),
        "piece_files": names,
        "composite": {"width": int(composite.shape[1]), "height": int(composite.shape[0])},
    }
    (out_dir / "sample.json").write_text(_json(public), encoding="utf-8")
    hidden = {
        "origin": "outside",
        "format": OUTSIDE_FORMAT,
        "doc_id": doc.doc_id,
        "composite_made": ref.composite is None,
        "sha256": {
            "composite": ref.composite.sha256 if ref.composite else None,
            "pieces": [p.sha256 for p in ref.pieces],
            "truth": ref.truth.sha256,
        },
        "truth_format": ref.truth_format,
    }
    (out_dir / "hidden.json").write_text(_json(hidden), encoding="utf-8")
