"""OrigamiBench item values: what a multiple-choice item is, before it is built.

Light (pydantic only): plans hold these; :mod:`.mcq` plans and builds them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from shredfold.origami_bench.design import Design
from shredfold.prompts.origami import LETTERS

# 3: options must differ clearly in pixels, other designs' states must not be one fold of the
# reference (mcq.MIN_DIFFERENT_SHARE, mcq.ONE_FOLD_FIT), dropped items; and designs without
# a fold sequence take part through their crease order
# 4: a causal item stores the step its prompt names (item.json "step"); a crease order's
# first step has no other-assignment distractor (the answer turned over)
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
