"""Load documents: the built-in corpus, a user's folder, or a JSONL file.

Every loader returns :class:`~shredfold.corpus.document.Document` values sorted by
``doc_id`` and raises :class:`CorpusError` with a message that names the file (and line,
for JSONL) and the cause. Texts are normalised the same way everywhere (UTF-8, no BOM,
``\\n`` newlines) so one document has one content key whichever way it was loaded.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from shredfold.corpus.document import DOMAIN_INFO, DOMAINS, Document

if TYPE_CHECKING:
    # Only for annotations: importing spec at run time would make a cycle as soon as
    # the corpus package re-exports this module (spec imports corpus.document).
    from shredfold.spec import CorpusSource

__all__ = [
    "FILE_EXTENSIONS",
    "CorpusError",
    "decode_text",
    "load_builtin",
    "load_corpus",
    "load_folder",
    "load_jsonl",
    "make_document",
    "markdown_table_to_html",
]

FILE_EXTENSIONS: dict[str, tuple[str, ...]] = {d: i.extensions for d, i in DOMAIN_INFO.items()}
"""File extensions accepted per domain in a corpus folder (lower-case, with the dot)."""

JSONL_KEYS = ("id", "domain", "text", "meta")
_REQUIRED_KEYS = ("id", "domain", "text")

# A document is one page; reading is bounded whatever a folder holds.
MAX_DOCUMENT_BYTES = 4 * 2**20

# Folders that tools leave next to sources; never documents.
_SKIP_DIRS = frozenset({"__pycache__"})

_TABLE_OPEN = re.compile(r"<table\b", re.IGNORECASE)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.IGNORECASE)
_MD_DELIMITER_CELL = re.compile(r"^:?-+:?$")
_MD_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


class CorpusError(ValueError):
    """A corpus that cannot be used; the message names the file (and line) and the cause."""


# ---------------------------------------------------------------- text checks


def decode_text(raw: bytes, where: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        raise CorpusError(f"{where}: not UTF-8 text (byte 0x{bad} at offset {exc.start})") from None
    return _normalise(text)


def _normalise(text: str) -> str:
    # Windows line endings and a BOM would change the content key without changing
    # what is drawn on the page.
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _table_html(text: str, where: str) -> str:
    """The single ``<table>...</table>`` element in ``text`` (surrounding markup dropped)."""
    opens = [m.start() for m in _TABLE_OPEN.finditer(text)]
    if not opens:
        raise CorpusError(f"{where}: no <table> element (a table document is one HTML <table>)")
    if len(opens) > 1:
        raise CorpusError(
            f"{where}: {len(opens)} <table> elements (nested or several); expected exactly one"
        )
    closes = [m.end() for m in _TABLE_CLOSE.finditer(text, opens[0])]
    if not closes:
        raise CorpusError(f"{where}: <table> is never closed with </table>")
    return text[opens[0] : closes[-1]]


def _split_md_row(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _MD_UNESCAPED_PIPE.split(body)]


def _is_md_delimiter(line: str) -> bool:
    return "-" in line and all(_MD_DELIMITER_CELL.match(c) for c in _split_md_row(line))


def markdown_table_to_html(text: str, where: str = "<text>") -> str:
    """Convert one Markdown pipe table to the HTML ``<table>`` form the corpus uses.

    The text must hold exactly one table (a header row, a ``|---|`` delimiter row, body
    rows) and nothing else but blank lines; alignment colons are accepted and dropped.
    Short body rows are padded with empty cells as in GitHub Markdown; long ones are an
    error because their extra cells would silently vanish.
    """
    lines = text.split("\n")
    header_at = next(
        (i for i in range(len(lines) - 1) if "|" in lines[i] and _is_md_delimiter(lines[i + 1])),
        None,
    )
    if header_at is None:
        raise CorpusError(f"{where}: no Markdown pipe table (a header row followed by a |---| row)")
    header = _split_md_row(lines[header_at])
    if len(_split_md_row(lines[header_at + 1])) != len(header):
        raise CorpusError(
            f"{where}:{header_at + 2}: the delimiter row has "
            f"{len(_split_md_row(lines[header_at + 1]))} cells, the header has {len(header)}"
        )
    end = header_at + 2
    body: list[list[str]] = []
    # As in GitHub Markdown, a table runs to the first blank line, pipes or not.
    while end < len(lines) and lines[end].strip():
        cells = _split_md_row(lines[end])
        if len(cells) > len(header):
            raise CorpusError(
                f"{where}:{end + 1}: row has {len(cells)} cells, the header has {len(header)}"
            )
        body.append(cells + [""] * (len(header) - len(cells)))
        end += 1
    for i, line in enumerate(lines):
        if line.strip() and not header_at <= i < end:
            raise CorpusError(
                f"{where}:{i + 1}: text outside the Markdown table "
                "(a table file holds one table and nothing else)"
            )

    def row(tag: str, cells: list[str]) -> str:
        inner = "".join(f"<{tag}>{html.escape(c, quote=False)}</{tag}>" for c in cells)
        return f"    <tr>{inner}</tr>"

    out = ["<table>", "  <thead>", row("th", header), "  </thead>", "  <tbody>"]
    out.extend(row("td", cells) for cells in body)
    out.extend(["  </tbody>", "</table>"])
    return "\n".join(out)


def make_document(
    doc_id: str, domain: str, text: str, source: str, where: str, suffix: str = ""
) -> Document:
    if not text.strip():
        raise CorpusError(f"{where}: empty document")
    if domain == "table":
        # A .md file may also hold an HTML table: Markdown allows raw HTML blocks.
        pipes = suffix == ".md" and not _TABLE_OPEN.search(text)
        convert = markdown_table_to_html if pipes else _table_html
        text = convert(text, where)
    return Document(doc_id=doc_id, domain=domain, text=text, source=source)  # type: ignore[arg-type]


def _check_domain(domain: str) -> None:
    if domain not in DOMAINS:
        raise CorpusError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


# ---------------------------------------------------------------- built-in


@functools.cache
def _builtin(domain: str) -> tuple[Document, ...]:
    folder = resources.files("shredfold.corpus").joinpath("builtin").joinpath(domain)
    if not folder.is_dir():
        return ()
    docs = []
    for entry in folder.iterdir():
        suffix = _suffix(entry.name)
        if entry.name.startswith(".") or not entry.is_file():
            continue
        if suffix not in FILE_EXTENSIONS[domain]:
            continue
        stem = entry.name[: -len(suffix)]
        where = f"built-in {domain}/{entry.name}"
        text = decode_text(entry.read_bytes(), where)
        docs.append(make_document(f"{domain}/{stem}", domain, text, "builtin", where, suffix))
    return tuple(sorted(docs, key=lambda d: d.doc_id))


def load_builtin(domain: str) -> list[Document]:
    """The documents shipped with shredfold for ``domain``, sorted by ``doc_id``."""
    _check_domain(domain)
    return list(_builtin(domain))


# ---------------------------------------------------------------- a user's folder


def load_folder(path: str | os.PathLike[str]) -> list[Document]:
    """Documents from a folder whose sub-folders are domains (``news_en/``, ``table/``...).

    Files may sit in nested folders; ``doc_id`` is ``<domain>/<relative path without
    extension>`` and ``source`` is ``"folder"``. Hidden files and folders are skipped.
    """
    root = Path(path)
    if not root.is_dir():
        raise CorpusError(f"{root}: not a folder")
    real = root.resolve()
    docs: list[Document] = []
    origin: dict[str, Path] = {}
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        _check_link(entry, real, root)
        if not entry.is_dir():
            raise CorpusError(
                f"{entry}: documents must be inside a domain sub-folder ({', '.join(DOMAINS)})"
            )
        if entry.name not in DOMAINS:
            raise CorpusError(
                f"{entry}: unknown domain folder {entry.name!r}; allowed: {', '.join(DOMAINS)}"
            )
        domain = entry.name
        allowed = FILE_EXTENSIONS[domain]
        for dirpath, dirnames, filenames in os.walk(entry):
            # Prune in place so os.walk never descends into hidden or tool folders.
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS]
            for d in dirnames:
                if (Path(dirpath) / d).is_symlink():  # os.walk would pass it by in silence
                    _check_link(Path(dirpath) / d, real, root)
                    raise CorpusError(f"{Path(dirpath) / d}: a link to a folder; put the folder itself in the corpus")
            for name in filenames:
                if name.startswith("."):
                    continue
                file = Path(dirpath) / name
                _check_link(file, real, root)
                if not file.is_file():
                    raise CorpusError(f"{file}: not a regular file")
                suffix = _suffix(name)
                if suffix not in allowed:
                    raise CorpusError(
                        f"{file}: unsupported file type {suffix or '(no extension)'!r} for "
                        f"domain {domain!r}; expected {', '.join(allowed)}"
                    )
                rel = file.relative_to(entry).as_posix()
                doc_id = f"{domain}/{rel[: -len(suffix)]}"
                if doc_id in origin:
                    raise CorpusError(f"{file}: same document id {doc_id!r} as {origin[doc_id]}")
                origin[doc_id] = file
                try:
                    with open(file, "rb") as fh:
                        raw = fh.read(MAX_DOCUMENT_BYTES + 1)
                except OSError as exc:
                    raise CorpusError(f"{file}: cannot read: {exc.strerror}") from None
                if len(raw) > MAX_DOCUMENT_BYTES:
                    raise CorpusError(f"{file}: larger than {MAX_DOCUMENT_BYTES:,} bytes (a document is one page)")
                text = decode_text(raw, str(file))
                docs.append(make_document(doc_id, domain, text, "folder", str(file), suffix))
    return sorted(docs, key=lambda d: d.doc_id)


def _check_link(entry: Path, real_root: Path, root: Path) -> None:
    """A link in a corpus folder must stay inside it: one to ``/etc/passwd`` would put that
    file's content into the samples, the plan and the release."""
    if entry.is_symlink() and not entry.resolve().is_relative_to(real_root):
        raise CorpusError(f"{entry}: a link that leaves the corpus folder {root} (to {entry.resolve()}); refused")


# ---------------------------------------------------------------- JSONL


def load_jsonl(path: str | os.PathLike[str]) -> list[Document]:
    """Documents from a JSONL file: one object per line with ``id``, ``domain``, ``text``.

    An optional ``meta`` object is accepted and ignored; any other key is an error, so a
    misspelt field is caught instead of silently dropped. ``doc_id`` is ``id`` as given
    and ``source`` is ``"jsonl"``. Blank lines are skipped.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from None
    docs: list[Document] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            obj = json.loads(line.decode("utf-8").removeprefix("\ufeff"))
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{where}: not UTF-8 text (offset {exc.start} in line)") from None
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{where}: bad JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise CorpusError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - set(JSONL_KEYS))
        if unknown:
            raise CorpusError(
                f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                f"allowed: {', '.join(JSONL_KEYS)}"
            )
        for key in _REQUIRED_KEYS:
            if key not in obj:
                raise CorpusError(f"{where}: missing field {key!r}")
            if not isinstance(obj[key], str) or not obj[key].strip():
                raise CorpusError(f"{where}: field {key!r} must be a non-empty string")
        if "meta" in obj and not isinstance(obj["meta"], dict):
            raise CorpusError(f"{where}: field 'meta' must be a JSON object")
        doc_id, domain = obj["id"], obj["domain"]
        if domain not in DOMAINS:
            raise CorpusError(
                f"{where}: unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}"
            )
        if doc_id in first_line:
            raise CorpusError(
                f"{where}: duplicate id {doc_id!r} (first on line {first_line[doc_id]})"
            )
        first_line[doc_id] = number
        docs.append(make_document(doc_id, domain, _normalise(obj["text"]), "jsonl", where))
    return sorted(docs, key=lambda d: d.doc_id)


# ---------------------------------------------------------------- selection


def load_corpus(
    source: CorpusSource, domains: Iterable[str], per_domain: int
) -> dict[str, list[Document]]:
    """The first ``per_domain`` documents (in ``doc_id`` order) of each domain.

    A folder or JSONL file, when given, replaces the built-in set. The result keeps the
    order of ``domains``. Raises :class:`CorpusError` naming every domain that has fewer
    documents than asked, with both counts.
    """
    wanted = list(domains)
    for domain in wanted:
        _check_domain(domain)
    if per_domain < 1:
        raise CorpusError(f"documents per domain must be at least 1, got {per_domain}")

    by_domain: dict[str, list[Document]] = {d: [] for d in wanted}
    if source.folder is not None or source.jsonl is not None:
        if source.folder is not None:
            where = f"folder {source.folder}"
            docs = load_folder(source.folder)
        else:
            where = f"JSONL file {source.jsonl}"
            docs = load_jsonl(source.jsonl)
        for doc in docs:
            if doc.domain in by_domain:
                by_domain[doc.domain].append(doc)
    elif source.builtin:
        where = "built-in corpus"
        for domain in wanted:
            by_domain[domain] = load_builtin(domain)
    else:
        raise CorpusError("no corpus source: set builtin: true, or give a folder or a jsonl file")

    short = [
        f"{domain}: asked for {per_domain}, found {len(docs)}"
        for domain, docs in by_domain.items()
        if len(docs) < per_domain
    ]
    if short:
        raise CorpusError(f"too few documents in the {where}: " + "; ".join(short))
    # Loaders already sort; sorting again keeps the contract independent of them.
    return {
        domain: sorted(docs, key=lambda d: d.doc_id)[:per_domain]
        for domain, docs in by_domain.items()
    }
