"""The built-in OrigamiBench agents' play: reference rows that see what an API model sees.

(:mod:`shredfold.models.builtin.origami_agents` registers them as adapters.)


- ``origami-oracle``: replays the design's ground-truth fold sequence (MCQ: the stored
  answer). The only agent that reads ground truth (through ``request.item``).
- ``origami-random``: a random valid fold each turn (MCQ: a random letter).
- ``origami-search``: full-step, a beam search over fold sequences on the folded outline
  toward the target picture, planned once per episode (:mod:`.fold_search`) (MCQ: the
  option that is one fold of the reference in its pictures, or the closest to the fold the
  prompt names, :mod:`.picker`).

Agents that play full-step episodes rebuild the current state from the accepted actions
listed in the prompt with the engine, so they need nothing the prompt does not say.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

import numpy as np

from shredfold.calls import ModelCallError, Request, Response
from shredfold.origami_bench.prompts import LETTERS, task_of_template, valid_history
from shredfold.spec import ModelConfig
from shredfold.store import Store, canonical_json

SEARCH_SIZE = 128  # pixels of the masks the search compares
# States and plans an agent remembers: one adapter plays every episode of a cell, and a
# folded state can hold megabytes, so the memo keeps the latest (an episode's own chain
# of states and its plans are far fewer)
MEMO_ENTRIES = 256


class Memo(OrderedDict[str, Any]):
    """A dict that forgets its oldest entries past ``max_entries``."""

    def __init__(self, max_entries: int) -> None:
        super().__init__()
        self.max_entries = max_entries

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        while len(self) > self.max_entries:
            self.popitem(last=False)


def _rng(request: Request) -> np.random.Generator:
    digest = hashlib.sha256(canonical_json(request.fingerprint())).hexdigest()
    return np.random.default_rng(int(digest[:16], 16))


def _reply(obj: dict[str, Any], name: str) -> Response:
    return Response(text=json.dumps(obj), served_model=name)


class _Agent:
    name = ""

    def __init__(self, config: ModelConfig, store: Store | None = None) -> None:
        self.config = config
        self.store = store
        self._states = Memo(MEMO_ENTRIES)

    def complete(self, request: Request) -> Response:
        task = task_of_template(request.template)
        if task == "mcq":
            return _reply({"answer": self.choose(request)}, self.name)
        return _reply(self.act(request, task), self.name)

    def choose(self, request: Request) -> str:
        raise NotImplementedError

    def act(self, request: Request, kind: str) -> dict[str, Any]:
        raise NotImplementedError

    def current_state(self, request: Request, kind: str) -> Any:
        """The state after the accepted actions in the prompt (memoised per history)."""
        from shredfold.origami_bench.env import replay_actions, step

        actions = valid_history(request.text)
        key = kind + canonical_json(actions).decode()
        if key not in self._states:
            prev = kind + canonical_json(actions[:-1]).decode()
            if actions and prev in self._states:
                self._states[key], _, _ = step(self._states[prev], json.dumps(actions[-1]), kind)  # type: ignore[arg-type]
            else:
                self._states[key] = replay_actions(actions, kind)  # type: ignore[arg-type]
        return self._states[key]


class OrigamiOracle(_Agent):
    name = "origami-oracle"

    def choose(self, request: Request) -> str:
        from shredfold.origami_bench.items import MCQ_STAGE

        if request.item is None or not self.store or not self.store.has(MCQ_STAGE, request.item):
            raise ModelCallError(f"origami-oracle: no stored item {request.item!r}")
        return str(self.store.get_json(MCQ_STAGE, request.item, "item.json")["answer"])

    def act(self, request: Request, kind: str) -> dict[str, Any]:
        from shredfold.origami_bench.targets import TARGET_STAGE

        if request.item is None or not self.store or not self.store.has(TARGET_STAGE, request.item):
            raise ModelCallError(f"origami-oracle: no stored target {request.item!r}")
        meta = self.store.get_json(TARGET_STAGE, request.item, "meta.json")
        plan = meta["sequence"] if kind == "fold" else meta.get("creases")
        done = len(valid_history(request.text))
        if not plan or done >= len(plan):
            return {"stop": True}
        return dict(plan[done])


class OrigamiRandom(_Agent):
    name = "origami-random"

    def choose(self, request: Request) -> str:
        return LETTERS[int(_rng(request).integers(4))]

    def act(self, request: Request, kind: str) -> dict[str, Any]:
        from shredfold.origami import FoldState
        from shredfold.origami_bench.env import apply
        from shredfold.origami_bench.procedural import candidate_lines
        from shredfold.origami_bench.prompts import Action

        rng = _rng(request)
        state = self.current_state(request, kind)
        if kind == "fold":
            lines = candidate_lines(state)
        else:
            pts = np.concatenate([state.pattern.vertices, rng.uniform(0, 1, (8, 2))])
            lines = [(pts[i], pts[j]) for i in range(len(pts)) for j in range(i + 1, len(pts))]
        for _ in range(30):
            p, q = lines[int(rng.integers(len(lines)))]
            if rng.random() < 0.5:
                p, q = q, p
            action = Action(
                (round(float(p[0]), 6), round(float(p[1]), 6)),
                (round(float(q[0]), 6), round(float(q[1]), 6)),
                "V" if rng.random() < 0.5 else "M",
            )
            folded = apply(state, action, kind)  # type: ignore[arg-type]
            if isinstance(folded, FoldState):
                # The env applies this very action, and the next turn's prompt lists it as
                # valid: remembering its state spares folding it again then (deep in a
                # random episode one fold of a thick stack costs seconds).
                after = [*valid_history(request.text), action.as_json()]
                self._states[kind + canonical_json(after).decode()] = folded
                return action.as_json()
        return {"stop": True}


class OrigamiSearch(_Agent):
    name = "origami-search"

    def choose(self, request: Request) -> str:
        from shredfold.origami_bench.prompts import mcq_step
        from shredfold.origami_bench.solvers.picker import choose

        try:
            # the pictures and the step the prompt names, as a model sees them
            return LETTERS[choose(request.images, mcq_step(request.text)).index]
        except ValueError as exc:
            raise ModelCallError(f"origami-search: {exc}") from None

    def act(self, request: Request, kind: str) -> dict[str, Any]:
        """The next fold of the plan from the blank sheet toward the pictured target, while
        the accepted history follows it; else the first of a plan from the current state.
        Either is a function of the request alone (the target picture, the history, the
        turns), memoised per target and history."""
        from shredfold.origami_bench.prompts import turn_number
        from shredfold.origami_bench.solvers.fold_search import turns_left

        if kind != "fold":
            return {"stop": True}  # the search plans simple folds only
        history = valid_history(request.text)
        target = request.images[0]
        turn = turn_number(request.text)
        limit = turns_left(request.text) + turn - 1
        root = self._plan(target, [], limit)
        if turn == len(history) + 1 and history == root[: len(history)]:
            rest = root[len(history) :]
        else:
            rest = self._plan(target, history, turns_left(request.text))
        return dict(rest[0]) if rest else {"stop": True}

    def _plan(self, target: bytes, history: list[dict[str, Any]], steps: int) -> list[dict[str, Any]]:
        from shredfold.origami_bench.env import replay_actions
        from shredfold.origami_bench.solvers.fold_search import plan_folds

        # the target's bytes are in the key: one agent plays many episodes
        key = "plan " + hashlib.sha256(target).hexdigest() + canonical_json([history, steps]).decode()
        if key not in self._states:
            self._states[key] = plan_folds(replay_actions(history, "fold"), target, steps)
        return list(self._states[key])
