"""Flat-Folder's designs as OrigamiBench uses them: the pinned manifest, categories, tiers.

The package ships ``data/flat_folder/``: ``manifest.json`` (the 366 instagram designs at a
pinned upstream commit, each with its SHA-256 and the SHA-256 of every later upstream
revision), ``categories.yaml`` (one category per design) and ``tiers.yaml`` (thresholds on
the FOLD file's vertex and crease counts). A file is recognised as one of these designs by
its bytes alone, wherever it lies, so a fetched folder and a local copy of the same files
give the same designs.

:func:`default_folder` is where ``shredfold designs fetch`` writes and where a spec's
``designs: {flat_folder: true}`` reads: ``$SHREDFOLD_CACHE/flat-folder/<commit>``, the cache
defaulting to ``$XDG_CACHE_HOME/shredfold`` and then ``~/.cache/shredfold``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from shredfold.download import CACHE_ENV, cache_root
from shredfold.store import sha256_bytes

MARKER = ".shredfold-flat-folder.json"  # written by `designs fetch`; says the folder is its own


@dataclass(frozen=True)
class Entry:
    """One design of the manifest."""

    path: str  # in the upstream repository, e.g. examples/instagram/001_traditional_Sailboat.fold
    sha256: str
    title: str
    category: str
    later: tuple[tuple[str, str], ...]  # (commit, sha256) of each later upstream revision

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        return self.name.rsplit(".", 1)[0]


@dataclass(frozen=True)
class Match:
    """What a file's bytes are: a manifest design at the pinned commit, or a later revision."""

    entry: Entry
    revision: str | None  # None: the pinned file; else the later upstream commit it matches


@dataclass(frozen=True)
class Manifest:
    upstream: str
    commit: str
    folder: str
    entries: tuple[Entry, ...]
    _by_sha: dict[str, Match]

    def identify(self, data: bytes) -> Match | None:
        return self._by_sha.get(sha256_bytes(data))

    def by_name(self) -> dict[str, Entry]:
        return {e.name: e for e in self.entries}


def _data(name: str) -> str:
    return (resources.files("shredfold.origami_bench") / "data" / "flat_folder" / name).read_text(encoding="utf-8")


@cache
def manifest() -> Manifest:
    raw = json.loads(_data("manifest.json"))
    cats = yaml.safe_load(_data("categories.yaml"))["designs"]
    entries = tuple(
        Entry(
            path=d["path"],
            sha256=d["sha256"],
            title=d["title"],
            category=str(cats[d["path"]]),
            later=tuple((r["commit"], r["sha256"]) for r in d.get("later_revisions", [])),
        )
        for d in raw["designs"]
    )
    by_sha: dict[str, Match] = {}
    for e in entries:
        for commit, sha in e.later:
            by_sha.setdefault(sha, Match(e, commit))
    for e in entries:  # the pinned bytes win over a later revision with the same bytes
        by_sha[e.sha256] = Match(e, None)
    return Manifest(raw["upstream"], raw["commit"], raw["folder"], entries, by_sha)


@cache
def _tiers() -> dict[str, Any]:
    return dict(yaml.safe_load(_data("tiers.yaml")))


def data_digest() -> str:
    """SHA-256 of the three data files: what a catalogue of these designs depends on."""
    text = "\0".join(_data(n) for n in ("manifest.json", "categories.yaml", "tiers.yaml"))
    return sha256_bytes(text.encode("utf-8"))


def fold_counts(meta: dict[str, Any]) -> tuple[int, int]:
    """Vertices and creases as ``tiers.yaml`` counts them: ``vertices_coords``, and edges
    whose assignment is not B (the sheet's outline)."""
    edges = meta.get("edges_vertices") or []
    letters = meta.get("edges_assignment") or ["U"] * len(edges)
    return len(meta.get("vertices_coords") or []), sum(1 for a in letters if str(a).upper() != "B")


def tier(vertices: int, creases: int) -> str:
    """The paper's tier of a design from its FOLD file's counts (``tiers.yaml``)."""
    t = _tiers()
    hard, easy = t["hard"], t["easy"]
    if vertices > hard["vertices_above"] or creases > hard["creases_above"]:
        return "hard"
    if vertices <= easy["vertices_at_most"] and creases <= easy["creases_at_most"]:
        return "easy"
    return "medium"


def default_folder() -> Path:
    """Where ``shredfold designs fetch`` writes by default and ``flat_folder: true`` reads."""
    return cache_root() / "flat-folder" / manifest().commit


def fetched_folder() -> Path:
    """The fetched designs for a spec's ``flat_folder: true``; a one-line error if absent."""
    folder = default_folder()
    if not (folder / MARKER).is_file():
        raise FileNotFoundError(
            f"Flat-Folder's designs are not at {folder}: run `shredfold designs fetch` "
            f"(or set {CACHE_ENV} to the cache folder they were fetched under)"
        )
    return folder
