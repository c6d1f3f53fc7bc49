"""The oracle: answers with the ground truth. A reference row, never a contestant."""

from __future__ import annotations

from typing import Any

from shredfold.calls import ModelCallError, Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.shred.prompts import kind_of_template
from shredfold.spec import ModelConfig
from shredfold.store import Store

VERSION = 1


@adapter("oracle", benchmarks=("shred",), reference=True)
class Oracle(AdapterBase):
    def __init__(self, config: ModelConfig, store: Store) -> None:
        super().__init__(config)
        self.store = store

    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        return {"adapter": "oracle", "version": VERSION}

    @classmethod
    def build(cls, config: ModelConfig, store: Store) -> Oracle:
        return cls(config, store)

    def complete(self, request: Request) -> Response:
        from shredfold.shred.sample_folder import SAMPLE_STAGE, load_truth

        if request.item is None or not self.store.has(SAMPLE_STAGE, request.item):
            raise ModelCallError(f"oracle: no stored sample for item {request.item!r}")
        truth = load_truth(self.store.object(SAMPLE_STAGE, request.item))
        kind = kind_of_template(request.template)
        text = truth.source if kind is None else truth.html if kind == "table" else truth.text
        return Response(text=text or "", served_model="oracle")
