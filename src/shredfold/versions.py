"""Installed package versions and recorded file hashes, read without parsing every package's
metadata (planning reads a dozen versions for its keys; ``importlib.metadata.version`` parses
a METADATA file with the email package each time).

A wheel installs ``<name>-<version>.dist-info``: the folder name gives the version, and its
RECORD the SHA-256 of every file the wheel installed.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import sys
from importlib import metadata
from pathlib import Path


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.cache
def _dist_infos() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in names:
            if n.endswith(".dist-info") and "-" in n:
                found.setdefault(_normal(n[: -len(".dist-info")].rsplit("-", 1)[0]), Path(entry) / n)
    return found


def version(dist: str) -> str:
    """The installed version of ``dist``, or ``"absent"``."""
    info = _dist_infos().get(_normal(dist))
    if info is not None:
        return info.name[: -len(".dist-info")].rsplit("-", 1)[1]
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def recorded_sha256(dist: str, path: Path) -> str | None:
    """The SHA-256 (hex) that ``dist``'s RECORD lists for the installed file ``path``, when
    the file still has the recorded size; None when it cannot be told (then hash it)."""
    info = _dist_infos().get(_normal(dist))
    if info is None or not (info / "RECORD").is_file():
        return None
    rel = os.path.relpath(path, info.parent)
    for line in (info / "RECORD").read_text(encoding="utf-8").splitlines():
        name, _, rest = line.partition(",")
        if name != rel:
            continue
        digest, _, size = rest.partition(",")
        if not digest.startswith("sha256=") or not size.isdigit() or int(size) != path.stat().st_size:
            return None
        raw = base64.urlsafe_b64decode(digest[len("sha256="):] + "==")
        return raw.hex()
    return None
