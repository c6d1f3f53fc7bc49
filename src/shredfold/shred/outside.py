"""Outside sample sets: ShredBench samples made elsewhere (a data set released by others,
photographs of paper a user really shredded), read from a folder or a JSONL manifest.

Folder layout (``shred.samples.folder``)::

    <root>/<domain>/<n>/<id>/
        composite.png | .jpg | .jpeg    one image of all the scraps (a table-top photograph)
        piece_<k>.png | .jpg | .jpeg    the scraps one image each, presented in name order
        truth.md | truth.txt | truth.html   the ground truth, exactly one

A sample has a composite, or ``n`` pieces, or both. ``<domain>`` is one of the domains of
:mod:`shredfold.corpus.document`, ``<n>`` the number of scraps (a positive integer), ``<id>``
the document's id (the same id at several N is the same document, as with rendered ones).
Files and folders starting with ``.`` are skipped, as are plain files directly under
``<root>`` (a README, a licence); anything else off the layout is an error.

Manifest (``shred.samples.manifest``), one JSON object a line::

    {"id": "memo-1", "domain": "news_en", "n": 8, "images": ["memo-1.jpg"], "truth": "memo-1.md"}

``images`` is one composite (one path, any ``n``) or the ``n`` pieces in presented order;
paths are relative to the manifest and must stay inside its folder. ``truth`` is a path, or
the truth itself: ``{"text": "...", "format": "md" | "txt" | "html"}``.

Truth: a table's is ``.html`` (one ``<table>``) or ``.md`` (one pipe table, or an HTML table);
prose's and code's ``.md`` or ``.txt``. What each protocol scores against is decided when the
sample is stored (:mod:`.outside_sample`).

Keys come from the bytes: the SHA-256 of every image and of the truth, with the id, domain,
n, the truth's format, and this module's format version and the image encoders that store
them — never a path, so a moved or copied folder keeps its keys, and one changed byte makes
a new sample. Every problem is an :class:`OutsideSetError` naming the file (and line) and
the cause. Everything read is bounded (:data:`MAX_IMAGE_BYTES`, :data:`MAX_IMAGE_PIXELS`,
:data:`MAX_TRUTH_BYTES`, :data:`MAX_MANIFEST_BYTES`, :data:`MAX_SAMPLES`).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from shredfold.corpus.document import DOMAINS, Document, domain_kind
from shredfold.corpus.loaders import CorpusError, decode_text, make_document
from shredfold.errors import InputError
from shredfold.progress import current as current_progress
from shredfold.shred.formats import COMPOSITE_JPEG, LOSSLESS_PNG
from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.spec import SampleSource
from shredfold.store import Store, content_key
from shredfold.versions import version

OUTSIDE_FORMAT = 3  # 3: a JPEG photograph kept as given, its metadata cut
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
TRUTH_SUFFIXES = (".md", ".txt", ".html")
MAX_N = 256  # as the spec's granularities
MAX_IMAGE_BYTES = 64 * 2**20
MAX_IMAGE_PIXELS = 64_000_000  # a 64-megapixel photograph; Pillow's bomb guard is 89 M
MAX_TRUTH_BYTES = 2**20  # the paper's longest tables are ~15,000 characters
MAX_MANIFEST_BYTES = 16 * 2**20
MAX_SAMPLES = 100_000
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_PIECE = re.compile(r"piece_(.+)")

TruthFormat = Literal["md", "txt", "html"]


class OutsideSetError(InputError):
    """An outside sample set that cannot be used; the message names the file and the cause."""


CHECK_STAGE = "outside_image"
CHECK_VERSION = 1


@dataclass(frozen=True)
class Checks:
    """Images that passed the decode check, by content, kept in the store: every plan hashes
    every byte, but decoding a large photograph (a tenth of a second or more) is done once
    per content, not once per plan. Written only when the planner may write the store."""

    store: Store | None = None
    write: bool = False

    def _key(self, sha256: str) -> str:
        return content_key(CHECK_STAGE, CHECK_VERSION, {"sha256": sha256, "pillow": version("pillow")})

    def get(self, sha256: str) -> tuple[str, tuple[int, int]] | None:
        if self.store is None or not self.store.has(CHECK_STAGE, self._key(sha256)):
            return None
        obj = self.store.get_json(CHECK_STAGE, self._key(sha256))
        return str(obj["format"]), (int(obj["width"]), int(obj["height"]))

    def put(self, sha256: str, fmt: str, size: tuple[int, int]) -> None:
        if self.store is not None and self.write and not self.store.has(CHECK_STAGE, self._key(sha256)):
            self.store.put_json(CHECK_STAGE, self._key(sha256), {"format": fmt, "width": size[0], "height": size[1]})


class OutsideFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # where the plan found it, relative to the set's folder (source_root: a plan records no
    # absolute path); not part of the key. None: a truth given inline
    path: str | None
    sha256: str
    size: tuple[int, int] | None = None  # an image's width and height (for cost estimates)


class OutsideRef(BaseModel):
    """Where an outside sample's files are, and the hashes its key was made from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    composite: OutsideFile | None
    pieces: tuple[OutsideFile, ...]
    truth: OutsideFile
    truth_format: TruthFormat


@dataclass(frozen=True)
class OutsideSample:
    key: str
    doc: Document  # doc_id = the sample's id; text = the truth (a table's as HTML)
    n: int
    ref: OutsideRef


def outside_params(doc_id: str, domain: str, n: int, ref: OutsideRef) -> dict[str, Any]:
    return {
        "origin": "outside",
        "id": doc_id,
        "domain": domain,
        "n": n,
        "composite": ref.composite.sha256 if ref.composite else None,
        "pieces": [p.sha256 for p in ref.pieces],
        "truth": ref.truth.sha256,
        "truth_format": ref.truth_format,
        # the stored images are re-encoded (composite JPEG, pieces PNG): the encoders shape their bytes
        "encoding": {"composite": COMPOSITE_JPEG, "pieces": LOSSLESS_PNG},
        "pillow": version("pillow"),
    }


def outside_key(doc_id: str, domain: str, n: int, ref: OutsideRef) -> str:
    return content_key(SAMPLE_STAGE, OUTSIDE_FORMAT, outside_params(doc_id, domain, n, ref), [])


# ---------------------------------------------------------------- checks of one file


def _read_capped(path: Path, cap: int, what: str) -> bytes:
    if not path.is_file():
        raise OutsideSetError(f"{path}: missing ({what} not found)")
    size = path.stat().st_size
    if size > cap:
        raise OutsideSetError(f"{path}: {what} of {size:,} bytes is over the {cap:,}-byte limit")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise OutsideSetError(f"{path}: cannot read: {exc.strerror}") from None


def image_file(path: Path, checks: Checks = Checks()) -> OutsideFile:
    """An image the store can take: a PNG or JPEG that Pillow decodes, within the bounds."""
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise OutsideSetError(f"{path}: not an image file name (expected {', '.join(IMAGE_SUFFIXES)})")
    data = _read_capped(path, MAX_IMAGE_BYTES, "image")
    sha = hashlib.sha256(data).hexdigest()
    known = checks.get(sha)
    fmt, (w, h) = known if known is not None else _decode_check(path, data)
    if w * h > MAX_IMAGE_PIXELS:
        raise OutsideSetError(f"{path}: image of {w}x{h} = {w * h:,} pixels is over the {MAX_IMAGE_PIXELS:,}-pixel limit")
    if fmt not in ("PNG", "JPEG"):
        raise OutsideSetError(f"{path}: a {fmt} image; expected PNG or JPEG")
    if known is None:
        checks.put(sha, fmt, (w, h))
    return OutsideFile(path=str(path), sha256=sha, size=(w, h))


def _decode_check(path: Path, data: bytes) -> tuple[str, tuple[int, int]]:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt, (w, h) = img.format, img.size
            if w * h > MAX_IMAGE_PIXELS:  # before any decoding
                raise OutsideSetError(
                    f"{path}: image of {w}x{h} = {w * h:,} pixels is over the {MAX_IMAGE_PIXELS:,}-pixel limit"
                )
            img.verify()  # a PNG's chunks and CRCs, to the end
        if fmt == "JPEG":
            # verify() does not read a JPEG's scan: decode it at 1/8 scale (cheap), so a
            # truncated or corrupt photograph is refused here and not in a build job
            with Image.open(io.BytesIO(data)) as img:
                img.draft("RGB", (max(1, w // 8), max(1, h // 8)))
                img.load()
    except OutsideSetError:
        raise
    except Exception as exc:  # Pillow raises many types for a broken file; all mean the same
        raise OutsideSetError(f"{path}: not an image Pillow can read ({type(exc).__name__}: {exc})") from None
    return str(fmt), (w, h)


@dataclass(frozen=True)
class InlineTruth:
    """A truth given in the manifest itself: ``{"text": "...", "format": "md"|"txt"|"html"}``."""

    text: str
    format: str


def _check_truth_format(suffix: str, domain: str, where: str) -> None:
    if suffix not in TRUTH_SUFFIXES:
        raise OutsideSetError(f"{where}: not a truth format (expected {', '.join(TRUTH_SUFFIXES)})")
    kind = domain_kind(domain)
    if kind == "table" and suffix == ".txt":
        raise OutsideSetError(f"{where}: a table's truth is .html or .md (a <table> or a pipe table)")
    if kind != "table" and suffix == ".html":
        raise OutsideSetError(f"{where}: an HTML truth is for the table domain; {domain}'s is .md or .txt")


def truth_of(
    truth: Path | InlineTruth, doc_id: str, domain: str, where: str
) -> tuple[OutsideFile, TruthFormat, Document]:
    """The truth's hash, format and document. A truth given inline hashes as its UTF-8
    bytes: the same text as a file or inline is the same sample."""
    if isinstance(truth, InlineTruth):
        suffix, label = "." + str(truth.format).lower(), f"{where}: truth"
        _check_truth_format(suffix, domain, label)
        data = truth.text.encode("utf-8")
        if len(data) > MAX_TRUTH_BYTES:
            raise OutsideSetError(f"{label} of {len(data):,} bytes is over the {MAX_TRUTH_BYTES:,}-byte limit")
        path = None
    else:
        suffix, label = truth.suffix.lower(), str(truth)
        _check_truth_format(suffix, domain, label)
        data = _read_capped(truth, MAX_TRUTH_BYTES, "truth")
        path = str(truth)
    try:
        text = decode_text(data, label)
        doc = make_document(doc_id, domain, text, "outside", label, suffix)
    except CorpusError as exc:
        raise OutsideSetError(str(exc)) from None
    fmt: TruthFormat = suffix[1:]  # type: ignore[assignment]
    return OutsideFile(path=path, sha256=hashlib.sha256(data).hexdigest()), fmt, doc


def inside(root: Path, rel: Any, where: str) -> Path:
    """``rel`` under ``root``; absolute paths, ``..`` and links that leave it are refused."""
    if not isinstance(rel, str) or not rel:
        raise OutsideSetError(f"{where}: a path must be a non-empty string, got {rel!r}")
    if Path(rel).is_absolute():
        raise OutsideSetError(f"{where}: {rel!r} is absolute; paths are relative to the manifest")
    full = (root / rel).resolve()
    if not full.is_relative_to(root.resolve()):
        raise OutsideSetError(f"{where}: {rel!r} leaves the manifest's folder {root}")
    return full


def _check_labels(doc_id: Any, domain: Any, n: Any, where: str) -> None:
    if not isinstance(doc_id, str) or not _ID.fullmatch(doc_id):
        raise OutsideSetError(
            f"{where}: id {doc_id!r} is not 1-128 letters, digits, '.', '_' or '-' (starting with a letter or digit)"
        )
    if domain not in DOMAINS:
        raise OutsideSetError(f"{where}: unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise OutsideSetError(f"{where}: n {n!r} is not a whole number from 1 to {MAX_N}")


def make_outside(
    doc_id: str,
    domain: str,
    n: int,
    composite: Path | None,
    pieces: list[Path],
    truth: Path | InlineTruth,
    where: str,
    checks: Checks = Checks(),
) -> OutsideSample:
    _check_labels(doc_id, domain, n, where)
    if composite is None and not pieces:
        raise OutsideSetError(f"{where}: no image (a composite, or the {n} pieces)")
    if pieces and len(pieces) != n:
        raise OutsideSetError(f"{where}: n is {n} but there are {len(pieces)} piece images")
    truth_ref, fmt, doc = truth_of(truth, doc_id, domain, where)
    ref = OutsideRef(
        composite=image_file(composite, checks) if composite is not None else None,
        pieces=tuple(image_file(p, checks) for p in pieces),
        truth=truth_ref,
        truth_format=fmt,
    )
    return OutsideSample(outside_key(doc_id, domain, n, ref), doc, n, ref)


# ---------------------------------------------------------------- the folder layout


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise OutsideSetError(f"{folder}: cannot list: {exc.strerror}") from None


def _natural(name: str) -> tuple[Any, ...]:
    # piece_2 before piece_10, as a person numbering files expects
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _sample_folder(folder: Path, doc_id: str, domain: str, n: int, root: Path, checks: Checks) -> OutsideSample:
    composites: list[Path] = []
    pieces: list[Path] = []
    truths: list[Path] = []
    for f in _entries(folder):
        stem, suffix = f.stem.lower(), f.suffix.lower()
        if not f.resolve().is_relative_to(root.resolve()):
            raise OutsideSetError(f"{f}: a link that leaves the sample folder {root}")
        if not f.is_file():
            raise OutsideSetError(f"{f}: not part of the layout (a sample folder holds files only)")
        if stem == "composite" and suffix in IMAGE_SUFFIXES:
            composites.append(f)
        elif _PIECE.fullmatch(stem) and suffix in IMAGE_SUFFIXES:
            pieces.append(f)
        elif stem == "truth" and suffix in TRUTH_SUFFIXES:
            truths.append(f)
        else:
            raise OutsideSetError(
                f"{f}: not part of the layout (expected composite.png|jpg|jpeg, "
                "piece_<k>.png|jpg|jpeg, truth.md|txt|html)"
            )
    if len(composites) > 1:
        raise OutsideSetError(f"{folder}: {len(composites)} composite images; give one")
    if len(truths) != 1:
        what = "no truth file (truth.md, truth.txt or truth.html)" if not truths else f"{len(truths)} truth files; give one"
        raise OutsideSetError(f"{folder}: {what}")
    pieces.sort(key=lambda p: _natural(p.name))
    return make_outside(
        doc_id, domain, n, composites[0] if composites else None, pieces, truths[0], str(folder), checks
    )


def read_folder(root: Path, checks: Checks = Checks()) -> list[OutsideSample]:
    """Every sample of a folder laid out ``<domain>/<n>/<id>/``, in path order."""
    if not root.is_dir():
        raise OutsideSetError(f"{root}: not a folder")
    out: list[OutsideSample] = []
    for dom in _entries(root):
        if not dom.is_dir():
            continue  # a README or licence beside the domains
        if dom.name not in DOMAINS:
            raise OutsideSetError(f"{dom}: unknown domain {dom.name!r}; expected one of {', '.join(DOMAINS)}")
        for nd in _entries(dom):
            # canonical digits only: "08" beside "8" would be two folders for one N
            if not nd.is_dir() or not nd.name.isdigit() or nd.name != str(int(nd.name)) or not 1 <= int(nd.name) <= MAX_N:
                raise OutsideSetError(f"{nd}: expected a folder named by n, a whole number from 1 to {MAX_N}")
            for sd in _entries(nd):
                if not sd.is_dir():
                    raise OutsideSetError(f"{sd}: expected a folder per sample (<domain>/<n>/<id>/)")
                out.append(_sample_folder(sd, sd.name, dom.name, int(nd.name), root, checks))
                current_progress().advance()
                if len(out) > MAX_SAMPLES:
                    raise OutsideSetError(f"{root}: more than {MAX_SAMPLES:,} samples")
    if not out:
        raise OutsideSetError(f"{root}: no samples (expected <domain>/<n>/<id>/ folders)")
    return out


# ---------------------------------------------------------------- the manifest

_FIELDS = {"id", "domain", "n", "images", "truth"}


def _manifest_line(obj: Any, root: Path, where: str, checks: Checks) -> OutsideSample:
    if not isinstance(obj, dict):
        raise OutsideSetError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = sorted(_FIELDS - set(obj))
    if missing:
        raise OutsideSetError(f"{where}: missing field(s) {', '.join(missing)}")
    extra = sorted(set(obj) - _FIELDS)
    if extra:
        raise OutsideSetError(f"{where}: unknown field(s) {', '.join(extra)}")
    _check_labels(obj["id"], obj["domain"], obj["n"], where)
    images = obj["images"]
    if not isinstance(images, list) or not images:
        raise OutsideSetError(f"{where}: images must be a non-empty list of paths")
    n = obj["n"]
    paths = [inside(root, p, where) for p in images]
    if len(paths) == 1:
        composite, pieces = paths[0], []
    elif len(paths) == n:
        composite, pieces = None, paths
    else:
        raise OutsideSetError(f"{where}: n is {n} but {len(paths)} images (give one composite or the {n} pieces)")
    given = obj["truth"]
    if isinstance(given, dict):
        if set(given) != {"text", "format"} or not isinstance(given["text"], str) or not isinstance(given["format"], str):
            raise OutsideSetError(f'{where}: an inline truth is {{"text": "...", "format": "md"|"txt"|"html"}}')
        truth: Path | InlineTruth = InlineTruth(given["text"], given["format"])
    else:
        truth = inside(root, given, where)
    try:
        return make_outside(obj["id"], obj["domain"], n, composite, pieces, truth, where, checks)
    except OutsideSetError as exc:
        msg = str(exc)  # a file's problem, named after the line that lists it
        raise OutsideSetError(msg if msg.startswith(f"{where}:") else f"{where}: {msg}") from None


def read_manifest(path: Path, checks: Checks = Checks()) -> list[OutsideSample]:
    """Every sample a JSONL manifest lists, in line order; blank lines are skipped."""
    data = _read_capped(path, MAX_MANIFEST_BYTES, "manifest").removeprefix(b"\xef\xbb\xbf")  # a BOM
    root = path.parent
    out: list[OutsideSample] = []
    seen: dict[tuple[str, str, int], int] = {}
    for no, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{no}"
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise OutsideSetError(f"{where}: not UTF-8 text (offset {exc.start} in line)") from None
        except json.JSONDecodeError as exc:
            raise OutsideSetError(f"{where}: bad JSON: {exc.msg} (column {exc.colno})") from None
        sample = _manifest_line(obj, root, where, checks)
        ident = (sample.doc.domain, sample.doc.doc_id, sample.n)
        if ident in seen:
            raise OutsideSetError(
                f"{where}: duplicate id {ident[1]!r} at {ident[0]} N={ident[2]} (first on line {seen[ident]})"
            )
        seen[ident] = no
        out.append(sample)
        current_progress().advance()
        if len(out) > MAX_SAMPLES:
            raise OutsideSetError(f"{path}: more than {MAX_SAMPLES:,} samples")
    if not out:
        raise OutsideSetError(f"{path}: no samples (an empty manifest)")
    return out


def source_root(source: SampleSource) -> Path:
    """The folder an outside set's file paths are relative to: the set's folder, or the
    manifest's."""
    if source.folder is not None:
        return Path(source.folder)
    assert source.manifest is not None
    return Path(source.manifest).parent


def _relative(f: OutsideFile | None, root: Path) -> OutsideFile | None:
    if f is None or f.path is None:
        return f
    return f.model_copy(update={"path": Path(f.path).resolve().relative_to(root.resolve()).as_posix()})


def read_outside(source: SampleSource, checks: Checks = Checks()) -> list[OutsideSample]:
    """Every sample of the set, its files named relative to :func:`source_root`."""
    if source.folder is not None:
        samples = read_folder(Path(source.folder), checks)
    else:
        assert source.manifest is not None
        samples = read_manifest(Path(source.manifest), checks)
    root = source_root(source)
    out = []
    for s in samples:
        ref = s.ref.model_copy(update={
            "composite": _relative(s.ref.composite, root),
            "pieces": tuple(_relative(p, root) for p in s.ref.pieces),
            "truth": _relative(s.ref.truth, root),
        })  # fmt: skip
        out.append(OutsideSample(s.key, s.doc, s.n, ref))
    return out
