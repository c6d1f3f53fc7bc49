"""What every model is asked and answers: the call contract shared by prompts, adapters,
tasks and the server (kept below all of them, so none imports another to speak).

A :class:`Request` is exactly what an API model is sent: a prompt and images. Built-in models
get the same object; only ``item`` (the sample key, never sent over the wire) lets the oracle
look up the ground truth, and the leaderboard marks the oracle as a reference row.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shredfold.store import content_key

RESPONSE_STAGE = "response"
RESPONSE_VERSION = 1


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    text: str
    images: tuple[bytes, ...] = ()


class Request(BaseModel):
    """A chat request: messages (text + PNG images), the prompt template that made them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    template: str = Field(description="Prompt template name and version, e.g. 'shred/v1'.")
    messages: tuple[Message, ...]
    item: str | None = Field(
        default=None,
        description="Sample key for bookkeeping; not sent to API models, not in the cache key.",
    )

    def fingerprint(self) -> dict[str, Any]:
        """Everything that reaches the model: template, roles, texts, image hashes."""
        return {
            "template": self.template,
            "messages": [
                {
                    "role": m.role,
                    "text": m.text,
                    "images": [hashlib.sha256(b).hexdigest() for b in m.images],
                }
                for m in self.messages
            ],
        }

    @property
    def images(self) -> list[bytes]:
        return [img for m in self.messages for img in m.images]

    @property
    def text(self) -> str:
        return "\n\n".join(m.text for m in self.messages if m.text)


class Response(BaseModel):
    """A model's answer with its accounting; errors are never stored as responses."""

    model_config = ConfigDict(extra="forbid")

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    finish_reason: str | None = None
    served_model: str | None = None


class ModelCallError(RuntimeError):
    """A call that did not produce an answer. ``transient`` errors are worth retrying."""

    def __init__(self, message: str, *, transient: bool = False, status: int | None = None):
        super().__init__(message)
        self.transient = transient
        self.status = status


def response_key(identity: dict[str, Any], request: Request) -> str:
    """Cache key of one call: model identity, prompt template version, texts and image bytes."""
    return content_key(RESPONSE_STAGE, RESPONSE_VERSION, {"model": identity}, [
        content_key("request", 1, request.fingerprint())
    ])
