"""SS end to end: a tiny open_clip model made here is fine-tuned by `shredfold clip finetune`
on a small spec's designs, a second spec names the fine-tuned folder, real Snakemake scores
full-step episodes, and the leaderboard and breakdown carry SS and the weights it came from;
a release carries the weights, and `shredfold verify` re-scores SS from the release alone."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.metrics import clip_weights as cw
from tests.e2e.snake import snakemake, write_spec
from tests.metrics.tiny_clip import NAME, tiny_weights

pytestmark = pytest.mark.slow
pytest.importorskip("open_clip")

DESIGNS = """\
seed: 4
origami:
  designs: {{builtin: true, procedural: 2, procedural_folds: [1, 2]}}
  tasks: [fullstep]
  fullstep_targets: 4
  step_limit: 2
  image_size: 64
  clip: {clip}
models: [origami-random]
"""


def test_an_ss_column_from_a_fine_tuned_tiny_model_through_snakemake_and_a_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    from shredfold.metrics.clip import load_clip
    from shredfold.spec import ClipSettings
    from shredfold.store import Store, sha256_bytes

    work = tmp_path / "work"
    work.mkdir()
    config, checkpoint = tiny_weights(tmp_path)
    base = write_spec(work, "name: base\n" + DESIGNS.format(clip=f"{{model: {config}, checkpoint: {checkpoint}}}"), "base.yaml")
    tuned = work / "ss-weights"
    assert main(["clip", "finetune", str(base), "--out", str(tuned), "--steps", "3", "--batch-size", "8",
                 "--lr", "0.0001", "--results", str(work / "results")]) == 0  # fmt: skip
    sha = json.loads((tuned / cw.RECIPE).read_text())["weights"]["sha256"]
    label = f"{NAME}/finetuned {sha[:12]}"
    capsys.readouterr()

    spec = write_spec(work, "name: ss\n" + DESIGNS.format(clip="{checkpoint: ss-weights}"), "ss.yaml")
    snakemake(work, spec, "results/leaderboard.csv", timeout=1500)
    with open(work / "results" / "leaderboard.csv", newline="") as fh:
        board = {r["model"]: r for r in csv.DictReader(fh)}
    row = board["origami-random"]
    assert row["origami_ss"] != "" and -1.0 <= float(row["origami_ss"]) <= 1.0
    assert row["origami_ss_weights"] == label
    with open(work / "results" / "breakdown_origami.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["task"] == "fullstep"]
    assert rows and all(r["ss_weights"] == label and r["ss"] != "" for r in rows)

    # each SS is the fine-tuned model's cosine between the episode's final state and the target
    clip, why = load_clip(ClipSettings(checkpoint=tuned))
    assert clip is not None, why
    store = Store(work / "results" / "store")
    scored = 0
    for table in (work / "results" / "cells").rglob("*.parquet"):
        for r in pq.read_table(table).to_pylist():
            if r["task"] != "fullstep" or r["ss"] is None:
                continue
            final = store.read_bytes("origami_episode", r["response"], "final.png")
            target = store.read_bytes("origami_target", r["item"], "target.png")
            assert r["ss"] == pytest.approx(clip.similarity(final, target), abs=2e-6)
            assert r["ss_weights"] == label
            scored += 1
    assert scored == 4

    # the pictures fine-tuning trains on are the targets SS compares with: read from the store
    # where the run made them, drawn alike where it did not
    from shredfold.origami_bench.clip_images import design_pictures
    from shredfold.resolve import load_spec

    said: list[str] = []
    ob = load_spec(spec).spec.origami
    from_store = design_pictures(ob, 4, store, said.append)
    assert said[-1] == "pictures: 15/15 designs (4 from the store)"
    assert [(p.key, p.png) for p in from_store] == [(p.key, p.png) for p in design_pictures(ob, 4)]
    recipe = json.loads((tuned / cw.RECIPE).read_text())
    assert [i["sha256"] for i in recipe["data"]["items"]] == [sha256_bytes(p.png) for p in from_store]

    # a release carries the weights; verify re-scores SS with them once the original is gone
    release = tmp_path / "release"
    assert main(["release", "--spec", str(spec), "--results", str(work / "results"), "--out", str(release)]) == 0
    carried = release / "clip" / "ss-weights"
    assert sorted(p.name for p in carried.iterdir()) == sorted([cw.CONFIG, cw.RECIPE, cw.WEIGHTS])
    assert (carried / cw.WEIGHTS).read_bytes() == (tuned / cw.WEIGHTS).read_bytes()
    signature = json.loads((release / "environment.json").read_text())["signatures"]["origami_fullstep"]["clip"]
    assert json.loads(signature)["checkpoint"] == sha
    tuned.rename(tmp_path / "moved-away")
    capsys.readouterr()
    assert main(["verify", str(release)]) == 0, capsys.readouterr().out
    # and with other weights in the release, SS no longer checks out
    (carried / cw.WEIGHTS).write_bytes(b"\0" + (tmp_path / "moved-away" / cw.WEIGHTS).read_bytes()[1:])
    assert main(["verify", str(release)]) == 1
    assert f"clip/ss-weights/{cw.WEIGHTS}" in capsys.readouterr().out
