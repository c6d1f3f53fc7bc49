"""How ``shredfold serve`` finds the ShredBench item a request shows (for a served model that
reads its item's truth, the oracle): by the SHA-256 of the request's first image."""

from __future__ import annotations

import hashlib
import threading

from shredfold.store import Store


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
