"""The stored response envelope: one home for how an answer is kept in the store.

An answer lives under its response key (:func:`~shredfold.calls.response_key`) as
``object.json``: ``{"model": identity, "request": fingerprint, "response": Response}`` — the
request's fingerprint (texts and image hashes, never images or secrets), so anyone can see
what was asked. Reading verifies the object against its manifest.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from shredfold.calls import RESPONSE_STAGE, Request, Response
from shredfold.store import CorruptObjectError, Store

ENVELOPE = "object.json"


def store_response(
    store: Store, rkey: str, identity: dict[str, Any], request: Request, response: Response
) -> None:
    store.put_json(
        RESPONSE_STAGE,
        rkey,
        {
            "model": identity,
            "request": request.fingerprint(),
            "response": response.model_dump(mode="json"),
        },
        name=ENVELOPE,
    )


def has_response(store: Store, rkey: str) -> bool:
    return store.has(RESPONSE_STAGE, rkey)


def load_envelope(store: Store, rkey: str) -> dict[str, Any]:
    obj = store.get_json(RESPONSE_STAGE, rkey, ENVELOPE)
    if not isinstance(obj, dict) or "response" not in obj:
        raise CorruptObjectError(RESPONSE_STAGE, rkey, ENVELOPE, "not a response envelope")
    return obj


def load_response(store: Store, rkey: str) -> Response:
    """The stored answer; :class:`~shredfold.store.CorruptObjectError` if it was tampered with."""
    try:
        return Response.model_validate(load_envelope(store, rkey)["response"])
    except ValidationError as exc:
        raise CorruptObjectError(RESPONSE_STAGE, rkey, ENVELOPE, f"not a response ({exc.errors()[0]['msg']})") from None


def cached_response(store: Store, rkey: str) -> Response | None:
    return load_response(store, rkey) if has_response(store, rkey) else None
