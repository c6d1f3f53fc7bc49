"""Write the manifest of Flat-Folder's 366 instagram designs at a pinned upstream commit.

    python bench/flat_folder_manifest.py GIT_DIR --commit SHA [--out PATH]

GIT_DIR is a clone (or bare mirror) of github.com/origamimagiro/flat-folder. For every
``examples/instagram/*.fold`` at the commit: its path, SHA-256, title and author (FOLD
``file_title`` / ``file_author``), vertex and crease counts (the tiers are thresholds on
these), and the revisions upstream made to the file after the commit (their commits and
SHA-256), so a copy taken later can be told from a corrupt one. Run by hand; the output is
package data.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

UPSTREAM = "https://github.com/origamimagiro/flat-folder"
FOLDER = "examples/instagram"
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/shredfold/origami_bench/data/flat_folder/manifest.json"

# How the commit was chosen (bench/solver_notes.md has the evidence).
WHY = (
    "the last commit whose examples/instagram_data.csv matches its own solver on every "
    "design: Flat-Folder at this commit reproduces the csv's vertices, edges, faces, "
    "variables, states and component counts (limit 10000) on its own files; its child "
    "84e8c8f (sweep-line rewrite) and every later commit give 059 Leopard Frog other "
    "counts (34124 or 34004 variables, 11337408 states against 33868 and 56687040) or an "
    "error, and the csv was never regenerated"
)


def _git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", "-c", "core.quotepath=off", *args], check=True, capture_output=True).stdout


def design_entry(path: str, blob: bytes) -> dict[str, object]:
    data = json.loads(blob)
    letters = data.get("edges_assignment") or ["U"] * len(data["edges_vertices"])
    return {
        "path": path,
        "sha256": hashlib.sha256(blob).hexdigest(),
        "title": data.get("file_title", ""),
        "author": data.get("file_author", ""),
        "vertices": len(data["vertices_coords"]),
        # every line that is not the sheet's outline
        "creases": sum(1 for a in letters if str(a).upper() != "B"),
    }


def build(git_dir: str, commit: str) -> dict[str, object]:
    commit = _git(git_dir, "rev-parse", commit).decode().strip()
    head = _git(git_dir, "rev-parse", "HEAD").decode().strip()
    names = [n for n in _git(git_dir, "ls-tree", "--name-only", commit, f"{FOLDER}/").decode().splitlines() if n.endswith(".fold")]
    designs = []
    for path in sorted(names):
        entry = design_entry(path, _git(git_dir, "show", f"{commit}:{path}"))
        later = _git(git_dir, "log", "--format=%H", "--reverse", f"{commit}..{head}", "--", path).decode().split()
        revisions = []
        for rev in later:
            try:
                blob = _git(git_dir, "show", f"{rev}:{path}")
            except subprocess.CalledProcessError:
                continue  # deleted at that revision
            revisions.append({"commit": rev, "sha256": hashlib.sha256(blob).hexdigest()})
        if revisions:
            entry["later_revisions"] = revisions
        designs.append(entry)
    csv_blob = _git(git_dir, "show", f"{commit}:examples/instagram_data.csv")
    return {
        "upstream": UPSTREAM,
        "commit": commit,
        "why_this_commit": WHY,
        "folder": FOLDER,
        "reference_csv": {"path": "examples/instagram_data.csv", "sha256": hashlib.sha256(csv_blob).hexdigest()},
        "designs": designs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("git_dir")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    manifest = build(args.git_dir, args.commit)
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=".manifest-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, args.out)
    os.chmod(args.out, 0o644)
    print(f"{len(manifest['designs'])} designs at {manifest['commit'][:7]} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
