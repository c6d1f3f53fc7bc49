"""The built-in agents' play: what one agent object keeps while it plays many episodes."""

from __future__ import annotations

import numpy as np

from shredfold.models.builtin.origami_agents import OrigamiRandom
from shredfold.origami_bench.design import replay
from shredfold.origami_bench.env import EnvConfig, render_folded, run_episode
from shredfold.origami_bench.procedural import random_sequence
from shredfold.origami_bench.solvers import agents
from shredfold.spec import ModelConfig


def test_memo_forgets_its_oldest_entries() -> None:
    memo = agents.Memo(3)
    for i in range(5):
        memo[str(i)] = i
    assert list(memo.items()) == [("2", 2), ("3", 3), ("4", 4)]


def test_one_agent_playing_many_episodes_keeps_a_bounded_memo(monkeypatch) -> None:
    # one adapter plays every episode of a cell: its remembered states must not pile up
    monkeypatch.setattr(agents, "MEMO_ENTRIES", 4)
    agent = OrigamiRandom(ModelConfig(id="origami-random", adapter="origami-random"), None)

    sizes = []
    for seed in range(3):
        target = render_folded(replay(random_sequence(np.random.default_rng(seed), 2))[-1], 64)
        episode = run_episode(target, EnvConfig(step_limit=3, image_size=64), lambda r: (agent.complete(r).text, {}), None)
        assert episode.steps >= 1
        sizes.append(len(agent._agent._states))
    assert max(sizes) <= 4 and sizes[-1] == 4  # full, and no fuller (unbounded: 6 here)
