import json
import os

import pytest

from shredfold.store import Store, atomic_write_json, canonical_json, content_key


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
    assert any("hash mismatch" in p for p in problems)
    assert any("not in manifest" in p for p in problems)


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
    with pytest.raises(ValueError):
        Store(tmp_path).path("x", "../etc")
