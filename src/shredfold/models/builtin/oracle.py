"""The oracle: answers with the ground truth. A reference row, never a contestant."""

from __future__ import annotations

from typing import Any

from shredfold.models.base import ModelCallError, Request, Response
from shredfold.prompts.shred import kind_of_template
from shredfold.spec import ModelConfig
from shredfold.store import Store

VERSION = 1


class Oracle:
    def __init__(self, config: ModelConfig, store: Store) -> None:
        self.config = config
        self.store = store

    def identity(self) -> dict[str, Any]:
        return {"adapter": "oracle", "version": VERSION}

    def complete(self, request: Request) -> Response:
        from shredfold.shred.sample import SAMPLE_STAGE

        if request.item is None or not self.store.has(SAMPLE_STAGE, request.item):
            raise ModelCallError(f"oracle: no stored sample for item {request.item!r}")
        folder = self.store.path(SAMPLE_STAGE, request.item)
        kind = kind_of_template(request.template)
        name = "truth.html" if kind == "table" else "truth.txt"
        return Response(text=(folder / name).read_text(encoding="utf-8"), served_model="oracle")
