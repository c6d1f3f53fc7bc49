"""The built-in OrigamiBench agents as adapters (reference rows; no ShredBench cells).

- ``origami-oracle``: replays the design's ground-truth fold sequence (MCQ: the stored
  answer); the only agent that reads ground truth (through ``request.item``).
- ``origami-random``: a random valid fold each turn (MCQ: a random letter).
- ``origami-search``: beam search over fold sequences toward the target picture.

How they play is in :mod:`shredfold.origami_bench.solvers.agents` (engine work, imported when an
agent is built); this module only declares them.
"""

from __future__ import annotations

from typing import Any

from shredfold.calls import Request, Response
from shredfold.models.adapter import AdapterBase, adapter
from shredfold.spec import ModelConfig
from shredfold.store import Store

# 2: MCQ answers picked from the pictures (picker), full-step episodes by beam search (fold_search).
VERSION = 2


class _OrigamiAgent(AdapterBase):
    play = ""  # the class in shredfold.origami_bench.solvers.agents that plays
    version = VERSION

    def __init__(self, config: ModelConfig, store: Store | None) -> None:
        from shredfold.origami_bench.solvers import agents

        super().__init__(config)
        self._agent = getattr(agents, self.play)(config, store)

    @classmethod
    def identity_of(cls, config: ModelConfig) -> dict[str, Any]:
        return {"adapter": config.adapter, "version": cls.version}

    @classmethod
    def build(cls, config: ModelConfig, store: Store) -> _OrigamiAgent:
        return cls(config, store)

    def complete(self, request: Request) -> Response:
        return self._agent.complete(request)


@adapter("origami-oracle", benchmarks=("origami",), reference=True)
class OrigamiOracle(_OrigamiAgent):
    play = "OrigamiOracle"


@adapter("origami-random", benchmarks=("origami",), reference=True)
class OrigamiRandom(_OrigamiAgent):
    play = "OrigamiRandom"


@adapter("origami-search", benchmarks=("origami",), reference=True)
class OrigamiSearch(_OrigamiAgent):
    play = "OrigamiSearch"
    # 3: full-step plans from a library of outlines within four folds, one plan per target
    version = 3
