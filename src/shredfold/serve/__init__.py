"""``shredfold serve``: a built-in model behind an OpenAI-compatible endpoint.

For tests and local use: ``POST /v1/chat/completions`` (plain or streamed, ``n`` choices),
``GET /v1/models`` and ``GET /v1/models/{id}``; every failure is answered with OpenAI's JSON
error object and its status, never a dropped connection (the shapes are in
:mod:`shredfold.chat_api`). Bodies are bounded (``max_body_bytes``, checked before reading).

The server turns the Chat Completions body back into the very
:class:`~shredfold.calls.Request` the model would get in-process: roles, texts, the
PNG bytes of each data-URL image, and the template inferred from the prompt's wording. The
oracle also needs the sample key, which is never sent; with ``--results`` the server finds
it from the image bytes (every sample's pieces and composite are indexed by SHA-256).

Faults are injected by a deterministic schedule (see :class:`FaultPlan`), and every request
is logged as a JSON line (body hash, arrival number, status, fault, in-flight count) so tests
can count what was answered.

Modules: :mod:`.server` (the server, and :func:`serve` that makes one), :mod:`.handler`
(HTTP: routes, bodies, replies and the scheduled faults), :mod:`.faults` (the schedule),
:mod:`.models` (what is served: a built-in model, the echo check, the item index the
oracle needs), :mod:`.log` (reading the request log) and :mod:`.errors`.
"""

from shredfold.serve.errors import ServeError
from shredfold.serve.faults import FAULTS, FaultPlan
from shredfold.serve.log import answered_twice, read_log
from shredfold.serve.models import Echo, ItemIndex, build_served_model, served_index
from shredfold.serve.server import MAX_BODY_BYTES, ChatServer, serve

__all__ = [
    "FAULTS",
    "MAX_BODY_BYTES",
    "ChatServer",
    "Echo",
    "FaultPlan",
    "ItemIndex",
    "ServeError",
    "answered_twice",
    "build_served_model",
    "read_log",
    "served_index",
    "serve",
]
