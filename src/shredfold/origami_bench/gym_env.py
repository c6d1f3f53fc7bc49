"""OrigamiBench full-step as a Gymnasium environment, for reinforcement learning.

One episode is one full-step benchmark episode on one target, played through the same
functions: each turn's observation is decoded from the very request a model would get
(:func:`~shredfold.origami_bench.env.turn_request`), the action is the model's raw answer
text (:func:`~shredfold.origami_bench.env.step` parses and applies it), and GS is the score's
own function (:func:`~shredfold.origami_bench.env.gs`). So a list of answers gives the same
final GS here as in a benchmark episode.

Gymnasium 1.x no longer reads the ``gymnasium.envs`` entry point group (the plugin system
was removed in 1.0): importing this module registers ``shredfold/OrigamiFold-v0``, as does
:func:`register_envs`, which the entry point declared in ``pyproject.toml`` names for tools
(and Gymnasium < 1.0) that load that group. Without an import,
``gymnasium.make("shredfold.origami_bench.gym_env:shredfold/OrigamiFold-v0")`` imports it.
"""

from __future__ import annotations

import io
import math
import string
from functools import cache
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image

from shredfold.origami import FoldState, square_sheet
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.env import (
    EnvConfig,
    gs,
    outline_changed,
    recorded_action,
    silhouette,
    state_hash,
    step,
    turn_request,
    vertex_list,
)
from shredfold.prompts.origami import MAX_VERTICES_SHOWN, ActionKind, HistoryEntry, Stop
from shredfold.spec import DesignSources

ENV_ID = "shredfold/OrigamiFold-v0"
DEFAULT_TARGET = "builtin/blintz-half"
IMAGES = ("target", "folded", "pattern")  # the order of a turn's images
Reward = Literal["gs_delta", "gs"]
TargetLike = Design | str | int


def resolve_target(target: TargetLike, seed: int = 0) -> Design:
    """A design to fold: a :class:`Design`; a built-in design's id (``"builtin/book-fold"``)
    or name (``"book-fold"``); ``"procedural/007"`` or ``7``, the procedural design a spec
    with seed ``seed`` and the default procedural settings plans under that id."""
    from shredfold.origami_bench.designs import builtin_cached

    if isinstance(target, Design):
        return target
    if isinstance(target, bool) or not isinstance(target, (int, str)):
        raise TypeError(f"target: a Design, a design id or a procedural index, not {type(target).__name__}")
    if isinstance(target, str) and target.startswith("procedural/"):
        index = target.removeprefix("procedural/")
        if not index.isdigit():
            raise ValueError(f"target {target!r}: a procedural id is procedural/<index>")
        target = int(index)
    if isinstance(target, int):
        if not 0 <= target <= 10_000:
            raise ValueError(f"target {target}: a procedural index is 0 to 10000")
        return _procedural(target, seed)
    builtin = {d.id: d for d in builtin_cached()}
    name = target if target.startswith("builtin/") else f"builtin/{target}"
    if name not in builtin:
        raise ValueError(f"target {target!r}: no such built-in design (one of {sorted(builtin)})")
    return builtin[name]


@cache
def _procedural(index: int, seed: int) -> Design:
    """Memoised: making a procedural design replays a random search with the engine."""
    from shredfold.origami_bench.designs import procedural_design

    return procedural_design(index, DesignSources(), seed)


def decode_png(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.uint8)


class OrigamiFoldEnv(gymnasium.Env[dict[str, Any], str]):
    """Fold a blank square toward a target, one JSON answer per step.

    - **action**: the answer text a model would give, ``{"start": [x, y] | id, "end": …,
      "assignment": "M" | "V"}`` or ``{"stop": true}``, parsed as the benchmark parses it
      (prose and code fences around the JSON are fine). The space is printable ASCII up to
      ``max_action_chars``; longer or other text is still accepted, as the benchmark does.
    - **observation**: the turn's three images as uint8 ``(image_size, image_size, 3)``
      arrays (``target``, ``folded`` state, crease ``pattern``), the ``vertices`` the turn
      lists (the first :data:`MAX_VERTICES_SHOWN`, zero-padded; folded-plane coordinates for
      ``kind="fold"``, sheet coordinates for ``"crease"``), ``n_vertices`` of them valid, and
      ``turn``, the turns taken. The prompt text (with the history) is ``info["prompt"]``.
    - **reward**: ``"gs_delta"`` (default) the change in GS, so an episode's rewards add up
      to its final GS minus the blank sheet's; ``"gs"`` the GS after the step. An invalid
      answer (unparsable, unknown fields, impossible fold) leaves the state, costs
      ``invalid_penalty`` (default 0) and puts the engine's reason in ``info["feedback"]``.
    - **terminated** on ``{"stop": true}`` or once GS ≥ ``gs_threshold`` (None: never);
      **truncated** after ``step_limit`` turns (the benchmark's; invalid answers count).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(
        self,
        target: TargetLike = DEFAULT_TARGET,
        *,
        kind: ActionKind = "fold",
        step_limit: int = EnvConfig.step_limit,
        image_size: int = EnvConfig.image_size,
        reward: Reward = "gs_delta",
        invalid_penalty: float = 0.0,
        gs_threshold: float | None = 0.99,
        max_action_chars: int = 1024,
        procedural_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        if reward not in ("gs_delta", "gs"):
            raise ValueError(f"reward: 'gs_delta' or 'gs', not {reward!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: None or 'rgb_array', not {render_mode!r}")
        if not 1 <= step_limit <= 200 or not 64 <= image_size <= 2048:
            raise ValueError("step_limit is 1 to 200 and image_size 64 to 2048, as in a spec")
        self.cfg = EnvConfig(kind=kind, step_limit=step_limit, image_size=image_size)
        self.reward_kind: Reward = reward
        self.invalid_penalty = float(invalid_penalty)
        self.gs_threshold = gs_threshold
        self.procedural_seed = procedural_seed
        self.render_mode = render_mode
        self._set_target(target)

        s = image_size
        image = spaces.Box(0, 255, (s, s, 3), np.uint8)
        # An accepted fold keeps some paper in place (the engine rejects a line that misses
        # the model or has no layer on its right), and no paper point moves farther than the
        # sheet's diagonal from one that stays: after n folds every vertex lies within n·√2
        # of the unit square. Crease actions keep vertices on the sheet.
        reach = step_limit * math.sqrt(2) + 1e-6 if kind == "fold" else 1e-6
        self.observation_space = spaces.Dict(
            {
                "target": image,
                "folded": image,
                "pattern": image,
                "vertices": spaces.Box(-reach, 1 + reach, (MAX_VERTICES_SHOWN, 2), np.float64),
                "n_vertices": spaces.Discrete(MAX_VERTICES_SHOWN + 1),
                "turn": spaces.Discrete(step_limit + 1),
            }
        )
        self.action_space = spaces.Text(max_action_chars, min_length=0, charset=string.printable)
        self._state: FoldState | None = None

    # ------------------------------------------------------------ target

    def _set_target(self, target: TargetLike) -> None:
        from shredfold.origami_bench.env import render_folded
        from shredfold.origami_bench.targets import target_state

        self.design = resolve_target(target, self.procedural_seed)
        state = target_state(self.design)  # what solve_target stores for the benchmark
        self._target_png = render_folded(state, self.cfg.image_size)
        self._target_mask = silhouette(state, self.cfg.image_size)

    # ------------------------------------------------------------ the loop

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A blank sheet; ``options={"target": …}`` changes the target (any form ``target=``
        takes). Nothing here is random: ``seed`` only seeds ``np_random`` for the caller."""
        super().reset(seed=seed)
        if options and "target" in options:
            self._set_target(options["target"])
        self._state = square_sheet()
        self._history: list[HistoryEntry] = []
        self._turns = 0
        self._done = False
        self._gs = self._score(self._state)
        obs, prompt = self._observe()
        return obs, {"gs": self._gs, "design": self.design.id, "prompt": prompt}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._state is None or self._done:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        answer = action if isinstance(action, str) else _as_text(action)
        before = self._state
        new, fb, parsed = step(before, answer, self.cfg.kind)
        self._turns += 1
        self._state = new
        gs_before = self._gs
        if new is not before:  # a rejected action leaves the state, and so its GS
            self._gs = self._score(new)
        stopped = isinstance(parsed, Stop)
        if not stopped:
            self._history.append(HistoryEntry(recorded_action(parsed), fb.text()))
        reward = self._gs - gs_before if self.reward_kind == "gs_delta" else self._gs
        if not fb.valid:
            reward -= self.invalid_penalty
        reached = self.gs_threshold is not None and self._gs >= self.gs_threshold
        terminated = stopped or reached
        truncated = not terminated and self._turns >= self.cfg.step_limit
        self._done = terminated or truncated
        obs, prompt = self._observe()
        info = {
            "gs": self._gs,
            "valid": fb.valid,
            "reason": fb.reason,
            "feedback": fb.text(),
            "action": recorded_action(parsed),
            "effective": fb.valid and not stopped and outline_changed(before, new),
            "state_hash": state_hash(new),
            "design": self.design.id,
            "prompt": prompt,
        }
        return obs, float(reward), terminated, truncated, info

    def render(self) -> np.ndarray | None:
        """The current folded state as an RGB array (None without ``render_mode``)."""
        if self.render_mode is None or self._state is None:
            return None
        from shredfold.origami_bench.env import render_folded

        return decode_png(render_folded(self._state, self.cfg.image_size))

    @property
    def state(self) -> FoldState:
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    # ------------------------------------------------------------ helpers

    def _score(self, state: FoldState) -> float:
        return gs(silhouette(state, self.cfg.image_size), self._target_mask)

    def _observe(self) -> tuple[dict[str, Any], str]:
        assert self._state is not None
        request = turn_request(self._state, self._target_png, self.cfg, self._history, self.design.key)
        target, folded, pattern = request.images
        pts = vertex_list(self._state, self.cfg.kind)[:MAX_VERTICES_SHOWN]
        vertices = np.zeros((MAX_VERTICES_SHOWN, 2), np.float64)
        if pts:
            vertices[: len(pts)] = pts
        obs = {
            "target": decode_png(target),
            "folded": decode_png(folded),
            "pattern": decode_png(pattern),
            "vertices": vertices,
            "n_vertices": len(pts),
            "turn": self._turns,
        }
        return obs, request.text


def _as_text(action: Any) -> str:
    """Whatever an agent passed, as the text a model's answer would be (never raises)."""
    if isinstance(action, bytes):
        return action.decode("utf-8", errors="replace")
    if isinstance(action, np.ndarray) and action.shape == ():
        return str(action.item())
    return str(action)


def register_envs() -> None:
    """Register ``shredfold/OrigamiFold-v0`` with Gymnasium (once; later calls do nothing)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:OrigamiFoldEnv")


register_envs()
