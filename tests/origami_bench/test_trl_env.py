"""OrigamiBench full-step as a TRL environment: reset, tools, rewards, and a real GRPOTrainer."""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shredfold.origami_bench.env import EnvConfig, gs, run_episode, silhouette
from shredfold.origami_bench.episode import EpisodeOver, FoldEpisode, resolve_target
from shredfold.origami_bench.gym_env import OrigamiFoldEnv, decode_png
from shredfold.origami_bench.prompts import FULLSTEP_TASK
from shredfold.origami_bench.targets import solve_target
from shredfold.origami_bench.trl_env import (
    OrigamiCreaseEnvironment,
    OrigamiFoldEnvironment,
    gs_gain_reward,
    gs_reward,
)

SIZE = 64
BOOK = {"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}
QUARTER = {"start": [0.5, 0.5], "end": [1, 0.5], "assignment": "M"}


def pixels(block: dict[str, Any]) -> np.ndarray:
    assert block["type"] == "image"
    return np.asarray(block["image"], dtype=np.uint8)


def tools_of(cls: type) -> dict[str, Any]:
    """The methods TRL offers as tools: the class's public functions but reset and get_reward."""
    return {
        name: fn
        for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    }


def test_reset_shows_the_benchmark_turn_with_the_reply_turned_into_tool_calls() -> None:
    env = OrigamiFoldEnvironment("quarter-square", image_size=SIZE)
    obs = env.reset(prompt=[{"role": "user", "content": "Fold."}])  # TRL passes the row
    *images, text = obs
    assert [b["type"] for b in obs] == ["image", "image", "image", "text"]

    bench = FoldEpisode("quarter-square", image_size=SIZE)
    bench.reset()
    request = bench.request()
    for block, png in zip(images, request.images, strict=True):  # target, folded, pattern
        assert np.array_equal(pixels(block), decode_png(png))
    user = request.messages[-1].text
    assert 'Reply with one JSON object' in user and 'Reply with' not in text["text"]
    assert text["text"] == user.replace(user[user.index("Reply with") : user.index("\n")],
                                        "Call the fold tool with start, end and assignment, or the stop "
                                        "tool when the model matches the target.")  # fmt: skip
    assert "Turn 1 of at most 6." in text["text"] and env.gs == bench.gs and env.turns == 0


def test_tool_calls_play_the_benchmark_episode_to_the_same_gs_as_gym_and_the_benchmark(tmp_path: Path) -> None:
    design = resolve_target(1)
    steps = [s.as_action() for s in design.steps()]
    second = {**steps[1], "start": steps[1]["end"], "end": steps[1]["start"]}  # the other side over
    calls = [steps[0], {"start": "left", "end": 3, "assignment": "V"},  # a model's bad arguments
             {"start": [7, 7], "end": [8, 9], "assignment": "V"}, second]  # fmt: skip
    answers = [json.dumps(c) for c in calls]

    env = OrigamiFoldEnvironment(design, step_limit=len(calls), image_size=SIZE, gs_threshold=None)
    env.reset()
    results = [env.fold(**c) for c in calls]
    assert env.done and results[-1].startswith("valid. The episode is over (the step limit of 4")

    gym = OrigamiFoldEnv(design, step_limit=len(calls), image_size=SIZE, gs_threshold=None)
    gym.reset(seed=0)
    for a in answers:
        *_, info = gym.step(a)
    solve_target(design, SIZE, tmp_path)  # the benchmark: the stored target, an episode, its GS
    scripted = iter(answers)
    episode = run_episode((tmp_path / "target.png").read_bytes(), EnvConfig(step_limit=len(calls), image_size=SIZE),
                          lambda request: (next(scripted), {}), item=design.key)  # fmt: skip
    bench_gs = gs(silhouette(episode.final, SIZE), np.load(tmp_path / "silhouette.npy"))

    assert env.gs == info["gs"] == bench_gs and 0 < bench_gs < 1
    assert env.state_hash == info["state_hash"] == episode.turns[-1].state_hash
    assert [t.valid for t in episode.turns] == [True, False, False, True]
    assert env.gs_gained == pytest.approx(env.gs - gym.episode.blank_gs, abs=1e-9)


def test_a_tool_result_is_the_next_turn_and_its_pictures() -> None:
    env = OrigamiFoldEnvironment("quarter-square", image_size=SIZE)
    env.reset()
    folded, pattern, text = env.fold(**BOOK)
    bench = FoldEpisode("quarter-square", image_size=SIZE)
    bench.reset()
    bench.step(json.dumps(BOOK))
    request = bench.request()
    assert np.array_equal(pixels(folded), decode_png(request.images[1]))
    assert np.array_equal(pixels(pattern), decode_png(request.images[2]))
    body = text["text"]
    assert body.startswith("Vertices (id: x, y): 0: 1.0000, 0.0000;")
    assert request.messages[-1].text.endswith(body)  # the benchmark's text, less the task
    assert "Turn 2 of at most 6." in body and body.endswith("Feedback on your last action: valid")

    text_only = OrigamiFoldEnvironment("quarter-square", image_size=SIZE, images=False)
    assert isinstance(text_only.reset(), str)
    rejected = text_only.fold(start=[0.5, 0], end=[0.5, 1], assignment="X")  # type: ignore[arg-type]
    assert isinstance(rejected, str)
    assert rejected.endswith("Feedback on your last action: rejected (value): assignment must be 'M' or 'V', got 'X'")
    assert text_only.turns == 1 and text_only.gs_gained == 0  # the state is left as it was


def test_an_episode_ends_on_the_target_a_stop_or_the_step_limit() -> None:
    env = OrigamiFoldEnvironment("quarter-square", image_size=SIZE, images=False)
    env.reset()
    env.fold(**BOOK)
    assert env.fold(**QUARTER) == "valid. The episode is over (the model matches the target)."
    assert env.done and env.gs == 1.0
    with pytest.raises(EpisodeOver, match="the model matches the target"):
        env.fold(**BOOK)  # TRL hands the model this message as the tool's error
    with pytest.raises(EpisodeOver):
        env.stop()

    env.reset()  # a new episode on the same instance (TRL pools and resets them)
    assert not env.done and env.turns == 0
    assert env.stop() == "Stopped: the episode is over." and env.done and env.turns == 1

    short = OrigamiFoldEnvironment("quarter-square", image_size=SIZE, step_limit=1, images=False)
    with pytest.raises(EpisodeOver, match="reset first"):
        short.fold(**BOOK)
    short.reset()
    assert short.fold(**BOOK).endswith("(the step limit of 1 turns is reached).")


def test_the_rewards_are_each_rollouts_gs_and_gs_gained() -> None:
    envs = [OrigamiFoldEnvironment("quarter-square", image_size=SIZE, images=False) for _ in range(3)]
    for env in envs:
        env.reset()
    envs[0].fold(**BOOK)
    envs[0].fold(**QUARTER)
    envs[1].fold(**BOOK)
    blank = envs[2].gs
    # TRL passes the prompts, the completions and more beside the environments
    got = gs_reward(prompts=["p"] * 3, completions=["c"] * 3, completion_ids=[[1]] * 3, environments=envs)
    assert got == [1.0, envs[1].gs, blank] and blank < envs[1].gs < 1.0
    gained = gs_gain_reward(completions=["c"] * 3, environments=envs)
    assert gained == [round(1.0 - blank, 6), round(envs[1].gs - blank, 6), 0.0]
    with pytest.raises(ValueError, match="environment_factory"):
        gs_reward(prompts=["p"], completions=["c"])
    with pytest.raises(TypeError, match="not an origami environment"):
        gs_gain_reward(environments=[object()])  # type: ignore[list-item]


def test_a_data_sets_target_column_chooses_the_design() -> None:
    env = OrigamiFoldEnvironment("quarter-square", image_size=SIZE, images=False)
    env.reset(target="book-fold", prompt=[])
    assert env.design_id == "builtin/book-fold"
    env.reset(prompt=[])  # no target: the same one
    assert env.design_id == "builtin/book-fold"
    env.reset(target="procedural/002")
    assert env.design_id == "procedural/002"
    with pytest.raises(ValueError, match="no such built-in design"):
        env.reset(target="swan")


def test_the_crease_environment_adds_creases() -> None:
    env = OrigamiCreaseEnvironment("book-fold", image_size=SIZE, images=False)
    blank = env.reset()
    assert "Call the crease tool" in blank and "add one crease" in blank
    assert env.crease(**BOOK).startswith("valid. The episode is over (the model matches the target)")
    assert env.gs == 1.0


def test_trl_offers_exactly_the_action_and_stop_with_schemas_from_the_docstrings() -> None:
    from transformers.utils import get_json_schema  # what TRL renders tools with

    assert set(tools_of(OrigamiFoldEnvironment)) == {"fold", "stop"}
    assert set(tools_of(OrigamiCreaseEnvironment)) == {"crease", "stop"}
    env = OrigamiFoldEnvironment("quarter-square", image_size=SIZE)
    fold = get_json_schema(env.fold)["function"]
    assert fold["name"] == "fold" and "simple fold" in fold["description"]
    params = fold["parameters"]
    assert params["required"] == ["start", "end", "assignment"]
    assert params["properties"]["assignment"]["enum"] == ["M", "V"]
    point = params["properties"]["start"]
    assert {"type": "integer"} in point["anyOf"] and "vertex id" in point["description"]
    stop = get_json_schema(env.stop)["function"]
    assert stop["name"] == "stop" and stop["parameters"]["properties"] == {}
    crease = get_json_schema(OrigamiCreaseEnvironment("book-fold", image_size=SIZE).crease)["function"]
    assert "sheet coordinates" in crease["parameters"]["properties"]["start"]["description"]
    assert "Reply with" in FULLSTEP_TASK["crease"]  # the sentence reset replaces exists in both kinds


@pytest.mark.slow
def test_a_grpo_trainer_takes_the_environment_and_trains_a_step(tmp_path: Path) -> None:
    # A real GRPOTrainer (TRL 1.16) on a tiny random model, on the CPU: it probes the class
    # for reset and tools, renders the tools through a chat template TRL ships, resets one
    # environment per rollout with the data set's row, and scores the rollouts with the
    # reward functions. A random model calls no tool, so each rollout's GS is its blank sheet's.
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from datasets import Dataset
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_chat_template

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>",
                "</think>", "<tool_response>", "</tool_response>"]  # fmt: skip
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["fold the square"], trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))  # fmt: skip
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        chat_template=qwen3_chat_template, padding_side="left")  # fmt: skip
    model = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id))  # fmt: skip
    made: list[OrigamiFoldEnvironment] = []

    def factory() -> OrigamiFoldEnvironment:
        made.append(OrigamiFoldEnvironment("quarter-square", image_size=SIZE, images=False))
        return made[-1]

    rows = Dataset.from_dict({"prompt": [[{"role": "user", "content": "Fold the square."}]] * 2,
                              "target": ["book-fold", "corner-fold"]})  # fmt: skip
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=8, report_to=[], use_cpu=True, logging_steps=1,
                      save_strategy="no", shuffle_dataset=False)  # fmt: skip
    trainer = GRPOTrainer(model=model, reward_funcs=[gs_reward, gs_gain_reward], args=args, train_dataset=rows,
                          processing_class=tokenizer, environment_factory=factory)  # fmt: skip
    assert sorted(t.__name__ for t in trainer.tools) == ["fold", "stop"]
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tools=trainer.tools, tokenize=False)
    assert '"name": "fold"' in rendered and "vertex id" in rendered

    trainer.train()
    logged = trainer.state.log_history[0]
    blanks = {}
    for name in ("book-fold", "corner-fold"):
        episode = FoldEpisode(name, image_size=SIZE)
        episode.reset()
        blanks[name] = episode.gs
    # four rollouts, two per row, each reset to its row's target: the mean of the blank GS
    assert sorted(e.design_id for e in made) == ["builtin/book-fold"] * 2 + ["builtin/corner-fold"] * 2
    assert logged["rewards/gs_reward/mean"] == pytest.approx(np.mean(list(blanks.values())), abs=1e-6)
    assert logged["rewards/gs_gain_reward/mean"] == 0.0 and logged["tools/call_frequency"] == 0.0

    # a tool call as the model writes it, parsed by the response template TRL set for the
    # chat template and called as TRL calls it: by name, with the parsed arguments
    env = made[0]  # the instance TRL probed for the tools
    env.reset(target="quarter-square")
    tools = {t.__name__: t for t in trainer.tools if t.__self__ is env}
    call = '<tool_call>\n{"name": "fold", "arguments": {"start": [0.5, 0], "end": [0.5, 1], "assignment": "V"}}\n</tool_call><|im_end|>'
    parsed = tokenizer.parse_response(call, prefix="")["tool_calls"][0]["function"]
    before = env.gs
    result = tools[parsed["name"]](**parsed["arguments"])
    assert "Feedback on your last action: valid" in result and env.turns == 1 and env.gs != before
