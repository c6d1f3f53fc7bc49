"""Archives laid out like GitHub's tarball of Flat-Folder (``<repo>-<commit>/examples/…``),
built from the shared designs so that fetch tests never need the network."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from pathlib import Path

from shredfold.origami_bench.flat_folder import manifest

TOP = f"flat-folder-{manifest().commit}"
FOLDER = manifest().folder

# Shared designs that validate in well under a second, two or three of each tier; 013 is a
# later upstream revision of the pinned file (the shared copy was taken after a re-save).
SMALL = (
    "009_ku_Unassigned_Triangle_Pleat.fold",  # easy
    "013_mitanioripa_Medal.fold",  # easy, revised upstream
    "067_traditionaloripa_damashi_bune.fold",  # easy
    "115_tanaka_Dice_13.fold",  # medium
    "196_komatsu_Giraffe.fold",  # medium
    "145_beber_Hexagonal_Tessellation_of_Dodecagons_#1.fold",  # hard
    "172_tanaka_irt.fold",  # hard
)


def write_archive(out: Path, members: Iterable[tuple[str, bytes]]) -> str:
    """A .tar.gz of ``(path inside the archive, bytes)``; its ``file://`` URL."""
    with tarfile.open(out, "w:gz", compresslevel=1) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.resolve().as_uri()


def design_members(instagram: Path, names: Iterable[str] | None = None) -> list[tuple[str, bytes]]:
    """The shared designs (all, or ``names``) where the upstream tarball has them, and a file
    beside them that fetch must leave alone."""
    paths = sorted(instagram.glob("*.fold")) if names is None else [instagram / n for n in names]
    members = [(f"{TOP}/{FOLDER}/{p.name}", p.read_bytes()) for p in paths]
    return [(f"{TOP}/README.md", b"# flat-folder\n"), *members]
