"""What every part of a spec shares: the error a spec raises, and strict models (unknown
keys refused, values frozen).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, the YAML path and the cause."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

