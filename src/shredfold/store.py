"""Content-addressed store.

An object is a folder ``<root>/<stage>/<key[:2]>/<key>/``. It is built in a temporary sibling
and renamed into place only when complete, so a crash never leaves half an object behind and
existence of the folder means the object is whole. Each object carries ``_manifest.json`` with
the SHA-256 of its files, and every file read through the store is checked against it: an
edited or rotten file is a :class:`CorruptObjectError` naming the object, never silently
used. Written files and folders follow the process umask (as ``open`` would).

A job killed mid-write (``kill -9``, a node lost) leaves its temporary folder behind; the
first writer of that stage in a later process removes those untouched for a day that no
live writer holds (each writer holds an ``flock`` on its folder while it writes).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

MANIFEST = "_manifest.json"
QUARANTINE = ".corrupt"
TMP_PREFIX = ".tmp-"
# A writer's temporary folder untouched for this long is a killed job's (one object takes
# minutes at most to write); the next writer of its stage removes it, unless a live writer
# still holds its lock.
STALE_TMP_S = 24 * 3600


class CorruptObjectError(RuntimeError):
    """A stored file that does not match its object's manifest, or cannot be read."""

    def __init__(self, stage: str, key: str, name: str, why: str) -> None:
        super().__init__(f"store object {stage}/{key}/{name} is corrupt: {why}")
        self.stage, self.key, self.name, self.why = stage, key, name, why


def _read_umask() -> int:
    # The umask can only be read by setting it; /proc avoids that race where it exists.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def file_mode() -> int:
    """The mode a new file gets from ``open`` under the current umask (0644 under 022)."""
    return 0o666 & ~_read_umask()


def canonical_json(obj: Any) -> bytes:
    """Canonical JSON: sorted keys, compact separators, UTF-8."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_key(
    stage: str, version: int | str, params: Mapping[str, Any], inputs: Sequence[str] = ()
) -> str:
    """SHA-256 of the canonical JSON of stage, stage version, parameters and input keys."""
    return sha256_bytes(
        canonical_json(
            {"stage": stage, "version": version, "params": dict(params), "inputs": list(inputs)}
        )
    )


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary sibling and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files whatever the umask; a results folder shared with a group
        # must stay readable by it.
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    text = json.dumps(obj, sort_keys=True, indent=indent, ensure_ascii=False, allow_nan=False)
    atomic_write_text(path, text + "\n")


@contextlib.contextmanager
def staged_folder(target: Path, *, swap_out: bool) -> Iterator[Path]:
    """A temporary sibling of ``target`` to fill; on leaving without an error its top-level
    files take the umask's mode and it replaces ``target`` in one rename. ``swap_out``: ``target`` is an
    earlier folder of the caller's (checked by it), moved aside first and deleted once the new
    one is in place (put back if that fails); otherwise ``target`` must be absent or empty."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old: Path | None = None
    try:
        yield tmp
        for f in tmp.iterdir():
            if f.is_file() and not f.is_symlink():
                os.chmod(f, file_mode())
        os.chmod(tmp, file_mode() | (file_mode() & 0o444) >> 2)  # mkdtemp's 0700 -> as a folder would be
        if swap_out:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, old)
        os.replace(tmp, target)
    except BaseException:
        if old is not None and not target.exists():
            os.replace(old, target)
            old = None
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def file_manifest(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` except the manifest itself, by POSIX relpath."""
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != MANIFEST:
            out[p.relative_to(folder).as_posix()] = sha256_file(p)
    return out


class Store:
    """A content-addressed object store rooted at a folder (``results/store`` by default)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._manifests: dict[tuple[str, str], dict[str, str]] = {}
        self._swept: set[str] = set()

    def path(self, stage: str, key: str) -> Path:
        if not key or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"store key must be lowercase hex, got {key!r}")
        return self.root / stage / key[:2] / key

    def has(self, stage: str, key: str) -> bool:
        return (self.path(stage, key) / MANIFEST).is_file()

    @contextlib.contextmanager
    def writing(self, stage: str, key: str) -> Iterator[Path]:
        """Yield a temporary folder; on normal exit it becomes the object ``stage/key``.

        If another process committed the same key meanwhile, ours is discarded: equal keys
        mean equal content, so either copy is right.
        """
        final = self.path(stage, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        if stage not in self._swept:
            self._swept.add(stage)
            remove_stale_tmp(self.root / stage)
        tmp = final.parent / f"{TMP_PREFIX}{key[:16]}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        lock = _hold(tmp)  # says "a live writer" to whoever sweeps, until we are done
        try:
            yield tmp
            atomic_write_json(tmp / MANIFEST, file_manifest(tmp))
            try:
                os.rename(tmp, final)
            except OSError:
                if self.has(stage, key):
                    shutil.rmtree(tmp, ignore_errors=True)
                else:
                    # A stale incomplete folder (no manifest) can only come from an old crash.
                    shutil.rmtree(final, ignore_errors=True)
                    os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            if lock is not None:
                os.close(lock)

    def put_json(self, stage: str, key: str, obj: Any, name: str = "object.json") -> Path:
        with self.writing(stage, key) as tmp:
            (tmp / name).write_text(
                json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False),
                encoding="utf-8",
            )
        return self.path(stage, key)

    def manifest(self, stage: str, key: str) -> dict[str, str]:
        """The object's manifest (file → SHA-256), read once per process."""
        cached = self._manifests.get((stage, key))
        if cached is not None:
            return cached
        path = self.path(stage, key) / MANIFEST
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CorruptObjectError(stage, key, MANIFEST, "missing (the object is incomplete)") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CorruptObjectError(stage, key, MANIFEST, f"unreadable ({exc})") from None
        if not isinstance(manifest, dict):
            raise CorruptObjectError(stage, key, MANIFEST, "not a mapping of files to hashes")
        self._manifests[(stage, key)] = manifest
        return manifest

    def read_bytes(self, stage: str, key: str, name: str) -> bytes:
        """A file of an object, checked against the object's manifest."""
        want = self.manifest(stage, key).get(name)
        if want is None:
            raise CorruptObjectError(stage, key, name, "not listed in the object's manifest")
        try:
            data = (self.path(stage, key) / name).read_bytes()
        except FileNotFoundError:
            raise CorruptObjectError(stage, key, name, "missing") from None
        if sha256_bytes(data) != want:
            raise CorruptObjectError(stage, key, name, "its SHA-256 differs from the manifest")
        return data

    def read_head(self, stage: str, key: str, name: str, size: int) -> bytes:
        """The first ``size`` bytes of an object's file, to peek at a header (an image's
        size) without reading the whole file. Checking the file against its manifest needs
        all of it, so this is not verified: never use it for content."""
        if name not in self.manifest(stage, key):
            raise CorruptObjectError(stage, key, name, "not listed in the object's manifest")
        try:
            with open(self.path(stage, key) / name, "rb") as fh:
                return fh.read(size)
        except FileNotFoundError:
            raise CorruptObjectError(stage, key, name, "missing") from None

    def read_text(self, stage: str, key: str, name: str) -> str:
        data = self.read_bytes(stage, key, name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptObjectError(stage, key, name, f"not UTF-8 ({exc.reason})") from None

    def get_json(self, stage: str, key: str, name: str = "object.json") -> Any:
        text = self.read_text(stage, key, name)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise CorruptObjectError(stage, key, name, f"not valid JSON ({exc})") from None

    def object(self, stage: str, key: str) -> StoredObject:
        """A reader of one object's files, each checked against its manifest."""
        return StoredObject(self, stage, key)

    def quarantine(self, stage: str, key: str) -> Path:
        """Move an object aside (under ``<root>/.corrupt/``) so that it is rebuilt or asked
        again; nothing is deleted. Returns where it went."""
        src = self.path(stage, key)
        dest_dir = self.root / QUARANTINE / stage
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / f"{key}-{uuid.uuid4().hex[:8]}"
        os.rename(src, dest)
        self._manifests.pop((stage, key), None)
        return dest

    def stages(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def verify(self, stage: str, key: str) -> list[str]:
        """Return the problems found with one object (empty when it is intact)."""
        folder = self.path(stage, key)
        if not (folder / MANIFEST).is_file():
            return [f"{stage}/{key}: missing or incomplete"]
        want = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        have = file_manifest(folder)
        problems = []
        for rel in sorted(set(want) | set(have)):
            if rel not in have:
                problems.append(f"{stage}/{key}/{rel}: missing")
            elif rel not in want:
                problems.append(f"{stage}/{key}/{rel}: not in manifest")
            elif want[rel] != have[rel]:
                problems.append(f"{stage}/{key}/{rel}: hash mismatch")
        return problems

    def keys(self, stage: str) -> Iterator[str]:
        """The complete objects of a stage."""
        for key in self.all_keys(stage):
            if (self.root / stage / key[:2] / key / MANIFEST).is_file():
                yield key

    def all_keys(self, stage: str) -> Iterator[str]:
        """Every object folder of a stage, complete or not (temporary folders excluded)."""
        base = self.root / stage
        if not base.is_dir():
            return
        for shard in sorted(base.iterdir()):
            if shard.is_dir():
                for obj in sorted(shard.iterdir()):
                    if not obj.name.startswith(".") and obj.is_dir():
                        yield obj.name

    def gc(self, keep: Mapping[str, Iterable[str]]) -> list[Path]:
        """Remove objects of the named stages whose keys are not in ``keep``; return them."""
        removed = []
        for stage, keys in keep.items():
            wanted = set(keys)
            for key in list(self.keys(stage)):
                if key not in wanted:
                    p = self.path(stage, key)
                    shutil.rmtree(p)
                    removed.append(p)
        return removed


def _hold(folder: Path) -> int | None:
    """An exclusive ``flock`` on a folder, held as long as the returned descriptor is open
    (None where the file system has no such locks: the age bound alone then protects it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _newest(folder: Path) -> float:
    """The latest change time of a folder or anything in it (a writer still writing moves it)."""
    newest = folder.lstat().st_mtime
    for dirpath, _, files in os.walk(folder):
        for name in [*files, "."]:
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(dirpath, name)).st_mtime)
    return newest


def remove_stale_tmp(stage_dir: Path, max_age_s: float = STALE_TMP_S) -> list[Path]:
    """Remove the temporary folders killed writers left in a stage (``.tmp-*`` in its shard
    folders) that nothing has touched for ``max_age_s`` and no live writer holds; return
    them. Never another live writer's: each holds a lock on its folder while it writes."""
    removed: list[Path] = []
    if not stage_dir.is_dir():
        return removed
    now = time.time()
    for shard in os.scandir(stage_dir):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(shard.path):
            if not entry.name.startswith(TMP_PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            try:
                if now - _newest(path) < max_age_s:
                    continue
                fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue  # gone meanwhile (committed, or swept by another writer)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live writer, only slow
                except OSError:
                    pass  # no locks here: the age alone decides
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
            finally:
                os.close(fd)
    return removed


class StoredObject:
    """One object's files, read through the store (so verified); see :meth:`Store.object`."""

    def __init__(self, store: Store, stage: str, key: str) -> None:
        self.store, self.stage, self.key = store, stage, key

    def read_bytes(self, name: str) -> bytes:
        return self.store.read_bytes(self.stage, self.key, name)

    def read_text(self, name: str) -> str:
        return self.store.read_text(self.stage, self.key, name)

    def has(self, name: str) -> bool:
        return name in self.store.manifest(self.stage, self.key)


class FolderObject:
    """The same reading interface over a plain folder (an object made outside a store, as
    tests and benchmarks do); nothing is verified."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def read_bytes(self, name: str) -> bytes:
        return (self.path / name).read_bytes()

    def read_text(self, name: str) -> str:
        return (self.path / name).read_text(encoding="utf-8")

    def has(self, name: str) -> bool:
        return (self.path / name).is_file()


Readable = StoredObject | FolderObject


def readable(src: Readable | str | os.PathLike[str]) -> Readable:
    """A stored object as is; a path as a :class:`FolderObject`."""
    return FolderObject(src) if isinstance(src, str | os.PathLike) else src


def load_json(path: str | os.PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
