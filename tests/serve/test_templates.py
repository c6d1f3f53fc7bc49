"""``shredfold serve`` tells a request's template from its prompt alone, by asking each
registered benchmark's ``prompt_reader`` in benchmark order."""

from __future__ import annotations

import pytest

from shredfold.chat_api import BadRequest, ChatRequest
from shredfold.origami_bench.prompts import MCQ_TASK, mcq_template
from shredfold.serve.templates import infer_template, readers, to_request
from shredfold.shred.prompts import build_request


def test_each_benchmark_recognises_its_own_prompts() -> None:
    shred = build_request(kind="prose", lang="en", n=8, images=[b"x"], composite=True, item=None)
    assert infer_template(shred.text) == shred.template
    assert infer_template("Which picture comes next? " + MCQ_TASK) == mcq_template()
    assert len(readers()) >= 2  # ShredBench's and OrigamiBench's, and any an installed package adds


def test_a_prompt_no_benchmark_knows_is_refused_with_every_reason_in_order() -> None:
    with pytest.raises(BadRequest) as err:
        infer_template("Describe this image.")
    reasons = str(err.value).split("; ")
    assert reasons[0].startswith("prompt matches no ShredBench template of version ")
    assert reasons[1].startswith("prompt matches no OrigamiBench template of version ")
    assert err.value.param == "messages"


def test_a_chat_body_becomes_the_request_a_model_gets_in_process() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Pick the letter. " + MCQ_TASK}]}
    request = to_request(ChatRequest.model_validate(body))
    assert request.template == mcq_template()
    assert request.messages[0].text.startswith("Pick the letter.")

