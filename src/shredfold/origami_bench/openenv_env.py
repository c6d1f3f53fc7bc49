"""OrigamiBench full-step as an OpenEnv environment: typed models, the environment, a client.

OpenEnv (``openenv-core``) serves an environment over HTTP and a WebSocket: a typed
:class:`OrigamiAction` in, a typed :class:`OrigamiObservation` (with ``reward`` and ``done``)
out, and :class:`OrigamiState` for ``state``. Its ``EnvClient`` keeps one session per
WebSocket at ``/ws``, which :class:`OrigamiEnvClient` speaks; :mod:`.serve_env` adds
``/reset``, ``/step`` and ``/state`` over plain HTTP, one episode per ``episode_id``.

An episode is the benchmark's, played by :class:`~shredfold.origami_bench.episode.FoldEpisode`:
a typed action becomes the answer JSON the benchmark parses and applies (an ``answer`` is a
model's raw text, taken as it is), the observation is the turn's request (its text and its
three PNGs, base64), and GS is the score's function. The same actions give the same final
GS here, in the Gymnasium and TRL environments and in a benchmark episode.
"""

from __future__ import annotations

import base64
import json
import math
import uuid
from typing import Annotated, Any, Literal

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from shredfold.origami_bench.env import EnvConfig, vertex_list
from shredfold.origami_bench.episode import (
    DEFAULT_TARGET,
    MAX_PROCEDURAL_INDEX,
    FoldEpisode,
    Outcome,
)
from shredfold.origami_bench.prompts import MAX_VERTICES_SHOWN, ActionKind

ENV_NAME = "shredfold-origami"
MAX_ANSWER_CHARS = 16_384  # a model's answer with some prose around its JSON
MAX_ID_CHARS = 255  # OpenEnv's own bound on an episode id



def _point(v: Any) -> list[float] | int:
    """[x, y] (two finite numbers) or a vertex id: one message for every other value, where
    a union's validation would list each member's complaint."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    if (
        isinstance(v, (list, tuple))
        and len(v) == 2
        and all(isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in v)
    ):
        return [v[0], v[1]]
    raise PydanticCustomError("point", "a point is [x, y], two finite numbers, or a vertex id (an integer from 0)")


Point = Annotated[
    list[float] | int,
    PlainValidator(_point),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                {"type": "integer", "minimum": 0},
            ]
        }
    ),
]


class OrigamiAction(Action):
    """One turn, in exactly one of three forms: a fold (or crease, by the episode's kind)
    ``start``, ``end``, ``assignment``; ``stop: true``; or ``answer``, a model's raw answer
    text, parsed as the benchmark parses it (prose and code fences around the JSON are fine;
    an unparsable answer is a rejected turn, not an error)."""

    start: Point | None = Field(None, description="[x, y] or a vertex id of the turn's list")
    end: Point | None = Field(None, description="[x, y] or a vertex id of the turn's list")
    assignment: Literal["M", "V"] | None = Field(None, description="M mountain, V valley")
    stop: StrictBool = Field(False, description="true: the folded state now is the final answer")
    answer: str | None = Field(None, max_length=MAX_ANSWER_CHARS, description="a model's raw answer text")

    @model_validator(mode="after")
    def _one_form(self) -> OrigamiAction:
        parts = [self.start, self.end, self.assignment]
        given = sum([any(p is not None for p in parts), self.stop, self.answer is not None])
        if given != 1:
            raise PydanticCustomError(
                "action_form", "an action is one of: start, end and assignment; stop: true; answer: text"
            )
        if any(p is None for p in parts) and any(p is not None for p in parts):
            raise PydanticCustomError("action_form", "a fold needs all of start, end and assignment")
        return self

    def answer_text(self) -> str:
        """The answer a model would have written for this action."""
        if self.answer is not None:
            return self.answer
        if self.stop:
            return json.dumps({"stop": True})
        return json.dumps({"start": self.start, "end": self.end, "assignment": self.assignment})


class OrigamiObservation(Observation):
    """A turn as the benchmark shows it to a model, with what the last action did.

    ``reward`` is the GS gained by the last action (``gs`` with a server started with
    ``--reward gs``); ``done`` once the episode stopped, reached the GS threshold or used
    its turns (``terminated`` and ``truncated`` tell which).
    """

    episode_id: str
    design: str = Field(description="the target design's id")
    turn: int = Field(description="turns taken")
    prompt: str = Field(description="the turn's request text, history included (system + user)")
    target_png: str = Field(description="base64 PNG: the target folded state")
    folded_png: str = Field(description="base64 PNG: the current folded state")
    pattern_png: str = Field(description="base64 PNG: the current crease pattern")
    vertices: list[tuple[float, float]] = Field(description=f"the vertices the turn lists (first {MAX_VERTICES_SHOWN})")
    gs: float = Field(description="GS of the folded state now against the target")
    valid: bool | None = Field(None, description="whether the last action was accepted (None after reset)")
    reason: str = Field("", description="why it was not ('' when valid; 'stop' for a stop)")
    feedback: str = Field("", description="'valid' or 'rejected (reason): detail', as the model is told")
    action: dict[str, Any] | None = Field(None, description="the last action as the benchmark records it")
    effective: bool = Field(False, description="the last action changed the folded outline")
    state_hash: str
    terminated: bool = False
    truncated: bool = False

    def image(self, name: Literal["target", "folded", "pattern"]) -> bytes:
        """One of the turn's pictures as PNG bytes."""
        return base64.b64decode({"target": self.target_png, "folded": self.folded_png, "pattern": self.pattern_png}[name])


class OrigamiState(State):
    """The episode as the server holds it (``episode_id`` and ``step_count`` from OpenEnv)."""

    design: str | None = None
    kind: ActionKind = "fold"
    step_limit: int = EnvConfig.step_limit
    image_size: int = EnvConfig.image_size
    gs: float | None = None
    blank_gs: float | None = None
    done: bool = False
    state_hash: str | None = None
    actions: list[dict[str, Any] | None] = Field(default_factory=list, description="each turn's recorded action")


class ResetOptions(BaseModel):
    """What a reset may change; a field left out keeps the server's default."""

    model_config = ConfigDict(extra="forbid")

    target: Annotated[str, Field(max_length=MAX_ID_CHARS)] | Annotated[StrictInt, Field(ge=0, le=MAX_PROCEDURAL_INDEX)] = DEFAULT_TARGET
    kind: ActionKind = "fold"
    step_limit: Annotated[StrictInt, Field(ge=1, le=200)] = EnvConfig.step_limit
    image_size: Annotated[StrictInt, Field(ge=64, le=2048)] = EnvConfig.image_size
    gs_threshold: Annotated[float, Field(ge=0, le=1)] | None = 0.99

    def with_defaults(self, defaults: ResetOptions) -> ResetOptions:
        return defaults.model_copy(update={k: getattr(self, k) for k in self.model_fields_set})


class BadReset(ValueError):
    """Reset options a client got wrong (one line naming the option)."""


def parse_reset(options: dict[str, Any], defaults: ResetOptions) -> ResetOptions:
    try:
        return ResetOptions.model_validate(options).with_defaults(defaults)
    except ValidationError as exc:
        raise BadReset(one_line(exc, "reset")) from None


def one_line(exc: ValidationError, where: str) -> str:
    """A validation error as one line: ``where.field: what is wrong`` (the first error)."""
    first = exc.errors(include_url=False, include_context=False)[0]
    path = ".".join([where, *(str(p) for p in first["loc"])])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{path}: {first['msg']}{more}"


class OrigamiEnvironment(Environment[OrigamiAction, OrigamiObservation, OrigamiState]):
    """One episode at a time (OpenEnv makes one per WebSocket session)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # instances share nothing mutable

    def __init__(self, defaults: ResetOptions | None = None, reward: Literal["gs_delta", "gs"] = "gs_delta") -> None:
        super().__init__()
        self.defaults = defaults or ResetOptions()
        self.reward = reward
        self._episode: FoldEpisode | None = None
        self._options: ResetOptions | None = None
        self._id: str | None = None

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> OrigamiObservation:
        """A blank sheet. ``options``: :class:`ResetOptions` (target, kind, step_limit,
        image_size, gs_threshold). Nothing is random: ``seed`` is accepted and unused."""
        chosen = parse_reset(options, self.defaults)
        if episode_id is not None and (not isinstance(episode_id, str) or not 0 < len(episode_id) <= MAX_ID_CHARS):
            raise BadReset(f"reset: episode_id is a string of 1 to {MAX_ID_CHARS} characters")
        if self._episode is None or chosen != self._options:  # solving a target is engine work
            try:
                self._episode = FoldEpisode(
                    chosen.target,
                    kind=chosen.kind,
                    step_limit=chosen.step_limit,
                    image_size=chosen.image_size,
                    gs_threshold=chosen.gs_threshold,
                )
            except ValueError as exc:  # an unknown design, a bad procedural id
                raise BadReset(f"reset: {exc}") from None
            self._options = chosen
        self._id = episode_id or uuid.uuid4().hex
        self._episode.reset()
        return self._observe(None)

    def step(self, action: OrigamiAction, timeout_s: float | None = None, **kwargs: Any) -> OrigamiObservation:
        episode = self.episode
        out = episode.step(action.answer_text())  # EpisodeOver once it has ended
        return self._observe(out)

    @property
    def episode(self) -> FoldEpisode:
        from shredfold.origami_bench.episode import EpisodeOver

        if self._episode is None or not self._episode.started:
            raise EpisodeOver("the episode has not started: reset first")
        return self._episode

    @property
    def episode_id(self) -> str | None:
        return self._id

    @property
    def state(self) -> OrigamiState:
        if self._episode is None or not self._episode.started:
            return OrigamiState()
        e = self._episode
        return OrigamiState(
            episode_id=self._id,
            step_count=e.turns,
            design=e.design.id,
            kind=e.cfg.kind,
            step_limit=e.cfg.step_limit,
            image_size=e.cfg.image_size,
            gs=e.gs,
            blank_gs=e.blank_gs,
            done=e.done,
            state_hash=self.episode_state_hash(),
            actions=[h.action for h in e.history] + ([{"stop": True}] if e.outcome and e.outcome.stopped else []),
        )

    def episode_state_hash(self) -> str:
        from shredfold.origami_bench.env import state_hash

        return state_hash(self.episode.state)

    def get_metadata(self) -> EnvironmentMetadata:
        from shredfold import __version__
        from shredfold.origami import ENGINE_VERSION

        return EnvironmentMetadata(
            name=ENV_NAME,
            description="OrigamiBench full-step: fold a blank square toward a target, one action a turn; "
            "GS (the benchmark's shape score) after each.",
            version=f"shredfold {__version__}, engine {ENGINE_VERSION}",
            author="shredfold",
        )

    def _observe(self, out: Outcome | None) -> OrigamiObservation:
        e = self.episode
        request = e.request()
        target, folded, pattern = (base64.b64encode(png).decode("ascii") for png in request.images)
        if out is None:
            reward = None
        else:
            reward = round(out.gs - out.gs_before, 6) if self.reward == "gs_delta" else out.gs
        assert self._id is not None
        return OrigamiObservation(
            episode_id=self._id,
            design=e.design.id,
            turn=e.turns,
            prompt=request.text,
            target_png=target,
            folded_png=folded,
            pattern_png=pattern,
            vertices=vertex_list(e.state, e.cfg.kind)[:MAX_VERTICES_SHOWN],
            gs=e.gs,
            valid=None if out is None else out.feedback.valid,
            reason="" if out is None else out.feedback.reason,
            feedback="" if out is None else out.feedback.text(),
            action=None if out is None else out.action,
            effective=False if out is None else out.effective,
            state_hash=out.state_hash if out is not None else self.episode_state_hash(),
            terminated=out is not None and out.terminated,
            truncated=out is not None and out.truncated,
            done=out is not None and out.done,
            reward=reward,
        )


class OrigamiEnvClient(EnvClient[OrigamiAction, OrigamiObservation, OrigamiState]):
    """OpenEnv's WebSocket client for ``shredfold serve-env``: ``reset(**options)``,
    ``step(OrigamiAction(...))``, ``state()``; one server-side episode per connection.

    >>> with OrigamiEnvClient(base_url="http://127.0.0.1:8001") as env:
    ...     result = env.reset(target="book-fold")
    ...     result = env.step(OrigamiAction(start=[0.5, 0], end=[0.5, 1], assignment="V"))
    ...     print(result.reward, result.observation.gs, result.done)
    """

    def _step_payload(self, action: OrigamiAction) -> dict[str, Any]:
        return action.model_dump(exclude_none=True, exclude_defaults=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[OrigamiObservation]:
        reward, done = payload.get("reward"), bool(payload.get("done", False))
        observation = OrigamiObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: dict[str, Any]) -> OrigamiState:
        return OrigamiState(**payload)
