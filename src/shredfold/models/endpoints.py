"""Where an OpenAI-compatible model lives: its normalised endpoint URL, and the per-endpoint
limits shared by parallel Snakemake jobs, as Snakemake resources.

Each HTTP endpoint (scheme-less ``host:port`` of a model's base URL) becomes a resource named
``endpoint_<host_port>``; every query job of a model on that endpoint takes one unit, and the
global amount is the smallest ``endpoint_slots`` among the models that share it. So two
models behind one vLLM server, or several OpenAI models under one key, never run more jobs
against it than allowed, however many ``--cores`` Snakemake has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # spec.py validates base_url with this module: no import cycle at run time
    from shredfold.spec import ModelConfig

DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_port(url: str) -> tuple[str, str, str]:
    """(scheme, host[:port], path) of a base URL, normalised; ValueError when it is not one."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError("must be an http:// or https:// URL")
    if parts.query or parts.fragment:
        # httpx appends "chat/completions" to the raw path, query included: it never worked.
        raise ValueError("must not have a query (?…) or fragment (#…)")
    host = parts.hostname  # lowercased; user name and password (if any) left out
    if not host:
        raise ValueError("has no host")
    port = parts.port  # ValueError for a port that is not a number in 0-65535
    if ":" in host:
        host = f"[{host}]"  # IPv6
    netloc = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    return scheme, netloc, parts.path.rstrip("/")


def check_base_url(url: str) -> str:
    """``url`` unchanged when it is a usable base URL; ValueError naming what is wrong."""
    _host_port(url)
    return url


def endpoint_url(url: str) -> str:
    """The endpoint a base URL names, as it enters a model's identity: lowercase scheme and
    host, the port only when not the scheme's default, the path without a trailing slash,
    and never a user name, password or query."""
    scheme, netloc, path = _host_port(url)
    return f"{scheme}://{netloc}{path}"


def endpoint_resource(config: ModelConfig) -> str | None:
    """The resource name of the model's endpoint, or None for in-process built-ins."""
    from shredfold.models import registry

    if not config.base_url or not registry.concurrent(config):
        return None
    where = _host_port(config.base_url)[1]
    return "endpoint_" + re.sub(r"[^A-Za-z0-9]+", "_", where).strip("_")


def endpoint_limits(models: Iterable[ModelConfig]) -> dict[str, int]:
    """Resource name → global amount (the strictest ``endpoint_slots`` of its models)."""
    limits: dict[str, int] = {}
    for m in models:
        name = endpoint_resource(m)
        if name is not None:
            limits[name] = min(limits.get(name, m.endpoint_slots), m.endpoint_slots)
    return limits
