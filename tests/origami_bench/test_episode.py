"""The episode core the RL front ends share: a benchmark full-step episode, turn by turn."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shredfold.origami_bench.episode import EpisodeOver, FoldEpisode, check_config

SIZE = 64
BOOK = json.dumps({"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"})
QUARTER = json.dumps({"start": [0.5, 0.5], "end": [1, 0.5], "assignment": "M"})


def test_an_episode_scores_each_turn_and_ends_on_the_threshold() -> None:
    episode = FoldEpisode("quarter-square", image_size=SIZE)
    with pytest.raises(EpisodeOver, match="reset first"):
        episode.step(BOOK)
    episode.reset()
    blank = episode.gs
    out = episode.step(BOOK)
    assert out.feedback.valid and out.effective and out.gs_before == blank < out.gs < 1 and not out.done
    assert episode.gs_gained == round(out.gs - blank, 6)
    out = episode.step("junk")
    assert out.feedback.reason == "not-json" and out.gs == out.gs_before and not out.effective
    out = episode.step(QUARTER)
    assert out.reached and out.terminated and not out.truncated and episode.gs == 1.0
    feedback = [h.feedback for h in episode.history]
    assert feedback[0] == feedback[2] == "valid" and feedback[1].startswith("rejected (not-json)")
    with pytest.raises(EpisodeOver, match="over"):
        episode.step('{"stop": true}')
    assert "Turn 4 of at most 6." in episode.request().text  # the request after the last turn


def test_a_stop_or_the_step_limit_ends_it_and_a_new_target_needs_a_reset() -> None:
    episode = FoldEpisode("book-fold", image_size=SIZE, step_limit=2, gs_threshold=None)
    episode.reset()
    assert episode.step('{"stop": true}').stopped and episode.done and episode.history == []
    episode.reset()
    episode.step(BOOK)
    out = episode.step(BOOK)  # the target reached, no threshold: only the limit ends it
    assert out.truncated and not out.terminated and out.gs == 1.0
    before = episode.target_png
    episode.set_target("corner-fold")
    assert not episode.started and episode.target_png != before
    with pytest.raises(EpisodeOver):
        episode.request()


def test_settings_are_checked_as_a_spec_checks_them() -> None:
    assert check_config("crease", np.int64(3), 64).step_limit == 3  # numpy integers are integers
    for args, message in [(("fold", 0, 64), "step_limit is an integer from 1 to 200"),
                          (("fold", True, 64), "step_limit"), (("fold", 6, 64.0), "image_size"),
                          (("fold", 6, 4096), "image_size"), (("twist", 6, 64), "kind")]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            check_config(*args)
