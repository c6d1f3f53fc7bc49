"""The response cache key: what makes two calls the same call."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shredfold.calls import Message, ModelCallError, Request, Response, response_key
from shredfold.models.base import Model, data_url

PNG_A = b"\x89PNG\r\n\x1a\n one image"
PNG_B = b"\x89PNG\r\n\x1a\n one imagf"  # one byte differs


def request(images: tuple[bytes, ...] = (PNG_A,), *, text: str = "Transcribe.", item: str | None = "k1",
            template: str = "shred-prose/v1") -> Request:
    return Request(
        template=template,
        messages=(Message(role="system", text="You read scraps."), Message(role="user", text=text, images=images)),
        item=item,
    )


GPT = {"adapter": "openai", "model": "gpt-5.1", "temperature": 0.0}
GOLDEN_KEY = "cf3e975f1d9e3d3f189ee4393e5347d59d7999af6a12f73bbc04924b119dbf72"


def test_two_models_asked_the_same_thing_have_different_keys() -> None:
    assert response_key(GPT, request()) != response_key({**GPT, "model": "gpt-5.1-mini"}, request())
    assert response_key(GPT, request()) != response_key({**GPT, "temperature": 0.7}, request())


def test_the_item_is_bookkeeping_and_never_enters_the_key() -> None:
    assert response_key(GPT, request(item="k1")) == response_key(GPT, request(item="k2"))
    assert response_key(GPT, request(item="k1")) == response_key(GPT, request(item=None))


def test_every_image_byte_the_template_and_the_texts_enter_the_key() -> None:
    base = response_key(GPT, request())
    assert response_key(GPT, request((PNG_B,))) != base
    assert response_key(GPT, request((PNG_A, PNG_A))) != base
    assert response_key(GPT, request(text="Transcribe!")) != base
    assert response_key(GPT, request(template="shred-prose/v2")) != base
    # Order matters: the scraps are shown in the order given.
    assert response_key(GPT, request((PNG_A, PNG_B))) != response_key(GPT, request((PNG_B, PNG_A)))
    # The same content always gives the same key (a hex SHA-256).
    again = response_key(dict(reversed(GPT.items())), request())
    assert again == base and len(base) == 64 and int(base, 16) >= 0


def test_roles_enter_the_key_and_text_is_joined_for_models_that_take_one_string() -> None:
    swapped = Request(
        template="shred-prose/v1",
        messages=(Message(role="user", text="You read scraps."), Message(role="user", text="Transcribe.", images=(PNG_A,))),
    )
    assert response_key(GPT, swapped) != response_key(GPT, request())
    assert request().text == "You read scraps.\n\nTranscribe."
    assert request((PNG_A, PNG_B)).images == [PNG_A, PNG_B]


def test_data_urls_carry_the_png_base64() -> None:
    assert data_url(b"\x89PNG") == "data:image/png;base64,iVBORw=="


def test_keys_of_existing_cached_answers_never_change() -> None:
    # Changing how keys are made silently orphans every paid answer in users' stores:
    # this key was computed when RESPONSE_VERSION was 1 and must stay what it is.
    assert response_key(GPT, request()) == GOLDEN_KEY


def test_requests_and_messages_are_immutable_and_strict() -> None:
    with pytest.raises(ValidationError):
        request().template = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Message(role="user", text="x").text = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Message(role="user", text="x", colour="red")  # type: ignore[call-arg]


def test_a_response_without_accounting_counts_zero() -> None:
    r = Response(text="hi")
    assert (r.input_tokens, r.output_tokens, r.latency_s, r.cost_usd) == (0, 0, 0.0, 0.0)
    assert r.finish_reason is None and r.served_model is None


def test_any_object_with_the_model_methods_is_a_model() -> None:
    class Echo:
        config = None

        def identity(self) -> dict:
            return {"adapter": "echo"}

        def complete(self, request: Request) -> Response:
            return Response(text=request.text)

    assert isinstance(Echo(), Model)
    assert not isinstance(object(), Model)
    err = ModelCallError("HTTP 503", transient=True, status=503)
    assert (str(err), err.transient, err.status) == ("HTTP 503", True, 503)
    assert (ModelCallError("x").transient, ModelCallError("x").status) == (False, None)
