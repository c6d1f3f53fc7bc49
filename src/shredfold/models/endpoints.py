"""Where an OpenAI-compatible model lives: its normalised endpoint URL, and the per-endpoint
limits shared by parallel Snakemake jobs, as Snakemake resources.

Each HTTP endpoint (scheme-less ``host:port`` of a model's base URL) becomes a resource named
``endpoint_<host_port>``; every query job of a model on that endpoint takes one unit, and the
global amount is the smallest ``endpoint_slots`` among the models that share it. So two
models behind one vLLM server, or several OpenAI models under one key, never run more jobs
against it than allowed, however many ``--cores`` Snakemake has.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # shredfold.spec.model validates base_url with this module: no import cycle at run time
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


# ---------------------------------------------------------------- where a key is sent
# A model file shared by someone else names a variable and a host; the adapter sends that
# variable's value to that host. So a variable that is not named like an API key, or a key
# sent to a link-local, cloud-metadata or private address, needs the spec's own opt-in
# (``allow_keys``), and ``shredfold plan`` shows every variable → host pair.

_KEY_NAME = re.compile(r"API_?KEY", re.IGNORECASE)
# The instance-metadata services of the clouds (AWS/Azure/GCP/OpenStack, AWS IPv6, Alibaba).
METADATA_ADDRESSES = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200"})
METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"})


def looks_like_api_key(name: str) -> bool:
    """Whether a variable's name says it holds an API key (``OPENAI_API_KEY``,
    ``VLLM_APIKEY``); ``AWS_SECRET_ACCESS_KEY``, ``PATH`` or ``HOME`` do not."""
    return bool(_KEY_NAME.search(name))


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names literally (also as one decimal or hex number, which
    resolvers accept for IPv4), or None for a name."""
    try:
        addr = ipaddress.ip_address(int(host, 0) if re.fullmatch(r"0x[0-9a-f]+|[0-9]+", host) else host)
    except ValueError:
        return None
    mapped = getattr(addr, "ipv4_mapped", None)
    return mapped if mapped is not None else addr


def host_concern(url: str) -> str | None:
    """Why a key sent to this base URL's host needs an opt-in, or None: a cloud metadata
    service, a link-local or a private (or reserved, unspecified) address, or a name of the
    local network. Loopback is the user's own machine (a local server) and needs none."""
    _host_port(url)  # a usable base URL, or ValueError
    host = urlsplit(url.strip()).hostname or ""
    addr = _address(host)
    if addr is None:
        name = host.lower().rstrip(".")
        if name in METADATA_NAMES:
            return "a cloud metadata service"
        if name.endswith((".internal", ".local", ".lan", ".intranet")):
            return "a local-network name"
        return None
    if str(addr) in METADATA_ADDRESSES:
        return "a cloud metadata service"
    if addr.is_loopback:
        return None
    if addr.is_link_local:
        return "a link-local address"
    if addr.is_private or addr.is_reserved or addr.is_unspecified or addr in ipaddress.ip_network("100.64.0.0/10"):
        return "a private address"
    return None


def key_host(url: str) -> str:
    """The host (and port, when not the default) a key goes to, as plan shows it."""
    return _host_port(url)[1]


@dataclass(frozen=True)
class KeyRoute:
    """Which variable a model sends to which host, and why that needs an opt-in (if it does)."""

    model: str
    env: str
    host: str
    concerns: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {"model": self.model, "env": self.env, "host": self.host, "concerns": list(self.concerns)}

    def line(self) -> str:
        why = f"  (opted in: {'; '.join(self.concerns)})" if self.concerns else ""
        return f"{self.model}: ${self.env} -> {self.host}{why}"


def key_routes(models: Iterable[ModelConfig]) -> list[KeyRoute]:
    """Every model that sends an environment variable, with where it goes."""
    out = []
    for m in models:
        if m.api_key_env and m.base_url:
            concerns = []
            if not looks_like_api_key(m.api_key_env):
                concerns.append(f"${m.api_key_env} is not named like an API key (…API_KEY)")
            where = host_concern(m.base_url)
            if where is not None:
                concerns.append(f"{key_host(m.base_url)} is {where}")
            out.append(KeyRoute(m.id, m.api_key_env, key_host(m.base_url), tuple(concerns)))
    return out
