"""Per-endpoint limits shared by parallel Snakemake jobs, as Snakemake resources.

Each HTTP endpoint (scheme-less ``host:port`` of a model's base URL) becomes a resource named
``endpoint_<host_port>``; every query job of a model on that endpoint takes one unit, and the
global amount is the smallest ``endpoint_slots`` among the models that share it. So two
models behind one vLLM server, or several OpenAI models under one key, never run more jobs
against it than allowed, however many ``--cores`` Snakemake has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from shredfold.spec import ModelConfig


def endpoint_resource(config: ModelConfig) -> str | None:
    """The resource name of the model's endpoint, or None for in-process built-ins."""
    from shredfold.models import registry

    if not config.base_url or not registry.concurrent(config):
        return None
    parts = urlsplit(config.base_url)
    where = parts.netloc or parts.path
    return "endpoint_" + re.sub(r"[^A-Za-z0-9]+", "_", where.lower()).strip("_")


def endpoint_limits(models: Iterable[ModelConfig]) -> dict[str, int]:
    """Resource name → global amount (the strictest ``endpoint_slots`` of its models)."""
    limits: dict[str, int] = {}
    for m in models:
        name = endpoint_resource(m)
        if name is not None:
            limits[name] = min(limits.get(name, m.endpoint_slots), m.endpoint_slots)
    return limits
