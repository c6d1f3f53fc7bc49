"""Shred stage: make every sample of a sample set, reusing stored ones by key."""

from __future__ import annotations

import logging

from shredfold.plan import Plan
from shredfold.shred.sample import SAMPLE_STAGE, make_sample
from shredfold.store import Store, atomic_write_json

log = logging.getLogger(__name__)


def run_sample_set(plan: Plan, key: str, out: str, store: Store) -> dict:
    sset = plan.sample_set(key)
    made = reused = 0
    for item in sset.items:
        if store.has(SAMPLE_STAGE, item.key):
            reused += 1
            continue
        with store.writing(SAMPLE_STAGE, item.key) as tmp:
            make_sample(item.doc, item.n, item.render, item.synthesis, item.seed, tmp)
        made += 1
        log.info("sample %s (%s, N=%d) made", item.key[:12], item.doc.doc_id, item.n)
    manifest = {
        "domain": sset.domain,
        "n": sset.n,
        "key": sset.key,
        "items": [{"key": i.key, "doc_id": i.doc.doc_id} for i in sset.items],
    }
    atomic_write_json(out, manifest)
    log.info("sample set %s/N%d: %d made, %d reused", sset.domain, sset.n, made, reused)
    return {"made": made, "reused": reused}
