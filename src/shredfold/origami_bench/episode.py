"""One OrigamiBench full-step episode, turn by turn: the core every RL front end plays.

The Gymnasium environment (:mod:`~shredfold.origami_bench.gym_env`), the TRL environment
(:mod:`~shredfold.origami_bench.trl_env`) and the OpenEnv server
(:mod:`~shredfold.origami_bench.openenv_env`) all step a :class:`FoldEpisode`, which plays the
benchmark's own functions: each turn's observation is the very request a model would get
(:func:`~shredfold.origami_bench.env.turn_request`), an action is a model's answer text that
:func:`~shredfold.origami_bench.env.step` parses and applies, and GS is the score's function
(:func:`~shredfold.origami_bench.env.gs`) against the target the build stage would store. So
the same answers end on the same state and the same GS in a benchmark episode and in every
front end.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

from shredfold.calls import Request
from shredfold.origami import FoldState, square_sheet
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.env import (
    EnvConfig,
    Feedback,
    gs,
    outline_changed,
    recorded_action,
    render_folded,
    silhouette,
    state_hash,
    step,
    turn_request,
)
from shredfold.origami_bench.prompts import ActionKind, HistoryEntry, Stop
from shredfold.spec import DesignSources

DEFAULT_TARGET = "builtin/blintz-half"
MAX_PROCEDURAL_INDEX = 10_000
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
        if not 0 <= target <= MAX_PROCEDURAL_INDEX:
            raise ValueError(f"target {target}: a procedural index is 0 to {MAX_PROCEDURAL_INDEX}")
        return _procedural(target, seed)
    builtin = {d.id: d for d in builtin_cached()}
    name = target if target.startswith("builtin/") else f"builtin/{target}"
    if name not in builtin:
        raise ValueError(f"target {target!r}: no such built-in design (one of {sorted(builtin)})")
    return builtin[name]


@lru_cache(maxsize=256)
def _procedural(index: int, seed: int) -> Design:
    """Memoised: making a procedural design replays a random search with the engine. Bounded,
    because a served environment takes the index from its clients."""
    from shredfold.origami_bench.designs import procedural_design

    return procedural_design(index, DesignSources(), seed)


def check_config(kind: str, step_limit: int, image_size: int) -> EnvConfig:
    """The episode settings a spec allows, or ValueError naming the one that is not."""
    if kind not in ("fold", "crease"):
        raise ValueError(f"kind: 'fold' or 'crease', not {kind!r}")
    for name, value, lo, hi in (("step_limit", step_limit, 1, 200), ("image_size", image_size, 64, 2048)):
        if isinstance(value, bool) or not isinstance(value, Integral) or not lo <= value <= hi:
            raise ValueError(f"{name} is an integer from {lo} to {hi}, as in a spec; got {value!r}")
    return EnvConfig(kind=kind, step_limit=int(step_limit), image_size=int(image_size))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Outcome:
    """What one turn did."""

    gs: float  # GS after the turn (unchanged by a rejected answer)
    gs_before: float
    feedback: Feedback  # "valid", "stop", or the parse/engine reason
    action: dict[str, object] | None  # the action as the benchmark records it; None: unparsable
    stopped: bool  # the answer was {"stop": true}
    effective: bool  # accepted and changed the folded outline
    state_hash: str
    reached: bool  # GS reached the episode's threshold
    truncated: bool  # the step limit ended the episode

    @property
    def terminated(self) -> bool:
        return self.stopped or self.reached

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class EpisodeOver(RuntimeError):
    """A turn was played on an episode that has not started or has ended."""


class FoldEpisode:
    """Fold a blank square toward a target, one answer per turn, as the benchmark does.

    ``gs_threshold`` ends the episode once GS reaches it (None: only a stop or the step
    limit ends it; the benchmark itself has no threshold). Invalid answers leave the state
    and count as turns, as in the benchmark.
    """

    def __init__(
        self,
        target: TargetLike = DEFAULT_TARGET,
        *,
        kind: ActionKind = "fold",
        step_limit: int = EnvConfig.step_limit,
        image_size: int = EnvConfig.image_size,
        gs_threshold: float | None = 0.99,
        procedural_seed: int = 0,
    ) -> None:
        self.cfg = check_config(kind, step_limit, image_size)
        self.gs_threshold = gs_threshold
        self.procedural_seed = procedural_seed
        self._state: FoldState | None = None
        self.set_target(target)

    def set_target(self, target: TargetLike) -> None:
        """Fold toward another design from the next :meth:`reset` on."""
        from shredfold.origami_bench.targets import target_state

        self.design = resolve_target(target, self.procedural_seed)
        state = target_state(self.design)  # what solve_target stores for the benchmark
        self.target_png = render_folded(state, self.cfg.image_size)
        self._target_mask = silhouette(state, self.cfg.image_size)
        self._state = None  # an episode in progress was toward the old target

    # ------------------------------------------------------------ the loop

    def reset(self) -> None:
        """A blank sheet, turn 0."""
        self._state = square_sheet()
        self.history: list[HistoryEntry] = []
        self.turns = 0
        self.outcome: Outcome | None = None
        self.gs = self.blank_gs = self._score(self._state)

    def step(self, answer: str) -> Outcome:
        """Play one turn: ``answer`` is a model's raw answer text."""
        if self._state is None:
            raise EpisodeOver("the episode has not started: reset first")
        if self.done:
            raise EpisodeOver("the episode is over: reset to start another")
        before = self._state
        new, fb, parsed = step(before, answer, self.cfg.kind)
        self.turns += 1
        self._state = new
        gs_before = self.gs
        if new is not before:  # a rejected answer leaves the state, and so its GS
            self.gs = self._score(new)
        stopped = isinstance(parsed, Stop)
        if not stopped:
            self.history.append(HistoryEntry(recorded_action(parsed), fb.text()))
        reached = self.gs_threshold is not None and self.gs >= self.gs_threshold
        self.outcome = Outcome(
            gs=self.gs,
            gs_before=gs_before,
            feedback=fb,
            action=recorded_action(parsed),
            stopped=stopped,
            effective=fb.valid and not stopped and outline_changed(before, new),
            state_hash=state_hash(new),
            reached=reached,
            truncated=not (stopped or reached) and self.turns >= self.cfg.step_limit,
        )
        return self.outcome

    def request(self) -> Request:
        """The request a model gets on the current turn (text with history, three images)."""
        return turn_request(self.state, self.target_png, self.cfg, self.history, self.design.key)

    # ------------------------------------------------------------ reading

    @property
    def started(self) -> bool:
        return self._state is not None

    @property
    def done(self) -> bool:
        return self.outcome is not None and self.outcome.done

    @property
    def state(self) -> FoldState:
        if self._state is None:
            raise EpisodeOver("the episode has not started: reset first")
        return self._state

    @property
    def gs_gained(self) -> float:
        """GS now minus the blank sheet's: what an episode's ``gs_delta`` rewards add up to
        (rounded as GS is, to 6 decimals)."""
        return round(self.gs - self.blank_gs, 6)

    def _score(self, state: FoldState) -> float:
        return gs(silhouette(state, self.cfg.image_size), self._target_mask)

