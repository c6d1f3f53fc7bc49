"""verify on hostile or broken input: one line naming the cause, never a traceback."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.verify import Difference, csv_differences


def archive(path: Path, members: list[tuple[str, bytes | None, str | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data or b"")
                tar.addfile(info, io.BytesIO(data or b""))
    return path


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([("shredfold-release/../evil", b"x", None)], "outside shredfold-release/"),
        ([("/etc/evil", b"x", None)], "outside shredfold-release/"),
        ([("elsewhere/MANIFEST.sha256", b"x", None)], "outside shredfold-release/"),
        ([("shredfold-release/link", None, "/etc/passwd")], "not a regular file"),
        ([("shredfold-release/release.json", b"{}", None)], "no MANIFEST.sha256"),
    ],
)
def test_a_hostile_archive_is_refused_in_one_line(tmp_path, capsys, members, why) -> None:
    path = archive(tmp_path / "bad.tar.gz", members)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err
    assert not (tmp_path / "evil").exists()


def test_not_an_archive_and_nothing_at_all(tmp_path, capsys) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not gzip")
    assert main(["verify", str(junk)]) == 2
    assert "not a readable gzip-compressed tar archive" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "absent")]) == 2
    assert "no such release" in capsys.readouterr().err
    assert main(["verify", str(tmp_path), "--store", str(tmp_path)]) == 2


def test_csv_differences_name_row_and_column() -> None:
    want = "model,ned,bleu\noracle,0.0,1.0\nm,0.5,0.4\n"
    got = "model,ned,bleu\noracle,0.0,1.0\nm,0.5,0.3\n"
    assert csv_differences("t.csv", want, got) == [Difference("t.csv", "2 (m)", "bleu", "0.4", "0.3")]
    assert csv_differences("t.csv", want, want + "x,1,1\n")[0].column == "(row)"
    assert csv_differences("t.csv", want, want.replace("bleu", "b"))[0].row == "header"
