"""The Chat Completions API as ``shredfold serve`` speaks it: request bodies in, replies,
stream chunks and error bodies out. Pure (values in, values out); the HTTP side is in
:mod:`shredfold.serve`.

Shapes follow OpenAI's API reference: ``chat.completion`` objects, ``chat.completion.chunk``
server-sent events ending with ``data: [DONE]``, ``model`` objects, and errors as
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from shredfold.calls import Message, Request

# OpenAI's own bound on ``n``.
MAX_CHOICES = 128
# Characters per streamed content delta; the client joins them, so any size gives the same text.
STREAM_PIECE = 32


class ApiError(Exception):
    """A request answered with an error: HTTP status and OpenAI's error object."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind or ("invalid_request_error" if status < 500 else "server_error")
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


# ---------------------------------------------------------------- request body


class _Loose(BaseModel):
    # Fields we do not use (temperature, seed, max_tokens, …) are accepted and ignored.
    model_config = ConfigDict(extra="allow")


class _ImageURL(_Loose):
    url: str
    detail: str | None = None


class _Part(_Loose):
    type: str
    text: str | None = None
    image_url: _ImageURL | None = None


class _InMessage(_Loose):
    role: str
    content: str | list[_Part] | None = None


class _StreamOptions(_Loose):
    include_usage: StrictBool | None = None


class ChatRequest(_Loose):
    model: str
    messages: list[_InMessage] = Field(min_length=1)
    stream: StrictBool | None = None
    stream_options: _StreamOptions | None = None
    n: Annotated[int, Field(ge=1, le=MAX_CHOICES)] | None = None

    @property
    def choices(self) -> int:
        return self.n or 1

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


class BadRequest(ValueError):
    """The body cannot be turned into a Request (answered with HTTP 400)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _param(loc: tuple[Any, ...]) -> str:
    """A pydantic location as OpenAI writes a parameter: ``messages[1].content``."""
    out = ""
    for p in loc:
        if isinstance(p, int):
            out += f"[{p}]"
        elif not (isinstance(p, str) and p.startswith(("list[", "function-"))) and p != "str":
            out += ("." if out else "") + str(p)
    return out


def parse_body(raw: bytes) -> ChatRequest:
    """The validated body; :class:`ApiError` 400 naming the parameter at fault."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        # RecursionError: a body nested thousands deep; UnicodeDecodeError is a ValueError.
        raise ApiError(400, f"the body is not valid JSON ({str(exc)[:120]})", code="invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", code="invalid_json")
    try:
        return ChatRequest.model_validate(body)
    except (ValidationError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            raise ApiError(400, "the body is nested too deeply") from None
        # Of a union's errors (content: a string or a list of parts), the deepest is the one
        # that says what is wrong; max() keeps the first among equals.
        first = max(exc.errors(), key=lambda e: len(e["loc"]))
        param = _param(tuple(first["loc"]))
        raise ApiError(400, f"{param or 'body'}: {first['msg']}", param=param or None) from None


def decode_data_url(url: str, where: str = "image_url.url") -> bytes:
    """The bytes of a base64 ``data:image/…`` URL, checked to be an image Pillow reads."""
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:image/") or not head.endswith(";base64"):
        raise BadRequest(f"{where}: only base64 data:image URLs are supported", where)
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise BadRequest(f"{where}: bad base64 image: {exc}", where) from None
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()  # headers and checksums; cheap, decodes no pixels
    except Exception as exc:  # noqa: BLE001 — untrusted bytes: Pillow raises many types
        raise BadRequest(f"{where}: not an image Pillow can read ({type(exc).__name__})", where) from None
    return data


def to_request(chat: ChatRequest, infer_template: Callable[[str], str]) -> Request:
    """The Request a built-in model would get in-process for this body; ``infer_template``
    names the benchmark template whose wording the prompt holds (or raises
    :class:`BadRequest`)."""
    messages = []
    for i, m in enumerate(chat.messages):
        if isinstance(m.content, list):
            texts = [p.text or "" for p in m.content if p.type == "text"]
            images = [
                decode_data_url(p.image_url.url, f"messages[{i}].content[{j}].image_url.url")
                for j, p in enumerate(m.content)
                if p.type == "image_url" and p.image_url
            ]
            messages.append(Message(role=m.role, text="\n".join(texts), images=tuple(images)))
        else:
            messages.append(Message(role=m.role, text=m.content or ""))
    prompt = "\n\n".join(m.text for m in messages)
    template = infer_template(prompt)
    return Request(template=template, messages=tuple(messages))


# ---------------------------------------------------------------- replies


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion(
    chat_id: str, model: str, created: int, text: str, n: int, tokens: dict[str, int]
) -> dict[str, Any]:
    """A ``chat.completion`` with ``n`` choices of ``text``."""
    return {
        "id": chat_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
            for i in range(n)
        ],
        "usage": tokens,
    }


def chunks(
    chat_id: str,
    model: str,
    created: int,
    text: str,
    n: int,
    tokens: dict[str, int] | None,
) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed answer, as OpenAI sends them: the
    role first, then the content in pieces, then the finish reason; with ``tokens`` (the
    request's ``stream_options.include_usage``) every chunk has ``usage: null`` and a last
    chunk with no choices carries the usage."""
    extra = {"usage": None} if tokens is not None else {}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    for i in range(n):
        yield chunk(i, {"role": "assistant", "content": ""})
        for k in range(0, len(text), STREAM_PIECE):
            yield chunk(i, {"content": text[k : k + STREAM_PIECE]})
        yield chunk(i, {}, "stop")
    if tokens is not None:
        yield {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": tokens,
        }


def sse(event: dict[str, Any] | str) -> bytes:
    """One server-sent event: a JSON object, or the literal ``[DONE]``."""
    data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def model_object(name: str, created: int) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": "shredfold"}
