"""``shredfold designs fetch``: Flat-Folder's designs at the pinned commit, checked file by file.

The archive (by default GitHub's tarball of the pinned commit) is downloaded beside the
target folder, read as a stream, and every member under the manifest's folder is checked
against the manifest's SHA-256 before anything is written. A hostile archive is refused
whole: absolute paths, ``..``, links or devices where a design should be, members or
archives beyond the size caps (tarfile's ``data`` filter and the caps below). The checked
files are written to a temporary folder beside the target, which is then renamed into
place, so the target is either absent, the previous fetch, or complete. A folder that this
command did not write (no marker file) is never touched.

An archive that holds only some of the designs — or a later upstream revision of some — is
reported precisely (every missing and every revised file by name) and refused unless
``allow_partial``; a file whose bytes are neither the pinned file nor a recorded revision is
always refused, with both hashes.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import IO

from shredfold.download import FetchError, download
from shredfold.origami_bench.flat_folder import MARKER, Manifest, default_folder, manifest
from shredfold.store import sha256_bytes, sha256_file, staged_folder

CODELOAD = "https://codeload.github.com/origamimagiro/flat-folder/tar.gz/{commit}"


@dataclass(frozen=True)
class Caps:
    """How much a hostile archive may make this read (far above the real one's sizes: the
    largest design is 1.4 MB, the repository's tarball well under 1 GB)."""

    download_bytes: int = 2 << 30
    member_bytes: int = 64 << 20
    total_bytes: int = 8 << 30  # everything the stream decompresses: bounds a gzip bomb
    members: int = 200_000


@dataclass
class Contents:
    """What an archive holds of the manifest, already checked."""

    files: dict[str, bytes] = field(default_factory=dict)  # file name -> bytes
    revised: dict[str, str] = field(default_factory=dict)  # file name -> later upstream commit
    missing: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # in the folder, not in the manifest

    @property
    def complete(self) -> bool:
        return not self.missing and not self.revised


@dataclass(frozen=True)
class Report:
    folder: Path
    total: int
    present: int
    revised: dict[str, str]
    missing: tuple[str, ...]
    foreign: tuple[str, ...]
    changed: bool  # False: the folder already held exactly this

    def lines(self, commit: str) -> list[str]:
        what = "already there" if not self.changed else "written"
        out = [f"{self.present} of {self.total} designs present at {commit[:7]} ({what}): {self.folder}"]
        if self.revised:
            names = ", ".join(f"{n} ({c[:7]})" for n, c in sorted(self.revised.items()))
            verb = "is" if len(self.revised) == 1 else "are"
            out.append(f"{len(self.revised)} {verb} a later upstream revision, not the pinned file: {names}")
        if self.missing:
            out.append(f"{len(self.missing)} missing: {', '.join(self.missing)}")
        if self.foreign:
            out.append(f"{len(self.foreign)} file(s) not in the manifest left out: {', '.join(self.foreign)}")
        return out


# ---------------------------------------------------------------- reading an archive (pure)


def _inner(name: str) -> PurePosixPath | None:
    """A member's path below the archive's top folder (GitHub's ``<repo>-<commit>/``)."""
    parts = PurePosixPath(name).parts
    return PurePosixPath(*parts[1:]) if len(parts) > 1 else None


def read_archive(stream: IO[bytes], m: Manifest, caps: Caps = Caps(), where: str = "archive") -> Contents:
    """The manifest's designs in a tar stream (any compression tarfile reads), checked.

    Raises :class:`FetchError` for a hostile member (naming it) and for files whose bytes
    are not the manifest's (naming every one with both hashes)."""
    wanted = {e.path: e for e in m.entries}
    folder = PurePosixPath(m.folder)
    out = Contents()
    seen: set[str] = set()
    bad: list[str] = []
    total = count = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|*") as tar:
            for member in tar:
                count += 1
                total += max(member.size, 0)
                if count > caps.members:
                    raise FetchError(f"{where}: refused: more than {caps.members} members")
                if total > caps.total_bytes:
                    raise FetchError(f"{where}: refused: members add up to more than {caps.total_bytes} bytes")
                _refuse_hostile(member, where)
                inner = _inner(member.name)
                if inner is None or inner.parent != folder:
                    continue
                if not member.isreg():
                    raise FetchError(f"{where}: refused: member {member.name!r} is not a regular file")
                if member.size > caps.member_bytes:
                    raise FetchError(
                        f"{where}: refused: member {member.name!r} has {member.size} bytes "
                        f"(cap {caps.member_bytes})"
                    )
                key = inner.as_posix()
                if key in seen:
                    raise FetchError(f"{where}: refused: member {member.name!r} appears twice")
                seen.add(key)
                entry = wanted.get(key)
                if entry is None:
                    if key.endswith(".fold"):
                        out.foreign.append(inner.name)
                    continue
                fh = tar.extractfile(member)
                data = fh.read(caps.member_bytes + 1) if fh is not None else b""
                got = sha256_bytes(data)
                if got == entry.sha256:
                    out.files[entry.name] = data
                    continue
                later = dict((sha, commit) for commit, sha in entry.later)
                if got in later:
                    out.files[entry.name] = data
                    out.revised[entry.name] = later[got]
                else:
                    bad.append(f"{entry.name}: SHA-256 {got}, the manifest has {entry.sha256}")
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:  # FetchError passes through
        raise FetchError(f"{where}: not a readable tar archive ({type(exc).__name__}: {exc})") from None
    if bad:
        raise FetchError(
            f"{where}: {len(bad)} file(s) differ from Flat-Folder's at {m.commit[:7]}: " + "; ".join(bad)
        )
    out.missing = [e.name for e in m.entries if e.name not in out.files]
    out.foreign.sort()
    return out


def _refuse_hostile(member: tarfile.TarInfo, where: str) -> None:
    if member.name.startswith("/"):  # the data filter would only strip the slash
        raise FetchError(f"{where}: refused: member {member.name!r} has an absolute path")
    if ".." in PurePosixPath(member.name).parts:
        raise FetchError(f"{where}: refused: member {member.name!r} has a '..' component")
    try:
        # the checks of tarfile's "data" filter (absolute paths, escapes, devices, links
        # out of the folder) on every member, extracted or not: such an archive is hostile
        tarfile.data_filter(member, "/nonexistent-destination")
    except tarfile.FilterError as exc:
        raise FetchError(f"{where}: refused: member {member.name!r}: {exc}") from None


# ---------------------------------------------------------------- the target folder


def _folder_files(folder: Path) -> dict[str, str]:
    return {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.name != MARKER}


def _check_ours(folder: Path) -> dict[str, object] | None:
    """The marker of a folder an earlier fetch wrote, after checking the folder still holds
    exactly what it wrote; None when the folder is absent or empty."""
    if not folder.exists():
        return None
    if not folder.is_dir():
        raise FetchError(f"{folder} exists and is not a folder; choose another --to")
    marker = folder / MARKER
    if not marker.is_file():
        if any(folder.iterdir()):
            raise FetchError(
                f"{folder} exists and was not written by `shredfold designs fetch` (no {MARKER}); "
                "refusing to touch it: choose another --to"
            )
        return None
    try:
        meta = json.loads(marker.read_text(encoding="utf-8"))
        written = {str(k): str(v) for k, v in meta["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise FetchError(f"{marker} is unreadable; refusing to touch {folder}") from None
    found = _folder_files(folder)
    problems = [f"{n}: SHA-256 {found[n]}, fetched as {s}" for n, s in written.items() if n in found and found[n] != s]
    problems += [f"{n}: missing" for n in written if n not in found]
    problems += [f"{n}: not written by fetch" for n in found if n not in written]
    if problems:
        raise FetchError(
            f"{folder} was changed since it was fetched ({'; '.join(problems)}); "
            "move it away and fetch again"
        )
    return meta


def _write_folder(target: Path, contents: Contents, meta: dict[str, object]) -> None:
    # an earlier fetch's folder (checked) is swapped out; otherwise target is absent or empty
    with staged_folder(target, swap_out=(target / MARKER).is_file()) as tmp:
        for name, data in contents.files.items():
            (tmp / name).write_bytes(data)
        (tmp / MARKER).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- fetching


def fetch(
    url: str | None = None, to: Path | None = None, *, allow_partial: bool = False, caps: Caps = Caps()
) -> Report:
    """Fetch Flat-Folder's designs into ``to`` (default :func:`default_folder`)."""
    m = manifest()
    url = url or CODELOAD.format(commit=m.commit)
    target = Path(to) if to is not None else default_folder()
    earlier = _check_ours(target)
    total = len(m.entries)
    if earlier is not None and earlier.get("complete") and earlier.get("commit") == m.commit:
        return Report(target, total, total, {}, (), (), changed=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=target.parent, prefix=f".{target.name}.download.") as fh:
        archive_sha = download(url, fh, caps.download_bytes)
        fh.seek(0)
        contents = read_archive(fh, m, caps, where=url)
    if not contents.files:
        raise FetchError(f"{url}: no design of the manifest's folder {m.folder}/ in the archive")
    report = Report(
        target, total, len(contents.files), dict(contents.revised), tuple(contents.missing),
        tuple(contents.foreign), changed=True,
    )  # fmt: skip
    if not contents.complete and not allow_partial:
        raise FetchError(
            f"{url}: incomplete, nothing written (pass --allow-partial to keep what is there): "
            f"{report.present} of {total} designs present; " + "; ".join(report.lines(m.commit)[1:])
        )
    files = {n: sha256_bytes(d) for n, d in contents.files.items()}
    if earlier is not None and earlier.get("files") == files:
        return replace(report, changed=False)
    meta = {
        "upstream": m.upstream,
        "commit": m.commit,
        "url": url,
        "archive_sha256": archive_sha,
        "complete": contents.complete,
        "files": files,
        "revised": contents.revised,
        "missing": contents.missing,
    }
    _write_folder(target, contents, meta)
    return report
