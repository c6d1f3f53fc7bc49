"""OrigamiBench item values: what a multiple-choice item is, before it is built.

Light (pydantic only): plans hold these; :mod:`.mcq` plans and builds them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from shredfold.origami_bench.design import Design
from shredfold.origami_bench.prompts import LETTERS

# 4: a causal item stores its step (item.json "step"); a first crease has no turned-over option
MCQ_STAGE, MCQ_VERSION = "origami_mcq", 4

Variant = Literal["mcq_assoc", "mcq_causal"]


class McqSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    variant: Variant
    index: int
    design: Design
    k: int  # folds in the reference state; the answer has k + 1
    answer: int  # 0..3, position of the right option
    tier: str

    @property
    def letter(self) -> str:
        return LETTERS[self.answer]
