"""The shipped model files: each loads, names its key's variable, and maps onto a sane body."""

from __future__ import annotations

from pathlib import Path

import pytest

from shredfold.models.endpoints import endpoint_limits
from shredfold.models.openai_compat import OpenAICompatible
from shredfold.resolve import load_model_config, load_spec
from shredfold.shred.prompts import build_request

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "specs" / "models"
FILES = sorted(MODELS.glob("*.yaml")) + sorted((MODELS / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_model_file_is_valid_and_keeps_keys_out(path: Path) -> None:
    cfg = load_model_config(path)
    assert cfg.id == path.stem and cfg.adapter == "openai"
    text = path.read_text()
    # A key is named by its environment variable, never written down.
    assert "sk-" not in text and "Bearer" not in text
    assert cfg.api_key_env is None or cfg.api_key_env.isupper()
    body = OpenAICompatible(cfg).body(
        build_request(kind="prose", lang="en", n=1, images=[], composite=False, item=None)
    )
    assert body["model"] == cfg.model and body[cfg.decoding.max_tokens_field] == cfg.decoding.max_tokens


def test_the_paper_spec_resolves_every_model_and_shares_endpoints() -> None:
    resolved = load_spec(ROOT / "specs" / "paper.yaml")
    limits = endpoint_limits(resolved.models)
    assert limits["endpoint_api_openai_com"] == 2  # GPT-5 mini and GPT-5.1 share one key
    assert limits["endpoint_dashscope_intl_aliyuncs_com"] == 2
    assert limits["endpoint_localhost_8000"] == 1


def test_reasoning_models_send_only_what_they_accept() -> None:
    body = OpenAICompatible(load_model_config(MODELS / "gpt-5.1.yaml")).body(
        build_request(kind="code", lang="en", n=1, images=[], composite=False, item=None)
    )
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 16384


def test_the_ollama_example_is_documented_and_used_by_no_spec() -> None:
    example = MODELS / "examples" / "ollama-qwen2.5vl.yaml"
    assert "ollama pull" in example.read_text()
    for spec in (ROOT / "specs").glob("*.yaml"):
        assert "ollama" not in spec.read_text()
