"""``shredfold verify RELEASE``: check a release (:mod:`shredfold.release`) without calling
any model.

1. **Hashes**: DIGEST against MANIFEST.sha256, and every file against the manifest (a file
   missing, changed or not listed is a difference).
2. **Re-scoring**: every cell is scored again by its task's own ``score``, reading the
   release's store through a :class:`~shredfold.store.Store` rooted in the release (so each
   object file is also checked against the object's own manifest); the rows are compared
   with the cell table value by value. The metric signatures and stage versions the release
   recorded are compared with the running code's: a mismatch is a difference, never
   silently accepted.
3. **Tables**: the leaderboard, breakdowns and pairwise tests are rebuilt from the re-scored
   rows by the aggregator and compared byte for byte.
4. **Samples** (releases made ``--with-samples``): every flat-mode sample is made again from
   the plan (spec settings and corpus documents) and compared byte for byte.

Each difference names the file, the row, the column, what was expected and what was found.
An archive is read with bounded size and member count, and only regular files under the
release's folder are taken from it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import os
import re
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from shredfold import release as rel
from shredfold.aggregate import Grid, render_tables
from shredfold.plan import Plan, load_plan
from shredfold.store import CorruptObjectError, Store, sha256_bytes, sha256_file
from shredfold.tasks.base import Row
from shredfold.tasks.manifest import ManifestError, read_manifest
from shredfold.tasks.registry import benchmarks
from shredfold.tasks.registry import get as get_task

log = logging.getLogger(__name__)

MAX_BYTES = 64 * 2**30  # an archive larger than this unpacked is refused
MAX_MEMBERS = 2_000_000
MAX_READ_BYTES = 2**30  # a file read whole into memory (JSON, CSV, Parquet)
_LINE = re.compile(r"^([0-9a-f]{64})  (\S(?:.*\S)?)$")


class VerifyError(Exception):
    """The release cannot be read at all (not a release, a bad archive)."""


@dataclass(frozen=True)
class Difference:
    file: str
    row: str
    column: str
    expected: Any
    got: Any

    def line(self) -> str:
        return f"{self.file}: row {self.row}, column {self.column}: expected {self.expected!r}, got {self.got!r}"


@dataclass
class Report:
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    failures: rel.Failures | None = None  # the released items that failed, from the manifests

    @property
    def ok(self) -> bool:
        return not self.differences

    def add(self, *args: Any) -> None:
        self.differences.append(Difference(*args))


# ---------------------------------------------------------------- opening


def _safe(name: str) -> bool:
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in name and name == p.as_posix()


@contextlib.contextmanager
def opened(path: str | Path) -> Iterator[Path]:
    """The release's root folder: the folder itself (checked as an archive's members are:
    regular files and folders only, within the bounds), or an archive unpacked to a
    temporary folder (removed afterwards)."""
    p = Path(path)
    if p.is_dir():
        inner = p / rel.ROOT
        if not (p / rel.MANIFEST).is_file() and inner.is_dir() and not inner.is_symlink():
            p = inner
        check_tree(p)
        yield p
        return
    if not p.is_file():
        raise VerifyError(f"{p}: no such release (a folder or a .tar.gz)")
    with tempfile.TemporaryDirectory(prefix="shredfold-verify-") as tmp:
        _extract(p, Path(tmp))
        yield Path(tmp) / rel.ROOT


def check_tree(root: Path) -> None:
    """A release folder holds regular files and folders, nothing else: a link (to
    ``/etc/passwd``, ``/dev/zero``, a file outside the release) or a device is refused by
    name before anything is read, like an archive's member; so are more files or bytes than
    an archive may hold."""
    total = members = 0
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are listed, not followed
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            name_in = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise VerifyError(f"{root}: {name_in} is a symbolic link (to {os.readlink(path)!r}); "
                                  "a release holds regular files only: refused")  # fmt: skip
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise VerifyError(f"{root}: {name_in} is not a regular file; refused")
            members += 1
            total += st.st_size
            if members > MAX_MEMBERS or total > MAX_BYTES:
                raise VerifyError(f"{root}: more than {MAX_MEMBERS} files or {MAX_BYTES >> 30} GiB; refused")


def read_bounded(path: Path, limit: int = MAX_READ_BYTES) -> bytes:
    """A release file read whole, refused when it is larger than ``limit`` (a table, a
    manifest, JSON: nothing a release holds comes near it)."""
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path.name} is larger than {limit:,} bytes; refused")
    return data


def check_size(path: Path, limit: int = MAX_READ_BYTES) -> None:
    """Refuse a file another library will read whole (Parquet, the plan) past ``limit``."""
    if path.stat().st_size > limit:
        raise ValueError(f"{path.name} is larger than {limit:,} bytes; refused")


def _extract(archive: Path, dest: Path) -> None:
    total = members = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for m in tar:
                members += 1
                total += max(0, m.size)
                if members > MAX_MEMBERS or total > MAX_BYTES:
                    raise VerifyError(f"{archive}: more than {MAX_MEMBERS} members or {MAX_BYTES >> 30} GiB unpacked; refused")
                if not _safe(m.name) or PurePosixPath(m.name).parts[0] != rel.ROOT:
                    raise VerifyError(f"{archive}: member {m.name!r} is outside {rel.ROOT}/")
                if m.isdir():
                    continue
                if not m.isfile():
                    raise VerifyError(f"{archive}: member {m.name!r} is not a regular file")
                tar.extract(m, dest, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise VerifyError(f"{archive}: not a readable gzip-compressed tar archive ({exc})") from None


# ---------------------------------------------------------------- 1. hashes


def check_hashes(root: Path, report: Report) -> dict[str, str]:
    """Every file against MANIFEST.sha256 and the manifest against DIGEST; returns the
    manifest (path → hash) for the steps that follow."""
    manifest_path = root / rel.MANIFEST
    if not manifest_path.is_file():
        raise VerifyError(f"{root}: no {rel.MANIFEST}; not a shredfold release")
    try:
        data = read_bounded(manifest_path)
    except ValueError as exc:
        raise VerifyError(str(exc)) from None
    digest = read_bounded(root / rel.DIGEST, 1024).decode("utf-8", "replace").strip() if (root / rel.DIGEST).is_file() else ""
    if digest != f"sha256 {sha256_bytes(data)}":
        report.add(rel.DIGEST, "-", "sha256", digest or "(missing)", f"sha256 {sha256_bytes(data)}")
    listed: dict[str, str] = {}
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        m = _LINE.match(line)
        if m is None or not _safe(m.group(2)):
            report.add(rel.MANIFEST, str(n), "line", "<sha256>  <relative path>", line[:120])
            continue
        listed[m.group(2)] = m.group(1)
    for name, want in sorted(listed.items()):
        path = root / name
        if not path.is_file() or path.is_symlink():
            report.add(name, "-", "sha256", want, "(missing)")
            continue
        got = sha256_file(path)
        if got != want:
            report.add(name, "-", "sha256", want, got)
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if (path.is_file() or path.is_symlink()) and name not in listed and name not in (rel.MANIFEST, rel.DIGEST):
            report.add(name, "-", "listed", f"in {rel.MANIFEST}", "not listed")
    report.counts["files"] = len(listed)
    return listed


# ---------------------------------------------------------------- 2. environment and re-scoring


def check_environment(root: Path, plan: Plan, report: Report) -> None:
    try:
        recorded = json.loads(read_bounded(root / rel.ENVIRONMENT))
    except (OSError, ValueError) as exc:
        report.add(rel.ENVIRONMENT, "-", "-", "readable JSON", str(exc))
        return
    now = {"signatures": rel.signatures(plan), "stages": rel.stage_versions(plan)}
    for section in ("signatures", "stages"):
        for task in sorted(set(recorded.get(section, {})) | set(now[section])):
            want, got = recorded.get(section, {}).get(task, {}), now[section].get(task, {})
            for name in sorted(set(want) | set(got)):
                if want.get(name) != got.get(name):
                    report.add(rel.ENVIRONMENT, f"{section}.{task}.{name}", section[:-1],
                               want.get(name), got.get(name))  # fmt: skip
    current = rel.environment(plan)
    for key in ("python", *rel.environment_facts()):
        if recorded.get(key) != current.get(key):
            report.notes.append(f"environment {key} differs: recorded {recorded.get(key)!r}, here {current.get(key)!r}")
    pk_want, pk_got = recorded.get("packages", {}), current.get("packages", {})
    changed = sorted(p for p in set(pk_want) | set(pk_got) if pk_want.get(p) != pk_got.get(p))
    if changed:
        shown = ", ".join(f"{p} {pk_want.get(p, '-')}→{pk_got.get(p, '-')}" for p in changed[:8])
        report.notes.append(f"{len(changed)} package version(s) differ from the release's: {shown}{' …' if len(changed) > 8 else ''}")


def _store_file(exc: CorruptObjectError) -> str:
    return f"{rel.STORE}/{exc.stage}/{exc.key[:2]}/{exc.key}/{exc.name}"


def rescore_cells(root: Path, info: dict[str, Any], plan: Plan, report: Report, out_dir: Path) -> list[str]:
    """Re-score every cell from the release; return the tables to aggregate (re-scored, or
    the recorded one where re-scoring failed, so one fault is not reported many times)."""
    store = Store(root / rel.STORE)
    tables = []
    manifests = []
    for n, ci in enumerate(info.get("cells", [])):
        table = root / ci["table"]
        try:
            cell = plan.cell(ci["score_key"], ci["where"]).at(int(ci.get("attempt", 0)))
        except KeyError:
            report.add(rel.INFO, ci.get("name", str(n)), "cell", "a cell of plan.json", "not in the plan")
            continue
        try:
            manifest = read_manifest(root / ci["query"])
        except ManifestError as exc:
            report.add(ci["query"], "-", "-", "a readable query manifest", exc.why[:200])
            continue
        manifests.append(manifest)
        answers = manifest.answers
        try:
            check_size(table)
            recorded = rel.rows_of_table(table)
        except Exception as exc:  # noqa: BLE001 - any unreadable Parquet is one difference
            report.add(ci["table"], "-", "-", "a readable Parquet table", f"{type(exc).__name__}: {str(exc)[:160]}")
            recorded = None
        rows: list[Row] | None
        try:
            rows = get_task(cell.task).score(cell, answers, _job(plan, store))
        except CorruptObjectError as exc:
            report.add(_store_file(exc), cell.name, "-", "as its object's manifest says", exc.why)
            rows = None
        except (OSError, ValueError, KeyError) as exc:
            report.add(ci["table"], cell.name, "-", "re-scored", f"re-scoring failed: {type(exc).__name__}: {str(exc)[:160]}")
            rows = None
        if rows is not None and recorded is not None:
            for item, col, want, got in rel.row_differences(recorded, rel.row_dicts(rows)):
                report.add(ci["table"], item, col, want, got)
        if rows is not None:
            from shredfold.stages.score import write_cell_table

            path = out_dir / f"{n:05d}.parquet"
            write_cell_table(rows, get_task(cell.task).row_type, str(path))
            tables.append(str(path))
        elif recorded is not None:
            tables.append(str(table))
        report.counts["cells"] = report.counts.get("cells", 0) + 1
        report.counts["rows"] = report.counts.get("rows", 0) + len(rows or [])
    report.failures = rel.Failures.of(manifests)
    recorded_failures = info.get("failures")
    if recorded_failures is not None and recorded_failures != report.failures.as_json():
        report.add(rel.INFO, "-", "failures", recorded_failures, report.failures.as_json())
    return tables


def _job(plan: Plan, store: Store) -> Any:
    from shredfold.tasks.base import JobContext

    # replay_only: scoring never asks a model; were a task ever to try, it would fail loudly.
    return JobContext(plan.spec, store, replay_only=True, log=rel.QUIET)


# ---------------------------------------------------------------- 3. tables


def csv_differences(name: str, expected: str, got: str) -> list[Difference]:
    e = list(csv.reader(io.StringIO(expected)))
    g = list(csv.reader(io.StringIO(got)))
    out: list[Difference] = []
    header = e[0] if e else []
    if (g[0] if g else []) != header:
        out.append(Difference(name, "header", "-", ",".join(header), ",".join(g[0] if g else [])))
        return out
    for i in range(1, max(len(e), len(g))):
        if i >= len(e) or i >= len(g):
            present = (e if i < len(e) else g)[i]
            out.append(Difference(name, f"{i} ({present[0] if present else ''})", "(row)",
                                  "present" if i < len(e) else "absent",
                                  "present" if i < len(g) else "absent"))  # fmt: skip
            continue
        label = f"{i} ({e[i][0] if e[i] else ''})"
        for j in range(max(len(e[i]), len(g[i]))):
            a = e[i][j] if j < len(e[i]) else None
            b = g[i][j] if j < len(g[i]) else None
            if a != b:
                out.append(Difference(name, label, header[j] if j < len(header) else str(j), a, b))
    if not out and expected != got:
        out.append(Difference(name, "-", "bytes", sha256_bytes(expected.encode()), sha256_bytes(got.encode())))
    return out


def check_tables(root: Path, info: dict[str, Any], plan: Plan, tables: list[str], report: Report) -> None:
    names = [Path(t).name for t in info.get("tables", [])]
    breakdowns = [n for n in names if n.startswith("breakdown")]
    try:  # the notes of what the set jobs left out are read from the release's store
        grid = Grid.of(plan, Store(root / rel.STORE))
    except CorruptObjectError as exc:
        report.add(_store_file(exc), "-", "-", "as its object's manifest says", exc.why)
        grid = Grid.of(plan)
    rebuilt = render_tables(tables, grid, breakdowns)
    for name in sorted(set(names) | set(rebuilt)):
        path = root / rel.TABLES / name
        if name not in rebuilt:
            report.add(f"{rel.TABLES}/{name}", "-", "-", "a table the aggregator makes", "not made")
            continue
        try:
            recorded = read_bounded(path).decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            report.add(f"{rel.TABLES}/{name}", "-", "-", "a readable CSV", str(exc)[:160])
            continue
        if recorded != rebuilt[name]:
            report.differences += csv_differences(f"{rel.TABLES}/{name}", recorded, rebuilt[name])
    report.counts["tables"] = len(rebuilt)


# ---------------------------------------------------------------- 4. samples


def check_samples(root: Path, plan: Plan, report: Report, scratch: Path) -> None:
    """Each benchmark that can makes its carried samples again (:attr:`Benchmark.check_samples`)."""
    store = Store(root / rel.STORE)

    def folder_of(stage: str, key: str) -> str:
        return f"{rel.STORE}/{stage}/{key[:2]}/{key}"

    for b in benchmarks():
        if b.check_samples is not None:
            b.check_samples(store, plan.sets_of, folder_of, scratch, report)


# ---------------------------------------------------------------- all of it


def verify(path: str | Path) -> Report:
    report = Report()
    with opened(path) as root, tempfile.TemporaryDirectory(prefix="shredfold-rescore-") as scratch:
        check_hashes(root, report)
        try:
            info = json.loads(read_bounded(root / rel.INFO))
            check_size(root / rel.PLAN)
            plan = rel.with_carried(load_plan(root / rel.PLAN), root)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            report.add(rel.PLAN, "-", "-", "a readable release.json and plan.json", f"{type(exc).__name__}: {str(exc)[:200]}")
            return report
        if info.get("format") != rel.FORMAT:
            raise VerifyError(f"{path}: release format {info.get('format')!r}; this shredfold reads {rel.FORMAT}")
        check_environment(root, plan, report)
        tables = rescore_cells(root, info, plan, report, Path(scratch))
        check_tables(root, info, plan, tables, report)
        if info.get("with_samples"):
            check_samples(root, plan, report, Path(scratch) / "samples")
    return report
