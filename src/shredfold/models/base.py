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


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
