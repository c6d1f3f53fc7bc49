"""Base URLs: checked when a model file is loaded, normalised into the model's identity."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from shredfold.models.endpoints import endpoint_resource, endpoint_url
from shredfold.resolve import load_model_config
from shredfold.spec import ModelConfig, SpecError


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("HTTPS://API.OpenAI.com:443/v1/", "https://api.openai.com/v1"),
        ("http://localhost:80", "http://localhost"),
        ("http://LOCALHOST:8000/v1//", "http://localhost:8000/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("https://user:secret@proxy.example/v1", "https://proxy.example/v1"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "https://generativelanguage.googleapis.com/v1beta/openai"),
    ],
)
def test_an_endpoint_is_normalised(url: str, normal: str) -> None:
    assert endpoint_url(url) == normal


def test_the_endpoint_resource_never_carries_a_password() -> None:
    cfg = ModelConfig(id="m", base_url="https://user:secret@Proxy.example:8443/v1", model="x")
    assert endpoint_resource(cfg) == "endpoint_proxy_example_8443"


def model_file(tmp_path: Path, **fields: object) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"id": "m", **fields}))
    return path


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("api.openai.com/v1", "http:// or https://"),
        ("ftp://host/v1", "http:// or https://"),
        ("https:///v1", "has no host"),
        ("http://host:99999/v1", "Port out of range"),
        ("https://host/v1?key=abc", "must not have a query"),
    ],
)
def test_a_bad_base_url_fails_when_the_model_file_loads(tmp_path: Path, url: str, cause: str) -> None:
    with pytest.raises(SpecError, match="base_url") as err:
        load_model_config(model_file(tmp_path, base_url=url, model="x"))
    assert cause in str(err.value) and "m.yaml:" in str(err.value)


def test_a_cache_scope_is_for_endpoints_only(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"m.yaml:2: cache_scope: cache_scope applies to endpoint adapters, not 'oracle'"):
        load_model_config(model_file(tmp_path, adapter="oracle", cache_scope="x"))
    with pytest.raises(SpecError, match="cache_scope"):
        load_model_config(model_file(tmp_path, base_url="http://h/v1", model="x", cache_scope=""))
    cfg = load_model_config(model_file(tmp_path, base_url="http://h/v1", model="x", cache_scope="lab-qwen"))
    assert cfg.cache_scope == "lab-qwen"


@pytest.mark.parametrize(
    ("url", "concern"),
    [
        ("http://169.254.169.254/latest", "a cloud metadata service"),
        ("http://2852039166/", "a cloud metadata service"),  # 169.254.169.254 as one number
        ("http://0xa9fea9fe/", "a cloud metadata service"),
        ("http://[::ffff:169.254.169.254]/", "a cloud metadata service"),
        ("http://100.100.100.200/", "a cloud metadata service"),
        ("http://169.254.3.4:80/v1", "a link-local address"),
        ("http://192.168.1.20:8000/v1", "a private address"),
        ("http://[fd12::1]/v1", "a private address"),
        ("http://gpu-box.internal:8000/v1", "a local-network name"),
        ("http://127.0.0.1:8000/v1", None),
        ("http://localhost:11434/v1", None),
        ("https://api.openai.com/v1", None),
    ],
)
def test_which_hosts_a_key_may_not_go_to_unseen(url: str, concern: str | None) -> None:
    from shredfold.models.endpoints import host_concern

    assert host_concern(url) == concern


def test_what_looks_like_an_api_key() -> None:
    from shredfold.models.endpoints import looks_like_api_key

    assert all(map(looks_like_api_key, ["OPENAI_API_KEY", "DASHSCOPE_API_KEY", "vllm_apikey", "MY_API_KEY_2"]))
    assert not any(map(looks_like_api_key, ["AWS_SECRET_ACCESS_KEY", "PATH", "HOME", "GITHUB_TOKEN", "SSH_AUTH_SOCK"]))
