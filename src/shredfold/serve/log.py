"""Reading the request log ``shredfold serve`` writes (one JSON line per request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_log(path: Path) -> list[dict[str, Any]]:
    """The request log as a list of entries (for tests and audits)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answered_twice(entries: list[dict[str, Any]]) -> list[str]:
    """Body hashes that were answered successfully (HTTP 200, no fault) more than once."""
    seen: dict[str, int] = {}
    for e in entries:
        if e.get("status") == 200 and e.get("fault") == "ok" and not e.get("client_gone"):
            seen[e["hash"]] = seen.get(e["hash"], 0) + 1
    return sorted(h for h, n in seen.items() if n > 1)
