"""OrigamiBench full-step as a Gymnasium environment: the benchmark's episode, step by step."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import SyncVectorEnv

from shredfold.origami_bench import gym_env
from shredfold.origami_bench.designs import procedural_designs
from shredfold.origami_bench.env import EnvConfig, gs, run_episode, silhouette
from shredfold.origami_bench.gym_env import ENV_ID, OrigamiFoldEnv, decode_png, resolve_target
from shredfold.origami_bench.solvers.agents import OrigamiRandom
from shredfold.origami_bench.targets import solve_target
from shredfold.spec import DesignSources, ModelConfig

ROOT = Path(__file__).resolve().parents[2]
SIZE = 64  # the smallest image a spec allows: fast, and every code path the same
BOOK = '{"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}'
QUARTER = '{"start": [0.5, 0.5], "end": [1, 0.5], "assignment": "M"}'


def make(**kw: object) -> gymnasium.Env:
    return gymnasium.make(ENV_ID, **{"target": "quarter-square", "image_size": SIZE, **kw})


def test_the_env_passes_gymnasiums_checker_with_rendering() -> None:
    env = make(render_mode="rgb_array")
    check_env(env.unwrapped)  # the render modes too: made through gymnasium.make, it has a spec
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape == (SIZE, SIZE, 3)


def test_a_fold_toward_the_target_is_rewarded_by_the_change_in_gs() -> None:
    env = make()
    obs, info = env.reset(seed=3)
    assert set(obs) == {"target", "folded", "pattern", "vertices", "n_vertices", "turn"}
    assert obs["n_vertices"] == 4 and obs["turn"] == 0
    np.testing.assert_allclose(obs["vertices"][:4], [[0, 0], [1, 0], [1, 1], [0, 1]])
    assert not obs["vertices"][4:].any()  # padding
    blank = info["gs"]
    assert 0 < blank < 1

    obs, reward, terminated, truncated, info = env.step(BOOK)
    assert info["valid"] and info["effective"] and info["feedback"] == "valid"
    assert reward == pytest.approx(info["gs"] - blank) and reward > 0
    assert not terminated and not truncated and obs["turn"] == 1 and obs["n_vertices"] == 6
    # the turn's prompt is the benchmark's, history included
    assert "Turn 2 of at most 6." in info["prompt"] and '-> valid' in info["prompt"]

    _, reward, terminated, _, info = env.step(QUARTER)
    assert info["gs"] == 1.0 and terminated  # GS >= the default threshold 0.99
    # the folded image is the target's picture once the state is the target's
    obs, _ = env.reset(seed=3)
    for a in (BOOK, QUARTER):
        obs, *_ = env.step(a)
    assert np.array_equal(obs["folded"], obs["target"])


def test_the_reward_can_be_gs_itself_and_the_threshold_off() -> None:
    env = make(reward="gs", gs_threshold=None, step_limit=3)
    env.reset(seed=0)
    _, r1, *_ = env.step(BOOK)
    _, r2, terminated, truncated, info = env.step(QUARTER)
    assert r2 == info["gs"] == 1.0 and 0 < r1 < 1 and not terminated
    _, r3, terminated, truncated, _ = env.step('{"stop": true}')
    assert terminated and not truncated and r3 == 1.0


def test_the_crease_action_shows_the_pattern_and_scores_a_pattern_that_is_not_flat_zero() -> None:
    env = make(kind="crease", gs_threshold=None)
    check_env(env.unwrapped)
    env.reset(seed=0)
    obs, reward, *_, info = env.step(BOOK)  # the book crease alone folds flat
    assert info["valid"] and reward > 0 and env.unwrapped.state.flat_foldable
    # sheet coordinates: the crease's ends are vertices now
    assert [0.5, 0.0] in obs["vertices"][: obs["n_vertices"]].tolist()
    flat_gs = info["gs"]
    # a second valley across it: four valleys at the centre cannot fold flat (Maekawa)
    obs, reward, *_, info = env.step('{"start": [0, 0.5], "end": [1, 0.5], "assignment": "V"}')
    assert info["valid"] and not env.unwrapped.state.flat_foldable
    assert info["gs"] == 0.0 and reward == pytest.approx(-flat_gs)
    assert obs["n_vertices"] == 9


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("I would fold it in half.", "not-json"),
        ('{"start": [0.5, 0], "end": [0.5, 1], "assignment": "V", "why": 1}', "fields"),
        ('{"start": [5, 5], "end": [6, 7], "assignment": "V"}', "off-sheet"),
        ('{"start": 99, "end": 0, "assignment": "M"}', "syntax"),
        (b"\xff\xfe not text", "not-json"),
        (None, "not-json"),
    ],
)
def test_a_bad_answer_is_feedback_and_leaves_the_state(action: object, reason: str) -> None:
    env = make(invalid_penalty=0.1)
    before, _ = env.reset(seed=0)
    sheet = env.unwrapped.state
    obs, reward, terminated, truncated, info = env.step(action)
    assert not info["valid"] and info["reason"] == reason
    assert info["feedback"].startswith(f"rejected ({reason}):")
    assert reward == pytest.approx(-0.1) and not terminated and not truncated
    assert env.unwrapped.state is sheet
    for key in ("folded", "pattern", "vertices"):
        assert np.array_equal(obs[key], before[key])
    assert f"rejected ({reason})" in info["prompt"]  # the next turn tells the model


def test_invalid_answers_count_as_turns_up_to_the_step_limit() -> None:
    env = make(step_limit=2)
    env.reset(seed=0)
    *_, terminated, truncated, _ = env.step("?")
    assert not terminated and not truncated
    *_, terminated, truncated, _ = env.step("?")
    assert truncated and not terminated
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(BOOK)


def test_same_seed_and_actions_give_the_same_observations() -> None:
    actions = [BOOK, "nonsense", QUARTER.replace('"M"', '"V"'), '{"stop": true}']
    runs = []
    for _ in range(2):
        env = make(target=2, gs_threshold=None)
        obs, _ = env.reset(seed=11)
        seen = [obs]
        for a in actions:
            obs, r, te, tr, info = env.step(a)
            seen.append(obs)
        runs.append((seen, info["gs"], info["state_hash"]))
    (a_obs, a_gs, a_hash), (b_obs, b_gs, b_hash) = runs
    assert a_gs == b_gs and a_hash == b_hash
    for x, y in zip(a_obs, b_obs, strict=True):
        assert all(np.array_equal(x[k], y[k]) for k in x)


def test_the_same_answers_give_the_same_final_gs_as_a_benchmark_episode(tmp_path: Path) -> None:
    design = resolve_target(1)
    steps = [s.as_action() for s in design.steps()]
    # the target's own first fold, junk, an impossible fold, the second fold's line the
    # other way round: an episode that ends short of the target
    second = {**steps[1], "start": steps[1]["end"], "end": steps[1]["start"]}  # the other side over
    answers = [json.dumps(steps[0]), "no idea", '{"start": [7, 7], "end": [8, 9], "assignment": "V"}',
               f"```json\n{json.dumps(second)}\n```"]
    cfg = EnvConfig(step_limit=len(answers), image_size=SIZE)

    # the benchmark: the target stored as the build stage stores it, an episode, its GS
    solve_target(design, SIZE, tmp_path)
    requests = []

    def scripted(request):  # type: ignore[no-untyped-def]
        requests.append(request)
        return answers[len(requests) - 1], {}

    episode = run_episode((tmp_path / "target.png").read_bytes(), cfg, scripted, item=design.key)
    bench_gs = gs(silhouette(episode.final, SIZE), np.load(tmp_path / "silhouette.npy"))

    env = make(target=design, step_limit=cfg.step_limit, gs_threshold=None)
    obs, info = env.reset(seed=0)
    prompts, hashes = [info["prompt"]], []
    for a in answers:
        obs, _, terminated, truncated, info = env.step(a)
        prompts.append(info["prompt"])
        hashes.append(info["state_hash"])
    assert truncated and not terminated
    assert info["gs"] == bench_gs and 0 < bench_gs < 1
    assert hashes == [t.state_hash for t in episode.turns]
    assert [t.valid for t in episode.turns] == [True, False, False, True]
    # every observation was the request the benchmark sent on that turn
    assert prompts[: len(requests)] == [r.text for r in requests]
    assert np.array_equal(decode_png(requests[0].images[0]), obs["target"])


def test_a_built_in_agents_benchmark_episode_replays_to_the_same_gs(tmp_path: Path) -> None:
    # origami-random plays the benchmark episode from the requests alone; its answers, fed
    # to the environment, end on the same state and the same GS
    agent = OrigamiRandom(ModelConfig(id="origami-random", adapter="origami-random"))
    design = resolve_target("blintz-base")
    solve_target(design, SIZE, tmp_path)
    cfg = EnvConfig(step_limit=4, image_size=SIZE)
    episode = run_episode(
        (tmp_path / "target.png").read_bytes(), cfg, lambda r: (agent.complete(r).text, {}), item=design.key
    )
    bench_gs = gs(silhouette(episode.final, SIZE), np.load(tmp_path / "silhouette.npy"))

    env = make(target=design, step_limit=cfg.step_limit, gs_threshold=None)
    env.reset(seed=5)
    for turn in episode.turns:
        *_, info = env.step(turn.answer)
        assert info["state_hash"] == turn.state_hash and info["valid"] == turn.valid
    assert info["gs"] == bench_gs


def test_it_runs_vectorised() -> None:
    envs = SyncVectorEnv([lambda: make(), lambda: make(target="book-fold")])
    obs, info = envs.reset(seed=[1, 2])
    assert obs["folded"].shape == (2, SIZE, SIZE, 3) and obs["vertices"].shape == (2, 200, 2)
    obs, reward, terminated, truncated, info = envs.step((BOOK, "junk"))
    assert terminated.tolist() == [False, False] and reward[0] > 0 and reward[1] == 0
    assert list(info["reason"]) == ["", "not-json"]
    obs, reward, terminated, truncated, info = envs.step((QUARTER, BOOK))
    assert terminated.tolist() == [True, True]  # both reached their targets
    assert info["gs"].tolist() == [1.0, 1.0]
    envs.close()


def test_targets_by_name_by_procedural_index_or_design() -> None:
    assert resolve_target("book-fold").id == resolve_target("builtin/book-fold").id == "builtin/book-fold"
    planned = procedural_designs(DesignSources(procedural=3), seed=0)[2]  # as the default spec plans it
    assert resolve_target(2) == resolve_target("procedural/002") == planned
    assert resolve_target(planned) is planned
    for bad, match in [("no-such-fold", "no such built-in design"), ("procedural/x", "procedural/<index>"),
                       (-1, "0 to 10000")]:
        with pytest.raises(ValueError, match=match):
            resolve_target(bad)
    env = make()
    env.reset(seed=0, options={"target": "book-fold"})
    assert env.unwrapped.design.id == "builtin/book-fold"


def test_the_declared_entry_point_registers_the_id() -> None:
    # Gymnasium 1.x does not read the entry point group itself: the test loads what
    # pyproject.toml declares, as a tool would, and checks that it registers the id.
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = meta["project"]["entry-points"]["gymnasium.envs"]["shredfold"]
    module, _, attr = declared.partition(":")
    register = getattr(importlib.import_module(module), attr)
    assert register is gym_env.register_envs
    del gymnasium.registry[ENV_ID]
    with pytest.raises(gymnasium.error.Error):
        gymnasium.make(ENV_ID)
    register()
    register()  # idempotent
    env = gymnasium.make(ENV_ID, image_size=SIZE)
    assert isinstance(env.unwrapped, OrigamiFoldEnv) and env.unwrapped.design.id == gym_env.DEFAULT_TARGET
    # in a fresh interpreter, the module:id form imports the module, which registers on import
    code = (
        "import gymnasium\n"
        f"env = gymnasium.make('{module}:{ENV_ID}', target='book-fold', image_size={SIZE})\n"
        "print(type(env.unwrapped).__name__, env.reset(seed=0)[1]['design'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.stdout.split() == ["OrigamiFoldEnv", "builtin/book-fold"], out.stderr
