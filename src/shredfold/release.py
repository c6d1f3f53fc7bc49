"""Releases: everything needed to check a leaderboard without calling a model, in one folder
or one ``.tar.gz``.

A release (under the folder :data:`ROOT`) holds::

    release.json             format, whether sample images are in, each cell's files, and
                             how many items failed and why (a run with errors is released
                             as it is: failed items are scored as empty answers)
    spec/<spec>.yaml         the spec as written, and spec/resolved.json (models resolved)
    spec/models/<id>.yaml    every model file the spec used (API keys never: only the
                             name of the variable that holds one)
    clip/…                   SS's weights where they are local files: a folder `shredfold
                             clip finetune` wrote, or a checkpoint and its JSON model config
                             (pinned pretrained weights are public and named by hash: not carried)
    plan.json                the plan: item sets, items, cells and their content keys
    cells/…                  every cell's query manifest (.json) and cell table (.parquet)
    store/<stage>/…          each object that scoring reads (the ground truth of every item,
                             every response envelope with its request's fingerprint — image
                             hashes, not images — and origami episodes), with the object's
                             own manifest; ``--with-samples`` adds every file of the samples
    tables/*.csv             leaderboard, breakdowns, pairwise tests
    environment.json         Python, every installed package, the pinned arithmetic
                             (shredfold.numerics), font and OCR-model hashes,
                             engine, stage and prompt versions, metric signatures
    MANIFEST.sha256          SHA-256 of every other file (``sha256sum -c`` reads it)
    DIGEST                   SHA-256 of MANIFEST.sha256: the release's one digest

Which store files a cell needs is not listed by hand: the release re-scores every cell
through its task's own ``score`` with a store view that records each file read, and that
re-scoring must reproduce the cell table (a stale table stops the release). ``shredfold
verify`` (:mod:`shredfold.verify`) later does the same from the release alone.

The same results give the same bytes: entries sorted, times, owners and modes fixed, gzip
without a name or time stamp, JSON with sorted keys.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import math
import os
import re
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from shredfold import paths
from shredfold.aggregate import Grid, render_tables
from shredfold.calls import RESPONSE_STAGE
from shredfold.models.envelope import ENVELOPE
from shredfold.plan import REDONE, Plan, plan_document, spec_document
from shredfold.store import MANIFEST as OBJECT_MANIFEST
from shredfold.store import Store, canonical_json, sha256_bytes, staged_folder
from shredfold.tasks.base import Cell, JobContext, Row
from shredfold.tasks.manifest import ManifestError, ManifestRow, QueryManifest, read_manifest
from shredfold.tasks.registry import benchmarks
from shredfold.tasks.registry import get as get_task

FORMAT = 1
ROOT = "shredfold-release"
MANIFEST = "MANIFEST.sha256"
DIGEST = "DIGEST"
INFO = "release.json"
PLAN = "plan.json"
ENVIRONMENT = "environment.json"
TABLES = "tables"
CELLS = "cells"
STORE = "store"
SPEC = "spec"
# Fixed tar metadata: the archive's bytes depend on the files alone.
_MTIME = 0
_FILE_MODE = 0o644


# Scoring again logs what the score job logged the first time (SS left empty, …): not news.
QUIET = logging.getLogger("shredfold.rescore")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False


class ReleaseError(Exception):
    """A release cannot be made (missing or stale results, a secret found, a busy target)."""


# ---------------------------------------------------------------- recording what scoring reads


class RecordingStore(Store):
    """A store that remembers every object file read through it (verified as usual)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(root)
        self.read: set[tuple[str, str, str]] = set()

    def read_bytes(self, stage: str, key: str, name: str) -> bytes:
        data = super().read_bytes(stage, key, name)
        self.read.add((stage, key, name))
        return data

    def manifest(self, stage: str, key: str) -> dict[str, str]:
        out = super().manifest(stage, key)
        self.read.add((stage, key, OBJECT_MANIFEST))
        return out


def rows_of_table(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def row_dicts(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Rows as the Parquet table gives them back (what a cell table compares with)."""
    import pyarrow as pa

    from shredfold.stages.score import arrow_schema

    rows = list(rows)
    if not rows:
        return []
    return pa.Table.from_pylist([r.model_dump() for r in rows], schema=arrow_schema(type(rows[0]))).to_pylist()


def rescore(cell: Cell, answers: Mapping[str, ManifestRow], plan: Plan, store: Store) -> list[dict[str, Any]]:
    """A cell's rows, scored again from its stored answers by its task's own code."""
    task = get_task(cell.task)
    job = JobContext(plan.spec, store, replay_only=True, log=QUIET)
    return row_dicts(task.score(cell, answers, job))


def same_value(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))  # NaN: an undefined score
    return type(a) is type(b) and bool(a == b)


def row_differences(recorded: list[dict[str, Any]], rescored: list[dict[str, Any]]) -> list[tuple[str, str, Any, Any]]:
    """``(item, column, recorded, re-scored)`` for every value that differs; rows matched by
    their item key."""
    out: list[tuple[str, str, Any, Any]] = []
    want = {r["item"]: r for r in recorded}
    got = {r["item"]: r for r in rescored}
    for item in sorted(set(want) | set(got)):
        if item not in got:
            out.append((item, "(row)", "present", "absent"))
            continue
        if item not in want:
            out.append((item, "(row)", "absent", "present"))
            continue
        for col in sorted(set(want[item]) | set(got[item])):
            a, b = want[item].get(col), got[item].get(col)
            if not same_value(a, b):
                out.append((item, col, a, b))
    return out


# ---------------------------------------------------------------- failed items

_ATTEMPTS = re.compile(r"^after \d+ attempt\(s\): ")
CAUSE_CHARS = 160


@dataclass(frozen=True)
class Failures:
    """How many items of the released cells failed (recorded as errors, scored as empty
    answers), and why: each cause with its count, most frequent first."""

    items: int
    failed: int
    causes: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, manifests: Iterable[QueryManifest]) -> Failures:
        items = failed = 0
        causes: dict[str, int] = {}
        for manifest in manifests:
            for row in manifest.items:
                items += 1
                if row.error is not None:
                    failed += 1
                    cause = _ATTEMPTS.sub("", row.error)
                    cause = cause if len(cause) <= CAUSE_CHARS else cause[: CAUSE_CHARS - 1] + "…"
                    causes[cause] = causes.get(cause, 0) + 1
        return cls(items, failed, tuple(sorted(causes.items(), key=lambda c: (-c[1], c[0]))))

    def as_json(self) -> dict[str, Any]:
        return {"items": self.items, "failed": self.failed, "causes": [list(c) for c in self.causes]}

    def line(self) -> str:
        if not self.failed:
            return f"{self.items} items, none failed"
        shown = "; ".join(f"{n} × {cause}" for cause, n in self.causes[:3])
        more = f"; and {len(self.causes) - 3} other cause(s)" if len(self.causes) > 3 else ""
        return (f"{self.failed} of {self.items} items failed (errors, scored as empty answers; "
                f"run snakemake again to ask them again): {shown}{more}")  # fmt: skip


# ---------------------------------------------------------------- what goes in


@dataclass
class Contents:
    """The release's files: relative path → bytes, or → a file to copy."""

    data: dict[str, bytes] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)

    def add_bytes(self, rel: str, data: bytes) -> None:
        self.data[rel] = data

    def add_file(self, rel: str, path: Path) -> None:
        self.files[rel] = path

    def names(self) -> list[str]:
        return sorted(set(self.data) | set(self.files))

    def read(self, rel: str) -> bytes:
        return self.data[rel] if rel in self.data else self.files[rel].read_bytes()

    def sha256(self, rel: str) -> str:
        if rel in self.data:
            return sha256_bytes(self.data[rel])
        from shredfold.store import sha256_file

        return sha256_file(self.files[rel])


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def _cell_rel(path: str) -> str:
    """``results/cells/x`` → ``cells/x``."""
    prefix = f"{paths.RESULTS}/cells/"
    if not path.startswith(prefix):
        raise ValueError(f"not a cell path: {path}")
    return f"{CELLS}/{path[len(prefix):]}"


def environment(plan: Plan) -> dict[str, Any]:
    """What the numbers were computed with (no times, hosts or paths: the same environment
    gives the same bytes): the interpreter, the packages, the pinned arithmetic, the code's
    versions and each registered benchmark's own facts (:attr:`Benchmark.environment`)."""
    import platform

    from shredfold.numerics import settings as numerics

    packages = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            packages[name.lower()] = dist.version
    facts: dict[str, Any] = {}
    for b in benchmarks():
        if b.environment is not None:
            facts.update(b.environment())
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "system": platform.system(),
        "numerics": numerics(),
        "packages": dict(sorted(packages.items())),
        **facts,
        "stages": stage_versions(plan),
        "signatures": signatures(plan),
    }


def environment_facts() -> list[str]:
    """The names of the benchmarks' facts in environment.json (``verify`` compares them)."""
    return [k for b in benchmarks() if b.environment is not None for k in b.environment()]


def stage_versions(plan: Plan) -> dict[str, dict[str, list[Any]]]:
    return {
        t.name: {"query": [t.query_stage.name, t.query_stage.version], "score": [t.score_stage.name, t.score_stage.version]}
        for t in plan.tasks()
    }


def signatures(plan: Plan) -> dict[str, dict[str, str]]:
    """Each task's metric signatures for this plan (as the running code gives them)."""
    return {t.name: t.signatures(plan.spec, plan.sets_of(t.name)) for t in plan.tasks()}


def model_files(plan: Plan) -> dict[str, Path]:
    """The model files the spec resolved (``specs/models/<id>.yaml`` beside the spec)."""
    folder = Path(plan.spec.path).parent / "models"
    out = {}
    for ref in plan.spec.spec.models:
        if isinstance(ref, str) and (folder / f"{ref}.yaml").is_file():
            out[f"{SPEC}/models/{ref}.yaml"] = folder / f"{ref}.yaml"
    return out


def carried_files(plan: Plan) -> dict[str, Path]:
    """Files outside the store that scoring reads (weights the spec names), by release path,
    so that ``verify`` re-scores from the release alone (:attr:`Benchmark.carried`)."""
    out: dict[str, Path] = {}
    for b in benchmarks():
        if b.carried is not None:
            out.update(b.carried(plan.spec))
    return out


def with_carried(plan: Plan, root: Path) -> Plan:
    """``plan`` reading the carried files from the release at ``root`` (the paths it
    recorded are the releasing machine's)."""
    spec = plan.spec
    for b in benchmarks():
        if b.from_carried is not None:
            spec = b.from_carried(spec, root)
    return plan if spec is plan.spec else replace(plan, spec=spec)


_USERINFO = re.compile(r"://[^/@\s]*:[^/@\s]*@")


def check_secrets(contents: Contents, plan: Plan) -> None:
    """Refuse to release an API key: the value of every key variable the models name (when
    set here), or any run of 8 characters of it, must appear in no file, and no URL may
    carry a password."""
    from shredfold.models.secrets import MIN_RUN, leaks

    secrets = {
        m.api_key_env: os.environ[m.api_key_env]
        for m in plan.spec.models
        if m.api_key_env and len(os.environ.get(m.api_key_env, "")) >= MIN_RUN
    }
    for rel in contents.names():
        data = contents.read(rel)
        for var, value in secrets.items():
            if leaks(data, value):
                raise ReleaseError(
                    f"{rel} contains the value of ${var} (an API key), or {MIN_RUN} or more "
                    "characters of it; nothing was written"
                )
        if (rel.startswith(f"{SPEC}/") or rel in (PLAN,)) and _USERINFO.search(data.decode("utf-8", "replace")):
            raise ReleaseError(f"{rel} has a URL with a user name and password; remove it from the model file")


def collect(plan: Plan, workdir: Path, *, with_samples: bool = False) -> Contents:
    """Every file of the release of ``plan``'s results under ``workdir`` (its cells at the
    attempts the last run made, see :func:`shredfold.plan.current_attempts`; failed items
    included, counted in ``release.json``)."""
    sample_stages = {stage for b in benchmarks() for stage in b.sample_stages}
    results = workdir / paths.RESULTS
    store = RecordingStore(results / "store")
    out = Contents()
    missing = [c.score_path for c in plan.cells if not (workdir / c.score_path).is_file()]
    missing += [c.query_path for c in plan.cells if not (workdir / c.query_path).is_file()]
    if missing:
        raise ReleaseError(
            f"{len(missing)} cell file(s) missing, e.g. {missing[0]}: run snakemake for this spec first"
        )
    cells_info = []
    responses: set[str] = set()
    manifests = []
    for cell in plan.cells:
        try:
            manifest = read_manifest(workdir / cell.query_path)
        except ManifestError as exc:
            raise ReleaseError(f"{exc}; run snakemake again: {REDONE}") from None
        manifests.append(manifest)
        answers = manifest.answers
        recorded = rows_of_table(workdir / cell.score_path)
        diffs = row_differences(recorded, rescore(cell, answers, plan, store))
        if diffs:
            item, col, a, b = diffs[0]
            raise ReleaseError(
                f"{cell.score_path} does not match a re-scoring of its answers ({len(diffs)} "
                f"value(s) differ, e.g. item {item[:12]} {col}: {a!r} vs {b!r}); the table is "
                "stale: run snakemake again"
            )
        responses.update(get_task(cell.task).response_keys(cell, answers, store))
        out.add_file(_cell_rel(cell.query_path), workdir / cell.query_path)
        out.add_file(_cell_rel(cell.score_path), workdir / cell.score_path)
        cells_info.append({
            "name": cell.name, "task": cell.task, "query_key": cell.query_key, "score_key": cell.score_key,
            "where": cell.score_where, "attempt": cell.attempt,
            "query": _cell_rel(cell.query_path), "table": _cell_rel(cell.score_path),
        })  # fmt: skip
    for rkey in responses:
        store.read_bytes(RESPONSE_STAGE, rkey, ENVELOPE)
    # what the set jobs left out (read before the store's files are listed: the release
    # carries what its notes are read from, so verify reads them again)
    grid = Grid.of(plan, store)
    if grid.nothing_left:
        raise ReleaseError(grid.nothing_left[0])
    objects = {(stage, key) for stage, key, _ in store.read}
    for stage, key, name in sorted(store.read):
        out.add_file(f"{STORE}/{stage}/{key[:2]}/{key}/{name}", store.path(stage, key) / name)
    if with_samples:
        for stage, key in sorted(objects):
            if stage in sample_stages:
                for name in store.manifest(stage, key):
                    out.add_file(f"{STORE}/{stage}/{key[:2]}/{key}/{name}", store.path(stage, key) / name)

    tables = render_tables(
        [str(workdir / c.score_path) for c in plan.cells],
        grid,
        sorted({get_task(c.task).breakdown.file for c in plan.cells}),
    )
    for name, text in tables.items():
        current = results / name
        if current.is_file() and current.read_text(encoding="utf-8") != text:
            raise ReleaseError(
                f"{current} differs from the tables of this spec's cells (another spec's run, or "
                "code changed since): run snakemake for this spec first"
            )
        out.add_bytes(f"{TABLES}/{name}", text.encode("utf-8"))

    spec_path = Path(plan.spec.path)
    out.add_file(f"{SPEC}/{spec_path.name}", spec_path)
    out.add_bytes(f"{SPEC}/resolved.json", _json_bytes(spec_document(plan.spec, workdir)))
    for rel, path in model_files(plan).items():
        out.add_file(rel, path)
    for rel, path in carried_files(plan).items():
        out.add_file(rel, path)
    out.add_bytes(PLAN, canonical_json(plan_document(plan, workdir)))
    out.add_bytes(ENVIRONMENT, _json_bytes(environment(plan)))
    out.add_bytes(
        INFO,
        _json_bytes({
            "format": FORMAT, "with_samples": with_samples, "spec": f"{SPEC}/{spec_path.name}",
            "plan": PLAN, "cells": cells_info, "tables": sorted(f"{TABLES}/{n}" for n in tables),
            "failures": Failures.of(manifests).as_json(),
        }),  # fmt: skip
    )
    check_secrets(out, plan)
    return out


def manifest_text(contents: Contents) -> bytes:
    lines = [f"{contents.sha256(rel)}  {rel}\n" for rel in contents.names()]
    return "".join(lines).encode("utf-8")


def seal(contents: Contents) -> str:
    """Add MANIFEST.sha256 and DIGEST; return the digest."""
    manifest = manifest_text(contents)
    contents.add_bytes(MANIFEST, manifest)
    digest = sha256_bytes(manifest)
    contents.add_bytes(DIGEST, f"sha256 {digest}\n".encode("ascii"))
    return digest


# ---------------------------------------------------------------- writing


def is_archive(path: str | os.PathLike[str]) -> bool:
    return str(path).endswith((".tar.gz", ".tgz"))


def _looks_like_release(path: Path) -> bool:
    if path.is_dir():
        return (path / DIGEST).is_file() and (path / MANIFEST).is_file()
    try:
        with tarfile.open(path, "r:gz") as tar:
            return f"{ROOT}/{DIGEST}" in tar.getnames()
    except (OSError, tarfile.TarError, EOFError):
        return False


def check_target(out: Path, force: bool) -> None:
    """A release never replaces a user's own files: the target must not exist, or (with
    ``force``) be an earlier release."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not any(out.iterdir()) and not is_archive(out):
        return
    if not force:
        raise ReleaseError(f"{out} exists; choose another --out, or --force to replace an earlier release there")
    if out.is_symlink() or not _looks_like_release(out):
        raise ReleaseError(f"{out} is not a shredfold release; refusing to replace it")


def write_archive(contents: Contents, out: Path) -> None:
    """A reproducible ``.tar.gz``: sorted entries under :data:`ROOT`, fixed times, owners and
    modes, gzip without a file name or time stamp; written through a temporary sibling."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        from shredfold.store import file_mode

        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as raw:
            with (
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz,
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
            ):
                for rel in contents.names():
                    info = tarfile.TarInfo(f"{ROOT}/{rel}")
                    info.mtime, info.mode = _MTIME, _FILE_MODE
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    if rel in contents.data:
                        info.size = len(contents.data[rel])
                        tar.addfile(info, io.BytesIO(contents.data[rel]))
                    else:
                        info.size = contents.files[rel].stat().st_size
                        with open(contents.files[rel], "rb") as fh:
                            tar.addfile(info, fh)
            raw.flush()
            os.fsync(raw.fileno())
        if out.is_dir():
            raise ReleaseError(f"{out} is a folder; an archive path must be a file")
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_folder(contents: Contents, out: Path) -> None:
    """The release as a folder, built beside ``out`` and renamed into place."""
    with staged_folder(out, swap_out=out.exists()) as tmp:
        for rel in contents.names():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel in contents.data:
                target.write_bytes(contents.data[rel])
            else:
                shutil.copyfile(contents.files[rel], target)


@dataclass(frozen=True)
class Made:
    digest: str
    failures: Failures


def make_release(plan: Plan, workdir: str | os.PathLike[str], out: str | os.PathLike[str], *,
                 with_samples: bool = False, force: bool = False) -> Made:  # fmt: skip
    """Write the release of ``plan``'s results to ``out`` (a folder, or an archive when it
    ends in ``.tar.gz``); return its digest and what failed."""
    target = Path(out)
    check_target(target, force)
    contents = collect(plan, Path(workdir), with_samples=with_samples)
    info = json.loads(contents.data[INFO])
    digest = seal(contents)
    if is_archive(target):
        write_archive(contents, target)
    else:
        write_folder(contents, target)
    f = info["failures"]
    return Made(digest, Failures(f["items"], f["failed"], tuple((c, n) for c, n in f["causes"])))
