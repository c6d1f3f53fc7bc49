"""What ``shredfold designs fetch`` and ``shredfold weights fetch`` share: the user's cache
folder and a bounded download that hashes what it copies.

The cache is ``$SHREDFOLD_CACHE``, else ``$XDG_CACHE_HOME/shredfold``, else
``~/.cache/shredfold`` (set ``SHREDFOLD_CACHE`` for a shared or cluster-wide copy: the
pipeline's jobs must see the same folder). Only ``https``, ``http`` and ``file`` URLs are
opened; a download stops as soon as it passes its byte cap.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

CACHE_ENV = "SHREDFOLD_CACHE"
SCHEMES = ("https", "http", "file")
TIMEOUT_S = 60.0  # per blocking read, not for the whole download


class FetchError(Exception):
    """Why a fetch was refused; one message naming the file, URL or member and the cause."""


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shredfold"


def download(url: str, dest: IO[bytes], max_bytes: int) -> str:
    """Copy ``url`` into ``dest``, refusing more than ``max_bytes``; its SHA-256."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in SCHEMES:
        raise FetchError(f"{url}: not an {', '.join(SCHEMES)} URL")
    h = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:  # noqa: S310 - scheme checked above
            for chunk in iter(lambda: resp.read(1 << 20), b""):
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"{url}: refused: larger than {max_bytes} bytes")
                h.update(chunk)
                dest.write(chunk)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"{url}: download failed ({reason})") from None
    return h.hexdigest()
