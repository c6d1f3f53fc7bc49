"""Which benchmark template a served request's prompt is: each registered benchmark's
``prompt_reader`` hook (built-in and outside benchmarks alike), in benchmark order."""

from __future__ import annotations

from collections.abc import Callable

from shredfold.calls import Request
from shredfold.chat_api import BadRequest, ChatRequest
from shredfold.chat_api import to_request as _to_request
from shredfold.tasks import registry


def readers() -> list[Callable[[str], str]]:
    """The registered benchmarks' prompt readers (``read(prompt)`` → template, or ValueError)."""
    return [b.prompt_reader for b in registry.benchmarks() if b.prompt_reader is not None]


def infer_template(prompt: str) -> str:
    """The benchmark template whose task wording the prompt contains; a refusal gives every
    benchmark's reason, in benchmark order."""
    errors = []
    for read in readers():
        try:
            return read(prompt)
        except ValueError as exc:
            errors.append(str(exc))
    raise BadRequest("; ".join(errors) or "no benchmark recognises prompts", "messages")


def to_request(chat: ChatRequest) -> Request:
    """The Request a built-in model would get in-process for this body."""
    return _to_request(chat, infer_template)
