"""The model protocol: what an adapter's instance provides (see :mod:`shredfold.calls` for
the requests and responses it exchanges)."""

from __future__ import annotations

import base64
from typing import Any, Protocol, runtime_checkable

from shredfold.calls import Request, Response
from shredfold.spec import ModelConfig


@runtime_checkable
class Model(Protocol):
    config: ModelConfig

    def identity(self) -> dict[str, Any]:
        """What makes two answers interchangeable: adapter, endpoint model, decoding, images."""
        ...

    def complete(self, request: Request) -> Response: ...


def data_url(image: bytes) -> str:
    """A base64 data URL of PNG or JPEG bytes (the type told by the file's own signature)."""
    mime = "image/jpeg" if image[:3] == b"\xff\xd8\xff" else "image/png"
    return f"data:{mime};base64," + base64.b64encode(image).decode("ascii")
