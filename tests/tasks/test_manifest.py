"""A cell's query manifest read and written through its one home: typed rows, one predicate
for an answered item, manifests of earlier runs read back byte for byte, and a broken one
refused in one line that names the file and the cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shredfold.spec import ModelConfig
from shredfold.tasks import manifest as mf
from shredfold.tasks.base import Cell, ItemSet
from shredfold.tasks.manifest import (
    ManifestError,
    ManifestRow,
    QueryManifest,
    read_manifest,
    write_manifest,
)

# Written by the query job before the rows were typed (shredfold at d3074a4): ShredBench over
# HTTP with failed and cached items, the MCQ with its bill and with failed items, full-step
# episodes answered from the store.
OLD = sorted((Path(__file__).parent / "old_manifests").glob("*.json"))
K = [f"{n:x}" * 64 for n in range(1, 6)]  # store keys


def a_cell() -> Cell:
    item_set = ItemSet(task="shred", key=K[0], labels={"domain": "news_en", "n": 1}, items=(), where="shred/news_en/N1")
    return Cell(task="shred", model=ModelConfig(id="oracle", adapter="oracle"), identity={"adapter": "oracle"},
                item_set=item_set, query_key=K[1], name="oracle/shred/news_en/N1")  # fmt: skip


def test_the_manifests_of_an_earlier_run_read_back_and_write_out_byte_for_byte(tmp_path: Path) -> None:
    assert len(OLD) == 5
    seen = set()
    for path in OLD:
        m = read_manifest(path)
        assert m.items and m.errors == sum(r.failed for r in m.items) == len(m.items) - sum(r.answered for r in m.items)
        seen |= {(m.task, r.failed, r.cached, r.response is not None, r.episode is not None) for r in m.items}
        write_manifest(tmp_path / path.name, m)
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    assert seen == {
        ("shred", True, False, False, False), ("shred", False, True, True, False),
        ("origami_mcq", False, False, True, False), ("origami_mcq", True, False, False, False),
        ("origami_fullstep", False, True, False, True),
    }  # fmt: skip
    mcq = read_manifest(next(p for p in OLD if p.name == "mcq-called.json"))
    assert all(r.input_tokens == 0 and r.latency_s is not None and r.latency_s > 0 for r in mcq.items)


def test_a_manifest_round_trip_keeps_each_row_as_its_task_gave_it(tmp_path: Path) -> None:
    rows = [
        ManifestRow(item=K[0], doc_id="news_en/01", response=K[1], cached=True, error=None),
        ManifestRow(item=K[1], doc_id="news_en/02", response=None, cached=False, error="HTTP 500"),
        ManifestRow(item=K[2], episode=K[3], error=None, cached=False),
        ManifestRow(item=K[3], error="after 2 attempt(s): timed out"),
        ManifestRow(item=K[4], error=None, response=K[0], input_tokens=12, output_tokens=3, latency_s=0.25,
                    cost_usd=1e-05, cached=False),  # fmt: skip
    ]
    made = QueryManifest.of(a_cell(), rows, requests=4)
    assert made.counts == {"called": 2, "cached": 1, "errors": 2, "requests": 4}
    write_manifest(tmp_path / "m.json", made)
    back = read_manifest(tmp_path / "m.json")
    assert back == made and back.cell == "oracle/shred/news_en/N1" and back.model == "oracle"
    assert [r.answered for r in back.items] == [True, False, True, False, True]
    assert back.answers[K[2]].episode == K[3] and back.answers[K[4]].cost_usd == 1e-05
    # no field a task left unset is written: a failed MCQ item is just its key and error
    assert json.loads((tmp_path / "m.json").read_text())["items"][3] == {"item": K[3], "error": "after 2 attempt(s): timed out"}


def test_an_item_is_answered_only_without_an_error_and_with_a_stored_answer() -> None:
    assert ManifestRow(item=K[0], response=K[1]).answered
    assert ManifestRow(item=K[0], episode=K[1]).answered
    assert not ManifestRow(item=K[0]).answered  # nothing stored to score
    assert not ManifestRow(item=K[0], response=K[1], error="").answered  # an error, even empty
    assert ManifestRow(item=K[0], response=K[1], error="").failed
    missing = ManifestRow.not_run(K[0])
    assert missing.failed and not missing.answered and missing.error == "not run"


def good() -> dict:
    return json.loads(next(p for p in OLD if p.name == "shred-cached.json").read_text())


def damaged(change: str) -> bytes:
    m = good()
    row = m["items"][0]
    if change == "an unknown field":
        row["respones"] = row.pop("response")
    elif change == "a key that leaves the store":
        row["response"] = "../../../etc/passwd"
    elif change == "an error that is not text":
        row["error"] = {"code": 500}
    elif change == "counts that disagree with the rows":
        m["errors"] = 1
    elif change == "no rows":
        del m["items"]
    elif change == "a list, not an object":
        m = [m]
    return json.dumps(m).encode()


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        (b'{"cell": "x", "items": [', "query manifest is not JSON: Expecting value (line 1, column 25)"),
        (b"\xff\xfe{}", "query manifest is not UTF-8 (byte 0)"),
        (b"", "query manifest is not JSON"),
        (damaged("an unknown field"), "not a query manifest: items.0.respones: Extra inputs are not permitted"),
        (damaged("a key that leaves the store"), "not a query manifest: items.0.response: String should match pattern"),
        (damaged("an error that is not text"), "not a query manifest: items.0.error: Input should be a valid string"),
        (damaged("counts that disagree with the rows"), "errors, cached, called say (1, 2, 0); its 2 items say (0, 2, 0)"),
        (damaged("no rows"), "not a query manifest: items: Field required"),
        (damaged("a list, not an object"), "not a query manifest: the top level: Input should be a valid dictionary"),
    ],
)
def test_a_broken_manifest_is_refused_in_one_line_naming_the_file_and_the_cause(
    tmp_path: Path, content: bytes, cause: str
) -> None:
    path = tmp_path / "cells" / "m.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(ManifestError) as caught:
        read_manifest(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and cause in message, message
    assert "\n" not in message and caught.value.why in message and caught.value.path == str(path)


def test_a_manifest_too_large_or_absent_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(json.dumps(good()).encode())
    assert read_manifest(path).cached == 2
    monkeypatch.setattr(mf, "MAX_MANIFEST_BYTES", path.stat().st_size - 1)
    with pytest.raises(ManifestError, match=r"larger than [\d,]+ bytes; refused"):
        read_manifest(path)
    with pytest.raises(ManifestError, match="cannot read the query manifest: No such file or directory"):
        read_manifest(tmp_path / "absent.json")
