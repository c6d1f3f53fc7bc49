"""Episodes through the loopback OpenAI-compatible server, then replayed from the cache."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from shredfold.models.asker import CachedAsker
from shredfold.models.openai_compat import OpenAICompatible
from shredfold.origami_bench.designs import builtin_designs
from shredfold.origami_bench.env import EnvConfig, render_folded, run_episode
from shredfold.origami_bench.targets import target_state
from shredfold.serve import ChatServer, read_log
from shredfold.spec import ModelConfig
from shredfold.store import Store

if TYPE_CHECKING:
    from tests.conftest import Loopback


@pytest.fixture
def served(loopback: Loopback, tmp_path: Path) -> ChatServer:
    return loopback("origami-random", log_path=tmp_path / "requests.jsonl")


def _run(config: ModelConfig, store: Store, targets: list[bytes], replay_only: bool) -> tuple[list, CachedAsker]:
    model = OpenAICompatible(config)
    asker = CachedAsker("loop", config, model.identity(), store, replay_only=replay_only, model=model)
    env = EnvConfig(step_limit=3, image_size=96)
    try:
        episodes = [run_episode(t, env, asker, item=None) for t in targets]
    finally:
        asker.close()
    return episodes, asker


def test_episodes_over_http_replay_from_cache_with_no_new_requests(served: ChatServer, tmp_path: Path) -> None:
    config = ModelConfig(id="loop", adapter="openai", base_url=served.url, model="origami-random", max_attempts=1)
    store = Store(tmp_path / "store")
    targets = [render_folded(target_state(d), 96) for d in builtin_designs()[:3]]

    first, asker = _run(config, store, targets, replay_only=False)
    log_path = tmp_path / "requests.jsonl"
    served.wait_idle()
    n_requests = len(read_log(log_path))
    assert asker.called == n_requests == sum(len(e.turns) for e in first) > 3
    assert all(e.error is None for e in first)

    again, asker2 = _run(config, store, targets, replay_only=True)
    served.wait_idle()
    assert asker2.called == 0 and len(read_log(log_path)) == n_requests
    for a, b in zip(first, again, strict=True):
        assert [t.state_hash for t in a.turns] == [t.state_hash for t in b.turns]
        assert [t.answer for t in a.turns] == [t.answer for t in b.turns]
