"""`designs fetch`: Flat-Folder's designs from an archive, every file checked against the
manifest, hostile archives refused, nothing half-written and no user folder touched. The
archives are built from ``../shared/flat-folder`` (200 of the 366 designs) and read through
``file://`` URLs."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from shredfold.origami_bench import fetch as fetch_module
from shredfold.origami_bench.fetch import Caps, FetchError, fetch
from shredfold.origami_bench.flat_folder import MARKER, manifest
from tests.origami_bench.archives import FOLDER, TOP, design_members, write_archive

M = manifest()
KABUTO = "002_traditional_Kabuto.fold"  # not among the shared 200
MEDAL = "013_mitanioripa_Medal.fold"  # shared as a later upstream revision


@pytest.fixture(scope="module")
def instagram() -> Path:
    from tests.conftest import SHARED

    folder = SHARED / "flat-folder" / "instagram"
    if not folder.is_dir():
        pytest.skip(f"shared Flat-Folder designs not found at {folder}")
    return folder


@pytest.fixture(scope="module")
def shared_url(instagram: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_archive(tmp_path_factory.mktemp("archive") / "flat-folder.tar.gz", design_members(instagram))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_an_archive_with_200_of_the_366_is_refused_naming_what_is_missing(shared_url: str, tmp_path: Path) -> None:
    with pytest.raises(FetchError) as info:
        fetch(shared_url, tmp_path / "ff")
    msg = str(info.value)
    assert "200 of 366 designs present" in msg and "nothing written" in msg and "--allow-partial" in msg
    assert "166 missing: " in msg and KABUTO in msg
    assert "19 are a later upstream revision" in msg and f"{MEDAL} (c2bf9a7)" in msg
    assert not (tmp_path / "ff").exists()


def test_allow_partial_keeps_the_200_each_checked(shared_url: str, instagram: Path, tmp_path: Path) -> None:
    report = fetch(shared_url, tmp_path / "ff", allow_partial=True)
    assert (report.present, report.total, len(report.missing), len(report.revised)) == (200, 366, 166, 19)
    assert report.changed and KABUTO in report.missing and report.revised[MEDAL].startswith("c2bf9a7")
    written = sorted(p.name for p in (tmp_path / "ff").iterdir() if p.name != MARKER)
    assert written == sorted(p.name for p in instagram.glob("*.fold"))  # README.md left out
    by_name = M.by_name()
    for name in written:
        data = (tmp_path / "ff" / name).read_bytes()
        assert data == (instagram / name).read_bytes()
        entry = by_name[name]
        assert sha(data) == entry.sha256 or (name in report.revised and sha(data) in dict(entry.later).values())
    marker = json.loads((tmp_path / "ff" / MARKER).read_text())
    assert marker["commit"] == M.commit and marker["complete"] is False and len(marker["missing"]) == 166
    assert marker["files"][MEDAL] == sha((instagram / MEDAL).read_bytes())


def test_a_second_fetch_of_the_same_archive_changes_nothing(shared_url: str, tmp_path: Path) -> None:
    fetch(shared_url, tmp_path / "ff", allow_partial=True)
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (tmp_path / "ff").iterdir()}
    inode = (tmp_path / "ff").stat().st_ino
    report = fetch(shared_url, tmp_path / "ff", allow_partial=True)
    assert not report.changed and report.present == 200
    assert "already there" in report.lines(M.commit)[0]
    assert (tmp_path / "ff").stat().st_ino == inode
    assert {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (tmp_path / "ff").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ff"]  # no temporary left beside it


def test_a_complete_folder_is_not_downloaded_again(
    instagram: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A manifest of a few shared files that are the pinned bytes: an archive of them is
    # then complete
    shared = {p.name for p in instagram.glob("*.fold")}
    pinned = [e for e in M.entries if e.name in shared and sha((instagram / e.name).read_bytes()) == e.sha256]
    small = dataclasses.replace(M, entries=tuple(pinned[:5]))
    monkeypatch.setattr(fetch_module, "manifest", lambda: small)
    names = [e.name for e in small.entries]
    url = write_archive(tmp_path / "a.tar.gz", design_members(instagram, names))
    first = fetch(url, tmp_path / "ff")
    assert first.changed and first.present == first.total == len(names) and not first.missing
    assert json.loads((tmp_path / "ff" / MARKER).read_text())["complete"] is True
    again = fetch((tmp_path / "gone.tar.gz").as_uri(), tmp_path / "ff")  # no download tried
    assert not again.changed and again.present == len(names)


def test_a_tampered_file_is_named_with_both_hashes(instagram: Path, tmp_path: Path) -> None:
    members = design_members(instagram, ["009_ku_Unassigned_Triangle_Pleat.fold", "005_ku_Kitten.fold"])
    name, data = members[-1]
    tampered = data.replace(b"[", b"[ ", 1)
    url = write_archive(tmp_path / "a.tar.gz", [*members[:-1], (name, tampered)])
    with pytest.raises(FetchError) as info:
        fetch(url, tmp_path / "ff", allow_partial=True)  # never allowed, partial or not
    msg = str(info.value)
    assert "1 file(s) differ from Flat-Folder's at 191aaa9" in msg
    assert f"005_ku_Kitten.fold: SHA-256 {sha(tampered)}, the manifest has {M.by_name()['005_ku_Kitten.fold'].sha256}" in msg
    assert not (tmp_path / "ff").exists()


def _member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"{}", link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info


def _hostile(path: Path, info: tarfile.TarInfo, data: bytes = b"{}") -> str:
    with tarfile.open(path, "w:gz") as tar:
        tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path.as_uri()


DESIGN = f"{TOP}/{FOLDER}/{KABUTO}"


@pytest.mark.parametrize(
    ("info", "why"),
    [
        (_member("/etc/cron.d/x"), "refused: member '/etc/cron.d/x'"),
        (_member(f"{TOP}/../../outside.fold"), "has a '..' component"),
        (_member(DESIGN, tarfile.SYMTYPE, link="/etc/passwd"), "refused: member"),
        (_member(DESIGN, tarfile.SYMTYPE, link="004_traditional_Crane.fold"), "is not a regular file"),
        (_member(DESIGN, tarfile.LNKTYPE, link=f"{TOP}/README.md"), "is not a regular file"),
        (_member(f"{TOP}/dev/null", tarfile.CHRTYPE), "refused: member"),
    ],
    ids=["absolute", "dotdot", "absolute-link", "symlink", "hardlink", "device"],
)
def test_hostile_archives_are_refused_and_nothing_is_written(tmp_path: Path, info: tarfile.TarInfo, why: str) -> None:
    url = _hostile(tmp_path / "a.tar.gz", info)
    with pytest.raises(FetchError, match="refused") as caught:
        fetch(url, tmp_path / "ff", allow_partial=True)
    assert why in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz"]


def test_size_caps_bound_a_member_the_archive_and_the_download(instagram: Path, tmp_path: Path) -> None:
    url = write_archive(tmp_path / "a.tar.gz", design_members(instagram, ["005_ku_Kitten.fold"]))
    with pytest.raises(FetchError, match=r"has \d+ bytes \(cap 1000\)"):
        fetch(url, tmp_path / "ff", caps=Caps(member_bytes=1000))
    with pytest.raises(FetchError, match="members add up to more than 2000 bytes"):
        fetch(url, tmp_path / "ff", caps=Caps(total_bytes=2000))
    with pytest.raises(FetchError, match="larger than 100 bytes"):
        fetch(url, tmp_path / "ff", caps=Caps(download_bytes=100))
    with pytest.raises(FetchError, match="more than 1 members"):
        fetch(url, tmp_path / "ff", caps=Caps(members=1))
    assert not (tmp_path / "ff").exists()


def test_what_is_not_an_archive_of_the_designs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tarball at all")
    with pytest.raises(FetchError, match="not a readable tar archive"):
        fetch((tmp_path / "junk.tar.gz").as_uri(), tmp_path / "ff")
    url = write_archive(tmp_path / "other.tar.gz", [(f"{TOP}/README.md", b"hi")])
    with pytest.raises(FetchError, match="no design of the manifest's folder examples/instagram/"):
        fetch(url, tmp_path / "ff", allow_partial=True)
    with pytest.raises(FetchError, match="download failed"):
        fetch((tmp_path / "absent.tar.gz").as_uri(), tmp_path / "ff")
    with pytest.raises(FetchError, match="not an https, http, file URL"):
        fetch("ftp://example.org/x.tar.gz", tmp_path / "ff")


def test_a_folder_fetch_did_not_write_is_never_touched(shared_url: str, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    with pytest.raises(FetchError, match="was not written by `shredfold designs fetch`"):
        fetch(shared_url, mine, allow_partial=True)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(FetchError, match="exists and is not a folder"):
        fetch(shared_url, tmp_path / "file", allow_partial=True)
    (tmp_path / "empty").mkdir()  # an empty folder may receive the designs
    assert fetch(shared_url, tmp_path / "empty", allow_partial=True).present == 200


def test_a_fetched_folder_changed_afterwards_is_named_not_replaced(shared_url: str, tmp_path: Path) -> None:
    fetch(shared_url, tmp_path / "ff", allow_partial=True)
    edited = tmp_path / "ff" / MEDAL
    edited.write_bytes(edited.read_bytes() + b"\n")
    (tmp_path / "ff" / "extra.fold").write_text("{}")
    with pytest.raises(FetchError) as info:
        fetch(shared_url, tmp_path / "ff", allow_partial=True)
    msg = str(info.value)
    assert f"{MEDAL}: SHA-256 {sha(edited.read_bytes())}, fetched as " in msg
    assert "extra.fold: not written by fetch" in msg and "move it away and fetch again" in msg
    assert (tmp_path / "ff" / "extra.fold").read_text() == "{}"


def test_a_partial_folder_is_replaced_whole_by_a_fuller_archive(instagram: Path, tmp_path: Path) -> None:
    few = ["009_ku_Unassigned_Triangle_Pleat.fold", "067_traditionaloripa_damashi_bune.fold"]
    url = write_archive(tmp_path / "few.tar.gz", design_members(instagram, few[:1]))
    fetch(url, tmp_path / "ff", allow_partial=True)
    url = write_archive(tmp_path / "more.tar.gz", design_members(instagram, few))
    report = fetch(url, tmp_path / "ff", allow_partial=True)
    assert report.changed and report.present == 2
    assert sorted(p.name for p in (tmp_path / "ff").iterdir() if p.name != MARKER) == few
    assert sorted(p.name for p in tmp_path.iterdir()) == ["few.tar.gz", "ff", "more.tar.gz"]
