"""OrigamiBench full-step as a TRL environment: ``GRPOTrainer(environment_factory=…)``.

TRL (1.x) makes one instance per rollout, calls ``reset(**row)`` with the data set's row and
appends what it returns to the last user message, then offers every public method of the
class as a tool, its schema read from the type hints and the Google-style docstring
(``transformers.utils.get_json_schema``). A tool may return text, or a list of content
blocks (``{"type": "image", "image": PIL.Image}``, ``{"type": "text", "text": …}``) that a
vision-language model sees as images. Rewards are functions TRL calls with ``environments=``
the rollouts' instances: :func:`gs_reward` and :func:`gs_gain_reward`.

An episode is the benchmark's, played by :class:`~shredfold.origami_bench.episode.FoldEpisode`:
the observation is the request a model would get on that turn (its images, and its text with
the reply instruction turned into one about the tools), a tool call becomes the answer JSON
the benchmark parses and applies, and GS is the score's function. The same actions give the
same final GS here, in the Gymnasium environment and in a benchmark episode.

Nothing here imports TRL: the class is plain Python, and only training needs the ``[trl]``
extra.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any, Literal

from PIL import Image

from shredfold.calls import Request
from shredfold.origami_bench.env import EnvConfig
from shredfold.origami_bench.episode import (
    DEFAULT_TARGET,
    EpisodeOver,
    FoldEpisode,
    TargetLike,
    resolve_target,
)
from shredfold.origami_bench.prompts import FULLSTEP_TASK, ActionKind

Content = str | list[dict[str, Any]]

_TOOL_REPLY = {
    "fold": "Call the fold tool with start, end and assignment, or the stop tool when the model matches the target.",
    "crease": "Call the crease tool with start, end and assignment, or the stop tool when the model matches the target.",
}


def _reply_sentence(kind: ActionKind) -> str:
    """The benchmark's instruction to answer in JSON, which a tool-calling model replaces."""
    task = FULLSTEP_TASK[kind]
    return task[task.index("Reply with") :]


class _OrigamiToolEnv:
    """What the fold and crease environments share. TRL turns every public method of the
    class into a tool, so everything but ``reset``, the action and ``stop`` is private or a
    property."""

    kind: ActionKind = "fold"

    def __init__(
        self,
        target: TargetLike = DEFAULT_TARGET,
        *,
        step_limit: int = EnvConfig.step_limit,
        image_size: int = EnvConfig.image_size,
        gs_threshold: float | None = 0.99,
        images: bool = True,
        procedural_seed: int = 0,
    ) -> None:
        self._episode = FoldEpisode(
            target,
            kind=self.kind,
            step_limit=step_limit,
            image_size=image_size,
            gs_threshold=gs_threshold,
            procedural_seed=procedural_seed,
        )
        self._images = images
        self._reply = _reply_sentence(self.kind)

    # ------------------------------------------------------------ TRL's contract

    def reset(self, target: str | int | None = None, **row: Any) -> Content:
        """Start an episode on a blank sheet and return the first turn's observation.

        Args:
            target: the design to fold, when the data set has a ``target`` column: a built-in
                design (``"book-fold"``) or a procedural id (``"procedural/007"`` or ``7``).
                None keeps the current one.
            row: the data set row's other columns (``prompt``, …), which the episode ignores.
        """
        if target is not None:
            design = resolve_target(target, self._episode.procedural_seed)
            if design.key != self._episode.design.key:  # solving a target is engine work
                self._episode.set_target(design)
        self._episode.reset()
        request = self._episode.request()
        text = _user_text(request)
        if self._reply not in text:  # the benchmark's wording changed: say so, never guess
            raise RuntimeError("the full-step prompt no longer holds its reply instruction")
        return self._content(text.replace(self._reply, _TOOL_REPLY[self.kind]), request.images)

    def stop(self) -> str:
        """Stop: the folded state as it is now is your final answer.

        Returns:
            That the episode is over.
        """
        self._play({"stop": True})
        return "Stopped: the episode is over."

    # ------------------------------------------------------------ reading (not tools)

    @property
    def design_id(self) -> str:
        """The target design's id."""
        return self._episode.design.id

    @property
    def gs(self) -> float:
        """GS of the folded state now against the target (the score of a full-step episode)."""
        return self._episode.gs

    @property
    def gs_gained(self) -> float:
        """GS now minus the blank sheet's."""
        return self._episode.gs_gained

    @property
    def done(self) -> bool:
        return self._episode.done

    @property
    def turns(self) -> int:
        return self._episode.turns

    @property
    def state_hash(self) -> str:
        from shredfold.origami_bench.env import state_hash

        return state_hash(self._episode.state)

    # ------------------------------------------------------------ playing

    def _act(self, start: Any, end: Any, assignment: Any) -> Content:
        return self._play({"start": start, "end": end, "assignment": assignment})

    def _play(self, answer: dict[str, Any]) -> Content:
        """One turn: the tool call as the answer JSON the benchmark parses and applies."""
        if not self._episode.started:
            raise EpisodeOver("the episode has not started: reset first")
        if self._episode.done:
            raise EpisodeOver(f"the episode is over ({_why(self._episode)}): no more actions")
        out = self._episode.step(json.dumps(answer))
        if out.done:
            return f"{out.feedback.text()}. The episode is over ({_why(self._episode)})."
        request = self._episode.request()
        # The task and the picture conventions were in the first turn's message; a turn
        # after it carries the rest of the benchmark's text: vertices, turn, history, feedback.
        _, folded, pattern = request.images
        return self._content(_turn_text(request), (folded, pattern))

    def _content(self, text: str, pngs: Sequence[bytes]) -> Content:
        if not self._images:
            return text
        blocks: list[dict[str, Any]] = [{"type": "image", "image": _pil(png)} for png in pngs]
        return [*blocks, {"type": "text", "text": text}]


class OrigamiFoldEnvironment(_OrigamiToolEnv):
    """OrigamiBench full-step with simple folds: one TRL rollout folds a blank square toward
    a target. Tools: ``fold`` and ``stop``.

    ``images=False`` leaves the pictures out of the observations (text-only models; the
    target is then unknown to the model). ``gs_threshold`` ends the episode once GS reaches
    it (None: only ``stop`` or the step limit does).
    """

    kind: ActionKind = "fold"

    def fold(self, start: list[float] | int, end: list[float] | int, assignment: Literal["M", "V"]) -> Content:
        """Make one simple fold: every layer left of the directed line start -> end turns over onto the right side.

        Args:
            start: the line's first point, folded-plane coordinates [x, y] or a vertex id from the list.
            end: the line's second point, [x, y] or a vertex id.
            assignment: "V" (valley) folds the layers over in front, "M" (mountain) behind.

        Returns:
            Whether the fold was valid (or why not), then the new state: vertices, pictures, turn.
        """
        return self._act(start, end, assignment)


class OrigamiCreaseEnvironment(_OrigamiToolEnv):
    """OrigamiBench full-step with creases: one TRL rollout adds creases to a blank square's
    crease pattern until it folds into the target. Tools: ``crease`` and ``stop``."""

    kind: ActionKind = "crease"

    def crease(self, start: list[float] | int, end: list[float] | int, assignment: Literal["M", "V"]) -> Content:
        """Add one crease to the crease pattern between two points of the unfolded sheet.

        Args:
            start: the crease's first point, sheet coordinates [x, y] or a vertex id from the list.
            end: the crease's second point, [x, y] or a vertex id.
            assignment: "M" (mountain) or "V" (valley).

        Returns:
            Whether the crease was valid (or why not), then the new pattern: vertices, pictures, turn.
        """
        return self._act(start, end, assignment)


# ---------------------------------------------------------------- rewards


def gs_reward(environments: Sequence[_OrigamiToolEnv] | None = None, **kwargs: Any) -> list[float]:
    """Reward each rollout with its GS: the folded state it ended on against its target, as
    the benchmark scores a full-step episode. For ``GRPOTrainer(reward_funcs=[gs_reward])``,
    which passes ``environments=`` (and prompts, completions, … that this ignores)."""
    return [env.gs for env in _rollouts(environments, "gs_reward")]


def gs_gain_reward(environments: Sequence[_OrigamiToolEnv] | None = None, **kwargs: Any) -> list[float]:
    """Reward each rollout with the GS it gained over the blank sheet (the blank square
    already overlaps most targets, so raw GS starts well above 0)."""
    return [env.gs_gained for env in _rollouts(environments, "gs_gain_reward")]


def _rollouts(environments: Sequence[_OrigamiToolEnv] | None, name: str) -> Sequence[_OrigamiToolEnv]:
    if environments is None:
        raise ValueError(f"{name} reads the rollouts' environments: train with environment_factory=")
    for env in environments:
        if not isinstance(env, _OrigamiToolEnv):
            raise TypeError(f"{name}: an environment is a {type(env).__name__}, not an origami environment")
    return environments


# ---------------------------------------------------------------- text and pictures


def _user_text(request: Request) -> str:
    return next(m.text for m in request.messages if m.role == "user")


def _turn_text(request: Request) -> str:
    """A later turn's user text without its first two paragraphs (the task, the view)."""
    rest = _user_text(request).split("\n", 2)[-1]
    if not rest.startswith("Vertices"):  # the benchmark's layout changed: say so, never guess
        raise RuntimeError("the full-step prompt no longer starts a turn's state with its vertices")
    return rest


def _why(episode: FoldEpisode) -> str:
    out = episode.outcome
    assert out is not None
    if out.stopped:
        return "stopped"
    if out.reached:
        return "the model matches the target"
    return f"the step limit of {episode.cfg.step_limit} turns is reached"


def _pil(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")
