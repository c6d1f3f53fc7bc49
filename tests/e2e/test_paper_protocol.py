"""The paper's protocol end to end: a tiny grid through the loopback OpenAI-compatible server
(the adapter sends what the official client would: one JPEG data URL and the instruction)."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest

from shredfold.calls import RESPONSE_STAGE
from shredfold.resolve import load_spec
from shredfold.shred.presentation import paper_image
from shredfold.shred.sample_folder import SAMPLE_STAGE, load_public
from shredfold.store import Store
from tests.e2e.snake import ROOT, served, snakemake
from tests.models.samples import SHRED, http_model, new_workdir, shared_samples, write_model

pytestmark = pytest.mark.slow


def test_the_paper_spec_asks_for_the_papers_protocol() -> None:
    assert load_spec(ROOT / "specs" / "paper.yaml").spec.shred.protocol == "paper"  # type: ignore[union-attr]


def test_a_paper_protocol_run_sends_one_jpeg_and_scores_against_the_source(tmp_path_factory, tmp_path) -> None:
    work = new_workdir(shared_samples(tmp_path_factory), tmp_path / "work")
    spec = work / "specs" / "paper.yaml"
    spec.write_text("name: paper-tiny\n" + SHRED.replace("shred:\n", "shred:\n  protocol: paper\n") + "models: [oracle-http]\n")
    with served(work, "server.jsonl") as (url, log):
        write_model(work, "oracle-http", **http_model(url, images={"max_side": 4096}))
        snakemake(work, spec, "results/leaderboard.csv")
    with open(work / "results" / "leaderboard.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    # The oracle answers the document as written: the paper's NED is exactly 0.
    assert row["protocol"] == "paper" and float(row["ned_raw"]) == 0.0 and int(row["errors"]) == 0
    assert float(row["ned_raw_n1"]) == 0.0 and float(row["ned_raw_n3"]) == 0.0

    store = Store(work / "results" / "store")
    sent = {}
    for rkey in store.keys(RESPONSE_STAGE):
        (msg,) = [m for m in store.get_json(RESPONSE_STAGE, rkey)["request"]["messages"] if m["images"]]
        assert len(msg["images"]) == 1 and "Markdown" in msg["text"]
        sent[msg["images"][0]] = rkey
    expected = set()
    for key in store.keys(SAMPLE_STAGE):
        jpeg = paper_image(load_public(store.object(SAMPLE_STAGE, key)).composite)
        assert jpeg[:3] == b"\xff\xd8\xff"
        expected.add(hashlib.sha256(jpeg).hexdigest())
    assert set(sent) == expected  # one table-top JPEG per sample, nothing else
    assert len(sent) == int(row["items"]) > 0  # two empty sets are equal too
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == len(expected) and all(e["status"] == 200 for e in lines)
