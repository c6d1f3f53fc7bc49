"""What ``shredfold serve`` serves: a built-in model, or the echo transport check; and the
index of stored sample images by which the oracle finds the item a request shows."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from shredfold.calls import Request, Response
from shredfold.models.base import Model
from shredfold.serve.errors import ServeError
from shredfold.spec import ModelConfig
from shredfold.store import Store


class Echo:
    """A server-only transport check: answers with the prompt's last line and image count.

    Not a benchmark contestant (it is not in the registry); used by ``bench/adapter_speed.py``
    to measure the HTTP path without a model's own cost.
    """

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def identity(self) -> dict[str, Any]:
        return {"adapter": "echo", "version": 1}

    def complete(self, request: Request) -> Response:
        last = request.text.strip().splitlines()[-1] if request.text.strip() else ""
        return Response(text=f"{last} [{len(request.images)} images]", served_model="echo")


class SampleIndex:
    """SHA-256 of every stored sample image → sample key; rebuilt when a hash is unknown.

    Besides the stored pieces and composite, each composite's paper-protocol rendition
    (:func:`~shredfold.shred.presentation.paper_image`) is indexed: it is made when a request
    is built, never stored."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_hash: dict[str, str] = {}
        self._seen: set[str] = set()
        self._rendered: set[str] = set()
        self._lock = threading.Lock()

    def _refresh(self, renditions: bool) -> None:
        from shredfold.shred.presentation import paper_image
        from shredfold.shred.sample_folder import COMPOSITE_FILE, SAMPLE_STAGE, load_public

        seen = self._rendered if renditions else self._seen
        for key in self.store.keys(SAMPLE_STAGE):
            if key in seen:
                continue
            obj = self.store.object(SAMPLE_STAGE, key)
            if not obj.has(COMPOSITE_FILE):  # a sample of an older layout: no request shows it
                seen.add(key)
                continue
            public = load_public(obj)
            # The paper rendition costs an encode per sample: only looked for when the
            # stored images do not match.
            images = [paper_image(public.composite)] if renditions else [*public.pieces, public.composite]
            for data in images:
                self._by_hash[hashlib.sha256(data).hexdigest()] = key
            seen.add(key)

    def item_for(self, images: list[bytes]) -> str | None:
        if not images:
            return None
        digest = hashlib.sha256(images[0]).hexdigest()
        with self._lock:
            for renditions in (False, True):
                if digest not in self._by_hash:
                    self._refresh(renditions)
            return self._by_hash.get(digest)


def build_served_model(name: str, results: Path | None) -> Model:
    if name == "echo":
        return Echo(ModelConfig(id="echo", adapter="oracle"))
    from shredfold.models import registry

    if name not in registry.builtin_names():
        raise ServeError(f"unknown model {name!r}; serve one of: echo, {', '.join(registry.builtin_names())}")
    store = Store((results or Path("results")) / "store")
    return registry.build_model(registry.builtin_config(name), store)

