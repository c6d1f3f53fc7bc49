import hashlib
import json
import os
import time

import pytest

from shredfold.store import (
    Store,
    atomic_write_bytes,
    atomic_write_json,
    canonical_json,
    content_key,
    load_json,
    sha256_bytes,
    sha256_file,
    staged_folder,
)


def test_content_key_depends_on_every_part_and_not_on_key_order():
    base = content_key("sample", 1, {"a": 1, "b": [1, 2]}, ["k1"])
    assert base == content_key("sample", 1, {"b": [1, 2], "a": 1}, ["k1"])
    assert base != content_key("sample", 2, {"a": 1, "b": [1, 2]}, ["k1"])
    assert base != content_key("render", 1, {"a": 1, "b": [1, 2]}, ["k1"])
    assert base != content_key("sample", 1, {"a": 2, "b": [1, 2]}, ["k1"])
    assert base != content_key("sample", 1, {"a": 1, "b": [1, 2]}, ["k2"])
    assert len(base) == 64


def test_canonical_json_is_compact_and_sorted():
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_objects_appear_only_when_complete(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {})
    with pytest.raises(RuntimeError), store.writing("x", key) as tmp:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("crash mid-write")
    assert not store.has("x", key)
    assert not any(p.name.startswith(".tmp") for p in (tmp_path / "x" / key[:2]).iterdir())

    with store.writing("x", key) as tmp:
        (tmp / "a.txt").write_text("hello")
    assert store.has("x", key)
    assert store.read_bytes("x", key, "a.txt") == b"hello"
    assert store.verify("x", key) == []
    assert list(store.keys("x")) == [key]


def test_verify_reports_tampering(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {"v": 1})
    store.put_json("x", key, {"answer": 42})
    (store.path("x", key) / "object.json").write_text('{"answer": 43}')
    (store.path("x", key) / "extra.txt").write_text("?")
    problems = store.verify("x", key)
    assert problems == [f"x/{key}/extra.txt: not in manifest", f"x/{key}/object.json: hash mismatch"]


def test_verify_reports_a_deleted_file_and_a_missing_object(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {"v": 1})
    with store.writing("x", key) as tmp:
        (tmp / "a.txt").write_text("a")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.txt").write_text("b")
    assert store.verify("x", key) == []
    (store.path("x", key) / "sub" / "b.txt").unlink()
    assert store.verify("x", key) == [f"x/{key}/sub/b.txt: missing"]
    other = content_key("x", 1, {"v": 2})
    assert store.verify("x", other) == [f"x/{other}: missing or incomplete"]
    # A folder without its manifest is an incomplete object, not an intact one.
    (store.path("x", key) / "_manifest.json").unlink()
    assert store.verify("x", key) == [f"x/{key}: missing or incomplete"]
    assert not store.has("x", key) and list(store.keys("x")) == []


def test_second_writer_of_same_key_is_discarded(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {"v": 2})
    store.put_json("x", key, {"n": 1})
    store.put_json("x", key, {"n": 1})
    assert store.get_json("x", key) == {"n": 1}


def test_gc_keeps_only_listed_keys(tmp_path):
    store = Store(tmp_path)
    keep, drop = content_key("x", 1, {"k": 1}), content_key("x", 1, {"k": 2})
    store.put_json("x", keep, {})
    store.put_json("x", drop, {})
    removed = store.gc({"x": [keep]})
    assert [p.name for p in removed] == [drop]
    assert store.has("x", keep) and not store.has("x", drop)


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "sub" / "out.json"
    atomic_write_json(path, {"a": 1})
    atomic_write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert os.listdir(path.parent) == ["out.json"]


def test_bad_keys_are_refused(tmp_path):
    for bad in ("../etc", "", "ABCD", "12 4", "g0"):
        with pytest.raises(ValueError, match="lowercase hex"):
            Store(tmp_path).path("x", bad)
    assert Store(tmp_path).path("x", "ab12") == tmp_path / "x" / "ab" / "ab12"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), [1.0, float("nan")]])
def test_non_finite_key_parameters_are_rejected(value):
    # NaN != NaN: a key made from it could never be found again, and JSON has no NaN.
    with pytest.raises(ValueError):
        content_key("x", 1, {"p": value})
    with pytest.raises(ValueError):
        canonical_json({"p": value})


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    atomic_write_json(path, {"a": 1})

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_json(path, {"a": 2})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["out.json"]
    assert json.loads(path.read_text()) == {"a": 1}


def test_an_interrupted_write_leaves_no_temporary(tmp_path, monkeypatch):
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(tmp_path / "new.bin", b"data")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_sha256_of_a_file_is_that_of_its_bytes(tmp_path):
    data = bytes(range(256)) * 5000  # more than one 1 MiB read
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == sha256_bytes(data) == hashlib.sha256(data).hexdigest()


def test_a_stale_incomplete_folder_is_replaced_by_the_complete_object(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {"v": 3})
    stale = store.path("x", key)
    stale.mkdir(parents=True)
    (stale / "half.txt").write_text("from a crash")  # no manifest: never committed
    store.put_json("x", key, {"n": 1})
    assert store.verify("x", key) == [] and not (stale / "half.txt").exists()
    assert store.get_json("x", key) == {"n": 1}


def test_written_json_is_sorted_indented_and_keeps_unicode(tmp_path):
    path = tmp_path / "a" / "b" / "out.json"  # parents are created
    atomic_write_json(path, {"b": "é", "a": [1]})
    assert path.read_text(encoding="utf-8") == '{\n  "a": [\n    1\n  ],\n  "b": "é"\n}\n'
    atomic_write_json(path, {"b": 1, "a": 2}, indent=None)
    assert path.read_text(encoding="utf-8") == '{"a": 2, "b": 1}\n'
    with pytest.raises(ValueError):
        atomic_write_json(path, {"x": float("nan")})
    assert load_json(path) == {"a": 2, "b": 1}


def test_stored_json_objects_are_sorted_with_indent_one_and_refuse_nan(tmp_path):
    store = Store(tmp_path)
    key = content_key("x", 1, {"v": 9})
    store.put_json("x", key, {"b": "é", "a": 1})
    text = (store.path("x", key) / "object.json").read_text(encoding="utf-8")
    assert text == '{\n "a": 1,\n "b": "é"\n}'
    with pytest.raises(ValueError):
        store.put_json("x", content_key("x", 1, {"v": 10}), {"x": float("inf")})
    assert not store.has("x", content_key("x", 1, {"v": 10}))


def test_when_another_writer_commits_first_its_object_is_kept(tmp_path):
    store, rival = Store(tmp_path), Store(tmp_path)
    key = content_key("x", 1, {"v": 11})
    with store.writing("x", key) as tmp:
        (tmp / "object.json").write_text('"ours"')
        rival.put_json("x", key, "theirs")  # commits while we are still writing
    assert store.get_json("x", key) == "theirs" and store.verify("x", key) == []
    assert sorted(p.name for p in store.path("x", key).parent.iterdir()) == [key]


def test_keys_list_only_committed_objects(tmp_path):
    store = Store(tmp_path)
    done = content_key("x", 1, {"v": 12})
    store.put_json("x", done, {})
    (store.path("x", done).parent / ".tmp-abc").mkdir()  # a writer's temporary folder
    stale = content_key("x", 1, {"v": 13})
    store.path("x", stale).mkdir(parents=True)  # an old crash: no manifest
    assert list(store.keys("x")) == [done]
    assert list(store.keys("nothing")) == []


def test_a_killed_writers_temporary_folder_is_removed_by_the_next_writer_of_its_stage(tmp_path):
    import subprocess
    import sys

    from shredfold.store import STALE_TMP_S

    store = Store(tmp_path)
    # a job killed mid-write, for real: its folder stays behind
    code = (
        "import os, sys\n"
        "from shredfold.store import Store\n"
        "with Store(sys.argv[1]).writing('x', 'ab' * 32) as tmp:\n"
        "    (tmp / 'object.json').write_text('{}')\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    (killed,) = (tmp_path / "x" / "ab").glob(".tmp-*")
    fresh = tmp_path / "x" / "cd" / ".tmp-cdcd-00000000"  # a writer of a minute ago, on another node
    fresh.mkdir(parents=True)
    old = time.time() - STALE_TMP_S - 60
    for p in (killed, killed / "object.json"):
        os.utime(p, (old, old))
    with store.writing("x", content_key("x", 1, {"v": 1})) as mine:  # a later job writes
        (mine / "object.json").write_text("{}")
    assert not killed.exists() and fresh.is_dir()
    assert [p.name for p in (tmp_path / "x").glob("*/.tmp-*")] == [fresh.name]


def test_a_live_writers_folder_is_never_removed_however_old_it_looks(tmp_path):
    from shredfold.store import STALE_TMP_S

    slow, other = Store(tmp_path), Store(tmp_path)
    key = content_key("x", 1, {"v": 2})
    with slow.writing("x", key) as tmp:
        (tmp / "object.json").write_text('"slow"')
        old = time.time() - 3 * STALE_TMP_S
        for p in (tmp, tmp / "object.json"):
            os.utime(p, (old, old))
        other.put_json("x", content_key("x", 1, {"v": 3}), "quick")  # sweeps the stage
        assert tmp.is_dir() and (tmp / "object.json").is_file()
    assert slow.get_json("x", key) == "slow" and slow.verify("x", key) == []


def test_a_staged_folder_replaces_an_earlier_one_whole_or_not_at_all(tmp_path):
    target = tmp_path / "weights"
    with staged_folder(target, swap_out=False) as tmp:
        (tmp / "a.bin").write_bytes(b"first")
    assert sorted(p.name for p in target.iterdir()) == ["a.bin"]

    with pytest.raises(RuntimeError), staged_folder(target, swap_out=True) as tmp:
        (tmp / "a.bin").write_bytes(b"second")
        raise RuntimeError("the writer failed half way")
    assert (target / "a.bin").read_bytes() == b"first"  # the earlier folder is untouched

    with staged_folder(target, swap_out=True) as tmp:
        (tmp / "b.bin").write_bytes(b"second")
    assert sorted(p.name for p in target.iterdir()) == ["b.bin"]
    assert [p.name for p in tmp_path.iterdir()] == ["weights"]  # no temporary or old folder left


def test_a_staged_folder_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        with staged_folder(tmp_path / "out", swap_out=False) as tmp:
            (tmp / "f").write_bytes(b"x")
            (tmp / "sub").mkdir()
    finally:
        os.umask(old)
    assert (tmp_path / "out" / "f").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "out" / "sub").stat().st_mode & 0o777 == 0o750  # a subfolder keeps its own mode
