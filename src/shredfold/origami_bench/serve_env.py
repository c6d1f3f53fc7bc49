"""``shredfold serve-env``: the origami environment as an OpenEnv server, on loopback.

OpenEnv's own server helper (``HTTPEnvServer``) gives the WebSocket at ``/ws``, where
OpenEnv's ``EnvClient`` (:class:`~shredfold.origami_bench.openenv_env.OrigamiEnvClient`) keeps
one episode per connection, and ``/health`` and ``/metadata``. Its HTTP ``/reset`` and
``/step`` make a fresh environment for every request (stateless by design), which cannot
play an episode; they are replaced here by ones that keep episodes by ``episode_id`` (an
extra field OpenEnv's request models allow; without one, the ``"default"`` episode, as
OpenEnv's first HTTP servers kept one environment), with ``/state?episode_id=…`` and a
``/schema`` that names this environment's state model. The wire format is OpenEnv's:
``{"observation": {...}, "reward": r, "done": d}``.

Bounded: request bodies (and WebSocket messages) to ``max_body_bytes``; the HTTP episodes to
``max_episodes`` (the least recently used goes first); WebSocket sessions to
``max_sessions``; open connections to ``max_connections``. Every error is JSON
``{"detail": "one line"}`` with a 4xx status naming the cause (5xx only for a fault of the
server's own, logged here, never a traceback on the wire).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import (
    ResetRequest,
    ResetResponse,
    SchemaResponse,
    StepRequest,
    StepResponse,
)
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from shredfold.origami_bench.episode import EpisodeOver
from shredfold.origami_bench.openenv_env import (
    MAX_ID_CHARS,
    BadReset,
    OrigamiAction,
    OrigamiEnvironment,
    OrigamiObservation,
    OrigamiState,
    ResetOptions,
    one_line,
)

log = logging.getLogger(__name__)

DEFAULT_PORT = 8001
DEFAULT_EPISODE = "default"
MAX_BODY_BYTES = 64 * 1024  # an action is a few hundred bytes; an answer text at most 16 KiB
MAX_EPISODES = 32
MAX_SESSIONS = 4
MAX_CONNECTIONS = 64
_REPLACED = {"/reset", "/step", "/state", "/schema"}


@dataclass(frozen=True)
class ServeEnvConfig:
    defaults: ResetOptions = field(default_factory=ResetOptions)
    reward: Literal["gs_delta", "gs"] = "gs_delta"
    max_episodes: int = MAX_EPISODES
    max_sessions: int = MAX_SESSIONS
    max_body_bytes: int = MAX_BODY_BYTES
    max_connections: int = MAX_CONNECTIONS


class ServeEnvError(Exception):
    """The server could not start (one line naming why)."""


class _ApiError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


# ---------------------------------------------------------------- the HTTP episodes


class EpisodeTable:
    """The HTTP episodes by id, at most ``limit`` (the least recently used goes first); one
    request at a time per episode."""

    def __init__(self, limit: int, make: Any) -> None:
        self.limit = limit
        self._make = make
        self._lock = threading.Lock()
        self._episodes: OrderedDict[str, tuple[OrigamiEnvironment, threading.Lock]] = OrderedDict()

    def reset(self, episode_id: str, seed: int | None, options: dict[str, Any]) -> OrigamiObservation:
        with self._lock:
            held = self._episodes.get(episode_id)
            if held is None:  # a fresh environment; reusing none keeps ids from sharing one
                held = (self._make(), threading.Lock())
        env, lock = held
        with lock:
            obs = env.reset(seed=seed, episode_id=episode_id, **options)  # BadReset: keeps nothing
        with self._lock:
            self._episodes[episode_id] = held
            self._episodes.move_to_end(episode_id)
            while len(self._episodes) > self.limit:
                gone, _ = self._episodes.popitem(last=False)
                log.info("episode %s dropped (over %d episodes)", gone, self.limit)
        return obs

    def step(self, episode_id: str, action: OrigamiAction) -> OrigamiObservation:
        env, lock = self._get(episode_id)
        with lock:
            return env.step(action)

    def state(self, episode_id: str) -> OrigamiState:
        env, lock = self._get(episode_id)
        with lock:
            return env.state

    def __len__(self) -> int:
        return len(self._episodes)

    def _get(self, episode_id: str) -> tuple[OrigamiEnvironment, threading.Lock]:
        with self._lock:
            held = self._episodes.get(episode_id)
            if held is None:
                raise _ApiError(
                    404,
                    f"episode {episode_id!r} not found: POST /reset starts it (the server keeps "
                    f"the {self.limit} most recently used)",
                )
            self._episodes.move_to_end(episode_id)
            return held


# ---------------------------------------------------------------- the app


def create_app(cfg: ServeEnvConfig | None = None) -> FastAPI:
    """The server's ASGI app (run it with :func:`serve` or any ASGI server)."""
    from shredfold import __version__

    cfg = cfg or ServeEnvConfig()
    make = partial(OrigamiEnvironment, cfg.defaults, cfg.reward)
    app = _App(
        title="shredfold origami environment (OpenEnv)",
        version=__version__,
        description=__doc__,
        max_body_size=cfg.max_body_bytes,  # Starlette answers 413 past it, as the body streams in
    )
    HTTPEnvServer(make, OrigamiAction, OrigamiObservation, max_concurrent_envs=cfg.max_sessions).register_routes(app)
    # OpenEnv's stateless HTTP reset/step/state give way to the episode table's.
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) not in _REPLACED]
    table = EpisodeTable(cfg.max_episodes, make)
    app.state.episodes = table

    @app.post("/reset", response_model=ResetResponse, tags=["Environment Control"])
    def reset(request: Annotated[ResetRequest | None, Body()] = None) -> ResetResponse:
        """Start (or restart) an episode: ``episode_id`` (default ``"default"``) and the
        reset options (target, kind, step_limit, image_size, gs_threshold)."""
        request = request or ResetRequest()
        obs = table.reset(request.episode_id or DEFAULT_EPISODE, request.seed, dict(request.model_extra or {}))
        return ResetResponse(**serialize_observation(obs))

    @app.post("/step", response_model=StepResponse, tags=["Environment Control"])
    def step(request: StepRequest) -> StepResponse:
        """Play one turn of an episode: ``{"action": {...}, "episode_id": ...}``."""
        extra = dict(request.model_extra or {})
        episode_id = extra.pop("episode_id", DEFAULT_EPISODE)
        if extra:
            raise _ApiError(422, f"step: unknown field {sorted(extra)[0]!r} (action, episode_id, timeout_s, request_id)")
        if not isinstance(episode_id, str) or not 0 < len(episode_id) <= MAX_ID_CHARS:
            raise _ApiError(422, f"step: episode_id is a string of 1 to {MAX_ID_CHARS} characters")
        try:
            action = OrigamiAction.model_validate(request.action)
        except ValidationError as exc:
            raise _ApiError(422, one_line(exc, "step: action")) from None
        return StepResponse(**serialize_observation(table.step(episode_id, action)))

    @app.get("/state", response_model=OrigamiState, tags=["State Management"])
    def state(
        episode_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)] = DEFAULT_EPISODE,
    ) -> OrigamiState:
        """An episode's state: design, turns, GS, the actions so far."""
        return table.state(episode_id)

    @app.get("/schema", response_model=SchemaResponse, tags=["Schema"])
    def schema() -> SchemaResponse:
        return SchemaResponse(
            action=OrigamiAction.model_json_schema(),
            observation=OrigamiObservation.model_json_schema(),
            state=OrigamiState.model_json_schema(),
        )

    _errors_as_json(app)
    return app


def _errors_as_json(app: FastAPI) -> None:
    def detail(status: int, text: str) -> JSONResponse:
        return JSONResponse({"detail": text}, status_code=status)

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, _ApiError)
        return detail(exc.status, exc.detail)

    async def bad_reset(request: Request, exc: Exception) -> JSONResponse:
        return detail(400, str(exc))

    async def episode_over(request: Request, exc: Exception) -> JSONResponse:
        return detail(409, str(exc))

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            return detail(422, f"the body is not JSON ({first.get('ctx', {}).get('error', 'decode error')})")
        where = ".".join(str(p) for p in first.get("loc", ())) or "the request"
        return detail(422, f"{where}: {first.get('msg', 'invalid')}")

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        text = exc.detail if isinstance(exc.detail, str) else "invalid request"
        return detail(exc.status_code, text)

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return detail(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    app.add_exception_handler(_ApiError, api_error)
    app.add_exception_handler(BadReset, bad_reset)
    app.add_exception_handler(EpisodeOver, episode_over)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, internal)


class _App(FastAPI):
    def build_middleware_stack(self) -> ASGIApp:
        # Outside FastAPI's own stack, whose body limit comes before any user middleware.
        return _DeclaredBodyLimit(super().build_middleware_stack(), self.max_body_size)


class _DeclaredBodyLimit:
    """A body whose Content-Length is over the limit gets a JSON 413 before it is read
    (FastAPI's limit, which also counts a body sent in chunks, answers this one in plain
    text)."""

    def __init__(self, app: ASGIApp, limit: int | None) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.limit is not None:
            length = dict(scope.get("headers", ())).get(b"content-length", b"0")
            if not length.isdigit() or int(length) > self.limit:
                too_large = {"detail": f"request body over {self.limit} bytes"}
                await JSONResponse(too_large, status_code=413)(scope, receive, send)
                return
        await self.app(scope, receive, send)


# ---------------------------------------------------------------- running it


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or :class:`ServeEnvError` naming why not (a port in use, say)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ServeEnvError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        why = "the port is in use" if exc.errno == 98 else (exc.strerror or str(exc))
        raise ServeEnvError(f"cannot listen on {host}:{port}: {why}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def server(cfg: ServeEnvConfig) -> Any:
    """A uvicorn server for the app, its limits set (``.run(sockets=[bind(...)])``)."""
    import uvicorn

    config = uvicorn.Config(
        create_app(cfg),
        log_level="warning",
        ws_max_size=cfg.max_body_bytes,
        limit_concurrency=cfg.max_connections,
        timeout_keep_alive=30,
    )
    return uvicorn.Server(config)


@contextlib.contextmanager
def serve_in_thread(cfg: ServeEnvConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve in a background thread for the ``with`` block; yields the base URL."""
    sock = bind(host, port)
    srv = server(cfg or ServeEnvConfig())
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True, name="serve-env")
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not srv.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise ServeEnvError("the server did not start")
            time.sleep(0.02)
        yield url_of(sock)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)
        sock.close()
