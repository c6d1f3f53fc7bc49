"""The Chat Completions shapes `shredfold serve` answers with, as pure values."""

from __future__ import annotations

import json

import pytest

from shredfold.chat_api import ApiError, chunks, completion, parse_body, sse, usage

TEXT = "第一行：边界\n    indented code  \n👍🏽 e\u0301 done"


@pytest.mark.parametrize("n", [1, 3])
def test_stream_chunks_join_to_the_text_of_every_choice(n: int) -> None:
    tokens = usage(10, 4 * n)
    events = list(chunks("chatcmpl-1", "m", 7, TEXT, n, tokens))
    by_choice: dict[int, str] = {}
    for e in events[:-1]:
        assert e["object"] == "chat.completion.chunk" and e["usage"] is None
        (choice,) = e["choices"]
        by_choice[choice["index"]] = by_choice.get(choice["index"], "") + choice["delta"].get("content", "")
    assert by_choice == dict.fromkeys(range(n), TEXT)
    assert events[-1]["choices"] == [] and events[-1]["usage"] == tokens
    plain = completion("chatcmpl-1", "m", 7, TEXT, n, tokens)
    assert [c["message"]["content"] for c in plain["choices"]] == [TEXT] * n


def test_events_are_one_data_line_each() -> None:
    event = next(chunks("chatcmpl-1", "m", 7, "a\nb", 1, None))
    assert "usage" not in event
    wire = sse(event)
    assert wire.startswith(b"data: ") and wire.endswith(b"\n\n") and wire.count(b"\n") == 2
    assert json.loads(wire[6:]) == event
    assert sse("[DONE]") == b"data: [DONE]\n\n"


def test_a_bad_field_names_its_parameter_as_openai_does() -> None:
    with pytest.raises(ApiError) as err:
        parse_body(json.dumps({"model": "m", "messages": [{"role": "user", "content": [{"text": "x"}]}]}).encode())
    assert err.value.status == 400 and err.value.param == "messages[0].content[0].type"
    assert err.value.body()["error"] == {
        "message": err.value.message, "type": "invalid_request_error", "param": "messages[0].content[0].type", "code": None,
    }  # fmt: skip
