"""`shredfold serve-env`: the origami environment as an OpenEnv server, driven on loopback over
real HTTP (httpx) and OpenEnv's own WebSocket client."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest
from websockets.sync.client import connect as ws_connect

from shredfold import cli
from shredfold.origami_bench.episode import FoldEpisode, resolve_target
from shredfold.origami_bench.gym_env import OrigamiFoldEnv, decode_png
from shredfold.origami_bench.openenv_env import (
    OrigamiAction,
    OrigamiEnvClient,
    OrigamiObservation,
    OrigamiState,
    ResetOptions,
)
from shredfold.origami_bench.serve_env import ServeEnvConfig, serve_in_thread

SIZE = 64
BOOK = {"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}
QUARTER = {"start": [0.5, 0.5], "end": [1, 0.5], "assignment": "M"}
CFG = ServeEnvConfig(defaults=ResetOptions(target="quarter-square", image_size=SIZE), max_episodes=3,
                     max_sessions=1, max_body_bytes=4096)  # fmt: skip


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_in_thread(CFG) as base:
        yield base


@pytest.fixture
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=60) as client:
        yield client


def the_benchmarks_answers() -> tuple[Any, list[dict[str, Any]]]:
    design = resolve_target(1)
    steps = [s.as_action() for s in design.steps()]
    second = {**steps[1], "start": steps[1]["end"], "end": steps[1]["start"]}  # the other side over
    actions = [steps[0], {"answer": "I would fold it in half."}, {"start": [7, 7], "end": [8, 9], "assignment": "V"},
               {"answer": f"```json\n{json.dumps(second)}\n```"}]  # fmt: skip
    return design, actions


def gym_final(design: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
    env = OrigamiFoldEnv(design, step_limit=len(actions), image_size=SIZE, gs_threshold=None)
    env.reset(seed=0)
    for a in actions:
        *_, info = env.step(a.get("answer") or json.dumps(a))
    return info


def test_http_plays_an_episode_to_the_same_gs_as_the_gymnasium_env(http: httpx.Client) -> None:
    design, actions = the_benchmarks_answers()
    options = {"target": design.id, "step_limit": len(actions), "gs_threshold": None}
    r = http.post("/reset", json={"episode_id": "ep-1", "seed": 3, **options})
    assert r.status_code == 200 and set(r.json()) == {"observation", "reward", "done"}
    first = OrigamiObservation(**r.json()["observation"])  # the typed model reads the wire
    assert first.episode_id == "ep-1" and first.turn == 0 and first.valid is None and not r.json()["done"]
    bench = FoldEpisode(design, image_size=SIZE, step_limit=len(actions))
    bench.reset()
    request = bench.request()
    assert first.prompt == request.text  # the benchmark's request, its pictures too
    assert [first.image(k) for k in ("target", "folded", "pattern")] == request.images
    assert first.vertices == [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]

    rewards = []
    for a in actions:
        r = http.post("/step", json={"action": a, "episode_id": "ep-1"})
        assert r.status_code == 200, r.text
        rewards.append(r.json()["reward"])
    body = r.json()
    last = OrigamiObservation(**body["observation"])
    info = gym_final(design, actions)
    assert last.gs == info["gs"] and last.state_hash == info["state_hash"] and 0 < last.gs < 1
    assert body["done"] and last.truncated and not last.terminated
    assert sum(rewards) == pytest.approx(last.gs - bench.blank_gs, abs=1e-6)
    assert "Your earlier turns:" in last.prompt and last.feedback == "valid"

    state = OrigamiState(**http.get("/state", params={"episode_id": "ep-1"}).json())
    assert (state.step_count, state.design, state.gs, state.done) == (4, design.id, last.gs, True)
    assert state.actions[0] == actions[0] and state.actions[1] is None  # the prose did not parse


def test_without_an_episode_id_http_plays_the_default_episode(http: httpx.Client) -> None:
    assert http.post("/reset").json()["observation"]["episode_id"] == "default"  # no body at all
    http.post("/step", json={"action": BOOK})
    r = http.post("/step", json={"action": QUARTER, "timeout_s": 5, "request_id": "r1"})
    assert r.json()["done"] and r.json()["observation"]["gs"] == 1.0  # the server's default target
    assert http.get("/state").json()["step_count"] == 2


def test_openenvs_own_client_plays_over_the_websocket(url: str) -> None:
    design, actions = the_benchmarks_answers()
    with OrigamiEnvClient(base_url=url) as env:
        result = env.reset(target=design.id, step_limit=len(actions), gs_threshold=None)
        assert isinstance(result.observation, OrigamiObservation) and result.reward is None
        for a in actions:
            result = env.step(OrigamiAction(**a))
        assert result.done and result.observation.gs == gym_final(design, actions)["gs"]
        state = env.state()
        assert isinstance(state, OrigamiState) and state.step_count == 4 and state.design == design.id
        with pytest.raises(RuntimeError, match="the episode is over: reset to start another"):
            env.step(OrigamiAction(stop=True))
        result = env.reset()  # the same session, a new episode on the server's default target
        assert result.observation.design == "builtin/quarter-square" and result.observation.turn == 0
        folded = decode_png(result.observation.image("folded"))
        assert folded.shape == (SIZE, SIZE, 3) and not np.array_equal(folded, decode_png(result.observation.image("target")))
        with pytest.raises(RuntimeError, match=r"reset: target: .*|no such built-in design"):
            env.reset(target="swan")


def test_websocket_sessions_are_bounded(url: str) -> None:
    with OrigamiEnvClient(base_url=url) as first:
        first.reset()
        # The server refuses the second session as it connects, then closes: read the refusal
        # itself (a client that sends first may find the socket already closed).
        with ws_connect(url.replace("http://", "ws://") + "/ws", open_timeout=10) as second:
            refusal = json.loads(second.recv(timeout=10))
        assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED"
        assert first.step(OrigamiAction(**BOOK)).observation.valid  # the first session is unharmed


def test_http_episodes_are_bounded_least_recently_used_first(http: httpx.Client) -> None:
    for name in ("a", "b", "c", "d"):  # the server keeps 3
        assert http.post("/reset", json={"episode_id": name}).status_code == 200
        if name == "b":
            http.get("/state", params={"episode_id": "a"})  # a used again: b is older now
    r = http.get("/state", params={"episode_id": "b"})
    assert r.status_code == 404 and "episode 'b' not found" in r.json()["detail"]
    assert all(http.get("/state", params={"episode_id": n}).status_code == 200 for n in ("a", "c", "d"))


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "detail"),
    [
        ("post", "/step", {"action": {"start": [0.5, 0]}}, 422, "step: action: a fold needs all of start, end and assignment"),
        ("post", "/step", {"action": {}}, 422, "an action is one of"),
        ("post", "/step", {"action": {"stop": True, "answer": "x"}}, 422, "an action is one of"),
        ("post", "/step", {"action": {**BOOK, "end": [1, True]}}, 422, "step: action.end: a point is [x, y]"),
        ("post", "/step", {"action": {**BOOK, "assignment": "W"}}, 422, "step: action.assignment:"),
        ("post", "/step", {"action": {"stop": True}, "colour": 1}, 422, "step: unknown field 'colour'"),
        ("post", "/step", {"nothing": 1}, 422, "body.action: Field required"),
        ("post", "/step", b"{not json", 422, "the body is not JSON"),
        ("post", "/step", {"action": {"answer": "x" * 5000}}, 413, "request body over 4096 bytes"),
        ("post", "/step", {"action": {"stop": True}, "episode_id": "nobody"}, 404, "episode 'nobody' not found"),
        ("post", "/reset", {"target": "swan"}, 400, "reset: target 'swan': no such built-in design"),
        ("post", "/reset", {"target": -1}, 400, "reset.target"),
        ("post", "/reset", {"step_limit": 0}, 400, "reset.step_limit: Input should be greater than or equal to 1"),
        ("post", "/reset", {"colour": "red"}, 400, "reset.colour: Extra inputs are not permitted"),
        ("post", "/reset", {"seed": -2}, 422, "body.seed"),
        ("get", "/state?episode_id=", None, 422, "query.episode_id"),
        ("get", "/nowhere", None, 404, "Not Found"),
        ("put", "/step", None, 405, "Method Not Allowed"),
    ],
)
def test_bad_input_is_a_4xx_with_a_one_line_json_message(
    http: httpx.Client, method: str, path: str, body: Any, status: int, detail: str
) -> None:
    http.post("/reset")
    kwargs: dict[str, Any] = {}
    if isinstance(body, bytes):
        kwargs = {"content": body, "headers": {"content-type": "application/json"}}
    elif body is not None:
        kwargs = {"json": body}
    r = http.request(method.upper(), path, **kwargs)
    assert r.status_code == status and r.headers["content-type"] == "application/json"
    message = r.json()["detail"]
    assert isinstance(message, str) and detail in message and "\n" not in message and "Traceback" not in message


def test_a_body_streamed_past_the_limit_is_refused(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts as it arrives
        for _ in range(50):
            yield b" " * 100

    r = http.post("/step", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"]


def test_a_finished_episode_refuses_steps_with_409(http: httpx.Client) -> None:
    http.post("/reset", json={"episode_id": "short", "step_limit": 1})
    assert http.post("/step", json={"action": {"stop": True}, "episode_id": "short"}).json()["done"]
    r = http.post("/step", json={"action": BOOK, "episode_id": "short"})
    assert r.status_code == 409 and r.json()["detail"] == "the episode is over: reset to start another"


def test_schema_metadata_and_health_describe_this_environment(http: httpx.Client) -> None:
    schema = http.get("/schema").json()
    assert schema["action"] == OrigamiAction.model_json_schema()
    assert schema["state"] == OrigamiState.model_json_schema() and "gs" in schema["observation"]["properties"]
    meta = http.get("/metadata").json()
    assert meta["name"] == "shredfold-origami" and "engine" in meta["version"]
    assert http.get("/health").json()["status"] == "healthy"


# ---------------------------------------------------------------- the command


def test_the_command_serves_on_loopback_and_stops_on_sigint() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shredfold", "serve-env", "--port", "0", "--image-size", str(SIZE),
         "--target", "book-fold", "--max-episodes", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("serving the origami environment at http://127.0.0.1:"), proc.stderr
        base = line.split(" at ")[1].strip()
        with httpx.Client(base_url=base, timeout=60) as client:
            obs = client.post("/reset").json()["observation"]
            assert obs["design"] == "builtin/book-fold" and len(obs["vertices"]) == 4
            assert client.post("/step", json={"action": BOOK}).json()["observation"]["gs"] == 1.0
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")
    finally:
        proc.kill()
        proc.wait()


def test_a_bad_start_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cases = [(["--port", str(port)], f"cannot listen on 127.0.0.1:{port}: the port is in use"),
                 (["--port", "0", "--target", "swan"], "no such built-in design"),
                 (["--port", "0", "--image-size", "9"], "--image-size: Input should be greater than or equal to 64"),
                 (["--port", "0", "--gs-threshold", "most"], "--gs-threshold: a number from 0 to 1, or 'none'")]  # fmt: skip
        for args, expected in cases:
            assert cli.main(["serve-env", *args]) == 2
            out, err = capsys.readouterr()
            lines = err.strip().splitlines()
            assert out == "" and len(lines) == 1, err
            assert lines[0].startswith("shredfold serve-env: ") and expected in lines[0]
