"""OrigamiBench full-step as a Gymnasium environment, for reinforcement learning.

One episode is one full-step benchmark episode on one target, played by the episode core
every RL front end shares (:class:`~shredfold.origami_bench.episode.FoldEpisode`): each
turn's observation is decoded from the very request a model would get, the action is the
model's raw answer text, parsed and applied as the benchmark does, and GS is the score's own
function. So a list of answers gives the same final GS here as in a benchmark episode.

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
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image

from shredfold.origami import FoldState
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.env import EnvConfig, render_folded, vertex_list
from shredfold.origami_bench.episode import (
    DEFAULT_TARGET,
    FoldEpisode,
    TargetLike,
    resolve_target,  # re-exported: this module's name for it before the episode core
)
from shredfold.origami_bench.prompts import MAX_VERTICES_SHOWN, ActionKind

ENV_ID = "shredfold/OrigamiFold-v0"
IMAGES = ("target", "folded", "pattern")  # the order of a turn's images
Reward = Literal["gs_delta", "gs"]
__all__ = ["DEFAULT_TARGET", "ENV_ID", "OrigamiFoldEnv", "decode_png", "register_envs", "resolve_target"]


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
        self.episode = FoldEpisode(
            target,
            kind=kind,
            step_limit=step_limit,
            image_size=image_size,
            gs_threshold=gs_threshold,
            procedural_seed=procedural_seed,
        )
        self.cfg = self.episode.cfg
        self.reward_kind: Reward = reward
        self.invalid_penalty = float(invalid_penalty)
        self.render_mode = render_mode

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

    @property
    def design(self) -> Design:
        return self.episode.design

    @property
    def gs_threshold(self) -> float | None:
        return self.episode.gs_threshold

    # ------------------------------------------------------------ the loop

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A blank sheet; ``options={"target": …}`` changes the target (any form ``target=``
        takes). Nothing here is random: ``seed`` only seeds ``np_random`` for the caller."""
        super().reset(seed=seed)
        if options and "target" in options:
            self.episode.set_target(options["target"])
        self.episode.reset()
        obs, prompt = self._observe()
        return obs, {"gs": self.episode.gs, "design": self.design.id, "prompt": prompt}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self.episode.started or self.episode.done:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        out = self.episode.step(action if isinstance(action, str) else _as_text(action))
        reward = out.gs - out.gs_before if self.reward_kind == "gs_delta" else out.gs
        if not out.feedback.valid:
            reward -= self.invalid_penalty
        obs, prompt = self._observe()
        info = {
            "gs": out.gs,
            "valid": out.feedback.valid,
            "reason": out.feedback.reason,
            "feedback": out.feedback.text(),
            "action": out.action,
            "effective": out.effective,
            "state_hash": out.state_hash,
            "design": self.design.id,
            "prompt": prompt,
        }
        return obs, float(reward), out.terminated, out.truncated, info

    def render(self) -> np.ndarray | None:
        """The current folded state as an RGB array (None without ``render_mode``)."""
        if self.render_mode is None or not self.episode.started:
            return None
        return decode_png(render_folded(self.episode.state, self.cfg.image_size))

    @property
    def state(self) -> FoldState:
        if not self.episode.started:
            raise RuntimeError("call reset() first")
        return self.episode.state

    # ------------------------------------------------------------ helpers

    def _observe(self) -> tuple[dict[str, Any], str]:
        request = self.episode.request()
        target, folded, pattern = request.images
        pts = vertex_list(self.episode.state, self.cfg.kind)[:MAX_VERTICES_SHOWN]
        vertices = np.zeros((MAX_VERTICES_SHOWN, 2), np.float64)
        if pts:
            vertices[: len(pts)] = pts
        obs = {
            "target": decode_png(target),
            "folded": decode_png(folded),
            "pattern": decode_png(pattern),
            "vertices": vertices,
            "n_vertices": len(pts),
            "turn": self.episode.turns,
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
