"""Helpers to drive the real Snakemake workflow in a scratch folder."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def write_spec(folder: Path, body: str, name: str = "spec.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def snakemake(
    workdir: Path, spec: Path, *args: str, check: bool = True, timeout: float = 1200
) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(ROOT / "Snakefile"),
        "-d",
        str(workdir),
        "--cores",
        "2",
        *args,
        "--config",
        f"spec={spec}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(workdir: Path, spec: Path, target: str = "results/leaderboard.csv") -> dict[str, int]:
    """Jobs a dry run would execute, by rule name (empty when nothing is to be done)."""
    proc = snakemake(workdir, spec, target, "-n", "--quiet", "rules")
    counts: dict[str, int] = {}
    text = proc.stdout + proc.stderr
    table = False
    for line in text.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            table = True
            continue
        if table and len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


def tree_hashes(folder: Path, pattern: str = "**/*") -> dict[str, str]:
    out = {}
    for p in sorted(folder.glob(pattern)):
        if p.is_file():
            out[p.relative_to(folder).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@contextmanager
def served(work: Path, log: str, *extra: str) -> Iterator[tuple[str, Path]]:
    """`shredfold serve --model oracle` as a real process on a free loopback port."""
    cmd = [sys.executable, "-m", "shredfold", "serve", "--model", "oracle", "--port", "0",
           "--results", str(work / "results"), "--log", str(work / log), *extra]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert " at http://127.0.0.1:" in line, f"server did not start: {line!r}"
        yield line.split(" at ")[1].strip(), work / log
    finally:
        proc.send_signal(signal.SIGINT)  # lets requests in progress log their lines
        proc.wait(timeout=30)
