"""Pinned identities: a built-in model's identity is in the key of every answer it has given,
so changing it by accident would orphan every cached answer. Change a pin only on purpose
(with the model's VERSION bumped), never to make this test pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from shredfold.calls import Message, Request, response_key
from shredfold.models.openai_compat import OpenAICompatible
from shredfold.models.registry import build_model, builtin_config, builtin_names, identity
from shredfold.spec import ModelConfig
from shredfold.store import Store

PIECES = {"mode": "pieces", "detail": "auto", "max_side": 1600}
OCR = {
    "engine": "rapidocr-onnxruntime",
    "version": "1.4.4",
    "params": {"intra_op_num_threads": 1, "inter_op_num_threads": 1, "det_limit_type": "max",
               "use_cls": False, "rec_batch_num": 1},  # fmt: skip
    "runtime": {
        "name": "openvino",
        "version": "2026.4.1",
        "params": {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
                   "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False},  # fmt: skip
    },
}
IDENTITIES = {
    "oracle": {"adapter": "oracle", "version": 1},
    "ocr-islands": {"adapter": "ocr-islands", "version": 19, "ocr": OCR, "images": PIECES},
    "jigsaw-ocr": {"adapter": "jigsaw-ocr", "version": 31, "ocr": OCR, "images": PIECES},
    "origami-oracle": {"adapter": "origami-oracle", "version": 2},
    "origami-random": {"adapter": "origami-random", "version": 2},
    "origami-search": {"adapter": "origami-search", "version": 3},
}
# response_key(identity, REQUEST); the OCR models moved on purpose at version 3 (photographs),
# jigsaw-ocr at 5 (scraps of a reduced photo enlarged), both again (ocr-islands 4, jigsaw-ocr 6)
# when the quarter turn came from a few short crops instead of full readings, and again
# (ocr-islands 5, jigsaw-ocr 7) when a near tie of those readings was settled on the whole
# image and jigsaw-ocr's border checks widened for curled sheets; jigsaw-ocr 8 when table
# rules were continued through stretches greyed by shading; ocr-islands 6 and jigsaw-ocr 9 when
# the quarter turn could be settled on the first patch looked at, and jigsaw-ocr's clusters
# were refined jointly on every join their layout confirms; ocr-islands 7 and jigsaw-ocr 10
# when OpenVINO took over running the OCR engine's models from ONNX Runtime; ocr-islands 8
# when a scrap put level was cut to its paper before reading; jigsaw-ocr 11 and ocr-islands 9
# when photographs of straight-cut scraps were solved from their text lines (jigsaw-ocr) and
# read drawn larger, and the paper's protocol was answered in Markdown; jigsaw-ocr 12 and
# ocr-islands 10 when photographed program text was read binarized as one fenced block
# (and jigsaw-ocr's scraps could join a quarter turn round); jigsaw-ocr 13 and ocr-islands 11
# when the OCR's ink level was measured on the ink only; jigsaw-ocr 14 and ocr-islands 12
# when a line wrapped after a hyphen was joined to the next without a space; jigsaw-ocr 15
# when a cluster read as nothing was read at the quarter turn that reads most; jigsaw-ocr 16
# when each photographed scrap's quarter turn was settled by reading it; origami-search
# 3 when its full-step plans came from a library of outlines (and one plan per target);
# jigsaw-ocr 17 and ocr-islands 13 when jigsaw's words took the OCR reader's row rule;
# jigsaw-ocr 18 and ocr-islands 14 when photographs of straight-cut scraps were levelled by
# their printed rules too, jigsaw-ocr kept each scrap's way up, and code dropped seams' lone
# strokes; jigsaw-ocr 19 when a seam's slide leaving much of its shorter edge unshared was
# discounted; jigsaw-ocr 20 and ocr-islands 15 when chains of seam strokes left code (and
# jigsaw-ocr's page edges had a bare margin); jigsaw-ocr 21 when a nearly blank scrap slid
# no seam by its text; jigsaw-ocr 22 and ocr-islands 16 when a table's grid units off the
# drawn scraps stayed cells of their own (and jigsaw-ocr's seams through bare paper slid by
# the ink a few lines deeper); jigsaw-ocr 23 when a seam fitted by its corners alone had to
# lie within 1.2 degrees of straight; jigsaw-ocr 24 when a seam 15-20 degrees off the text
# lines was sampled along them; jigsaw-ocr 25 when a scrap its inkiest patch left open was
# read whole; jigsaw-ocr 26 when a merge laying a tenth of a scrap on another was let through;
# jigsaw-ocr 27 when each merge made was tried struck off, the placement with the most support
# kept; jigsaw-ocr 28 and ocr-islands 17 when a table whose grid collapsed into one cell was
# read by its text rows, and a sliver beside touching scraps was segmented; jigsaw-ocr 29 and
# ocr-islands 18 when a part of a page that is not program text was no longer fenced;
# jigsaw-ocr 30 and ocr-islands 19 when a table read in parts led with its largest ruled part;
# jigsaw-ocr 31 when a seam was slid by where a table's column rules cross it.
KEYS = {
    "oracle": "3b0ead42888ab46ab45210dccfc87e959b05e68e701a7369fcf626e2fa76acf0",
    "ocr-islands": "160b89069d3feac06f88eb224d457ee2f814b1c9f2e6c10f89334c728b945f1c",
    "jigsaw-ocr": "f5e913c5f7bbeb5eea8f16f6f33caa2b8fc96ec961dd15cfca3f93e01bd0c8d4",
    "origami-oracle": "9a48eba6abfe42921b8130451aedb9ef30e1e26cf8800725fc45a72786578bb9",
    "origami-random": "5835064fb40072d4f378c185c31714a0f8af8a47e61e953f265f5cd26d99a61d",
    "origami-search": "d9696b3a97bd2190da24b4c05f141eb4c6834ba34c171e32472f1a68ccb92080",
}
REQUEST = Request(
    template="shred/prose/v1",
    messages=(Message(role="user", text="Read the scraps.", images=(b"\x89PNG not really",)),),
)


def test_every_built_in_model_is_pinned() -> None:
    assert sorted(builtin_names()) == sorted(IDENTITIES)


@pytest.mark.parametrize("name", sorted(IDENTITIES))
def test_a_built_in_models_identity_and_answer_keys_do_not_move(name: str, tmp_path: Path) -> None:
    model = build_model(builtin_config(name), Store(tmp_path / "store"))
    assert model.identity() == IDENTITIES[name] == identity(builtin_config(name))
    assert response_key(model.identity(), REQUEST) == KEYS[name]


def test_an_openai_models_identity_is_pinned_too() -> None:
    cfg = ModelConfig(id="m", base_url="https://API.example.com:443/v1/", model="qwen-vl")
    assert OpenAICompatible(cfg).identity() == {
        "adapter": "openai",
        "wire": 1,
        "endpoint": "https://api.example.com/v1",
        "model": "qwen-vl",
        "decoding": {"temperature": 0.0, "top_p": None, "max_tokens": 4096, "max_tokens_field": "max_tokens", "seed": None},
        "images": {"detail": "auto", "max_side": 1600},
        "extra_body": {},
    }
    scoped = OpenAICompatible(cfg.model_copy(update={"cache_scope": "team-qwen"})).identity()
    assert scoped["endpoint"] == "team-qwen"
