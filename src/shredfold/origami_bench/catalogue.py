"""A spec's designs, cached: what its sources give, with tiers, and the files that failed.

Planning needs every design (item and target keys hash it). Flat-Folder's designs cost no
engine work (their counts, categories, tiers and whether they fold flat ship with the
package, :mod:`.known`), nor does a folder's (each file is parsed for its counts and
metadata; whether it folds flat is a job of its own, :mod:`shredfold.tasks.origamibench.fullstep`),
but procedural sequences are replayed with the engine. The catalogue is therefore cached in
the store under a key of everything that shapes it — the sources' settings, where each
folder is and the bytes of every design file and of the category map, the package's design
data, the engine version — and a cached catalogue is read back with pydantic alone. Tiers
are applied after reading (thresholds are cheap to change and do not shape the designs).

Whoever plans decides whether the cache may be written: the Snakefile writes it (it owns
``results/``), and so does ``shredfold plan`` where a store is given to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench import flat_folder
from shredfold.origami_bench.design import Design, builtin_folder, tier_of
from shredfold.spec import OrigamiBenchSpec
from shredfold.store import Store, content_key, sha256_file

# 4: designs name their files (no segments); folder designs are validated by jobs
CATALOGUE_STAGE, CATALOGUE_VERSION = "origami_catalogue", 4

_DESIGNS = TypeAdapter(list[Design])


@dataclass(frozen=True)
class Catalogue:
    designs: tuple[Design, ...]
    invalid: tuple[str, ...] = ()  # "file: cause" for every design file that cannot be used


def _files(folder: Path) -> dict[str, Any]:
    """Where a folder is (designs name their files by absolute path) and every design file's
    SHA-256."""
    from shredfold.origami_bench.designs import design_files

    return {
        "at": str(folder.resolve()),
        "files": [{"file": p.relative_to(folder).as_posix(), "sha256": sha256_file(p)} for p in design_files(folder)],
    }


def _builtin_files() -> dict[str, Any]:
    return _files(builtin_folder())


def catalogue_key(ob: OrigamiBenchSpec, seed: int) -> str:
    src = ob.designs
    params: dict[str, Any] = {"engine": ENGINE_VERSION}
    if src.builtin:
        params["builtin"] = _builtin_files()
    if src.procedural:
        params["procedural"] = {"count": src.procedural, "folds": list(src.procedural_folds), "seed": seed}
    if src.flat_folder:
        params["flat_folder"] = _files(flat_folder.fetched_folder())
    if src.folder is not None:
        params["folder"] = _files(src.folder)
        params["categories"] = sha256_file(src.categories) if src.categories else None
    if src.folder is not None or src.flat_folder:
        params["flat_folder_data"] = flat_folder.data_digest()
    return content_key(CATALOGUE_STAGE, CATALOGUE_VERSION, params)


def _make(ob: OrigamiBenchSpec, seed: int) -> Catalogue:
    from shredfold.origami_bench import designs as make

    src = ob.designs
    out: list[Design] = []
    invalid: list[str] = []
    if src.builtin:
        out += make.builtin_cached()
    if src.procedural:
        out += make.procedural_designs(src, seed)
    if src.flat_folder:
        found, errors = make.folder_designs(flat_folder.fetched_folder(), None, flat_folder_only=True)
        out += found
        invalid += [str(e) for e in errors]
    if src.folder is not None:
        found, errors = make.folder_designs(src.folder, src.categories)
        out += found
        invalid += [str(e) for e in errors]
    return Catalogue(tuple(out), tuple(invalid))


def load_catalogue(
    ob: OrigamiBenchSpec, seed: int, store: Store | None = None, *, write: bool = False, key: str | None = None
) -> Catalogue:
    """Every design of the spec in source order (built-in, procedural, Flat-Folder, folder),
    with tiers; ``key`` is :func:`catalogue_key`'s, where the caller has it."""
    raw: Catalogue | None = None
    if store is not None and key is None:
        key = catalogue_key(ob, seed)
    if store is not None and key is not None and store.has(CATALOGUE_STAGE, key):
        obj = store.get_json(CATALOGUE_STAGE, key)
        raw = Catalogue(tuple(_DESIGNS.validate_python(obj["designs"])), tuple(obj["invalid"]))
    if raw is None:
        raw = _make(ob, seed)
        if store is not None and key is not None and write:
            store.put_json(
                CATALOGUE_STAGE,
                key,
                {"designs": [d.model_dump(mode="json") for d in raw.designs], "invalid": list(raw.invalid)},
            )
    # Flat-Folder's designs come with the paper's tier (tiers.yaml); the spec's thresholds
    # tier the rest
    tiered = tuple(
        d if d.source == "flat_folder" else d.model_copy(update={"tier": tier_of(d.vertices, d.creases, ob.tiers)})
        for d in raw.designs
    )
    return Catalogue(tiered, raw.invalid)
