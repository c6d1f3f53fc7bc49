"""OrigamiBench jobs: build a set's items, run a model on a cell, score a cell into Parquet.

- ``run_origami_set``: solve each full-step target once (target image, silhouette, folded
  state) or build each multiple-choice item (five pictures and the answer), stored by key.
- ``run_origami_cell``: ask one model about every item of a set. Each request is cached by
  response key, so a re-run replays MCQ answers and whole episodes without a single call;
  finished episodes are also stored by key.
- ``score_origami_cell``: accuracy (MCQ), QE / GS / SS, steps and invalid actions (full-step).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from shredfold.models.base import (
    RESPONSE_STAGE,
    Model,
    ModelCallError,
    Request,
    Response,
    response_key,
)
from shredfold.models.registry import build_model
from shredfold.origami import ENGINE_VERSION
from shredfold.origami.env import EnvConfig, render_folded, run_episode, silhouette
from shredfold.origami.tasks import (
    MCQ_STAGE,
    TARGET_STAGE,
    StateCache,
    build_mcq,
    read_mcq,
    solve_target,
    write_mcq,
)
from shredfold.plan import Cell, Plan
from shredfold.prompts.origami import VERSION as PROMPT_VERSION
from shredfold.prompts.origami import AnswerError, mcq_request, parse_mcq
from shredfold.stages.query import (
    ReplayOnlyError,
    cached_response,
    replay_only_from_env,
    store_response,
    write_manifest,
)
from shredfold.stages.score import write_cell_table
from shredfold.store import Store, atomic_write_json, content_key, load_json

log = logging.getLogger(__name__)

EPISODE_STAGE, EPISODE_VERSION = "origami_episode", 1


# ---------------------------------------------------------------- set job


def run_origami_set(plan: Plan, key: str, out: str, store: Store) -> dict[str, int]:
    oset = plan.origami_set(key)
    ob = plan.spec.spec.origami
    assert ob is not None
    made = reused = 0
    cache = StateCache()
    designs = None
    for item, ikey in zip(oset.items, oset.item_keys, strict=True):
        stage = TARGET_STAGE if oset.task == "fullstep" else MCQ_STAGE
        if store.has(stage, ikey):
            reused += 1
            continue
        with store.writing(stage, ikey) as tmp:
            if oset.task == "fullstep":
                solve_target(item, ob.image_size, str(tmp))
            else:
                if designs is None:
                    from shredfold.origami.designs import load_designs

                    designs = load_designs(ob, plan.spec.spec.seed, store)
                write_mcq(build_mcq(item, designs, ob.image_size, cache), str(tmp))
        made += 1
    atomic_write_json(
        out, {"task": oset.task, "tier": oset.tier, "key": oset.key, "items": list(oset.item_keys)}
    )
    log.info("origami set %s/%s: %d made, %d reused", oset.task, oset.tier, made, reused)
    return {"made": made, "reused": reused}


# ---------------------------------------------------------------- model calls, cached


class CachedAsker:
    """Answers requests from the response cache, calling the model only for new ones."""

    def __init__(self, cell: Cell, store: Store, replay_only: bool, model: Model | None = None) -> None:
        self.cell, self.store, self.replay_only = cell, store, replay_only
        self._model = model
        self.called = self.cached = 0

    def model(self) -> Model:
        if self._model is None:
            self._model = build_model(self.cell.model, self.store)
        return self._model

    def __call__(self, request: Request) -> tuple[str, dict[str, Any]]:
        rkey = response_key(self.cell.identity, request)
        hit = cached_response(self.store, rkey)
        if hit is not None:
            self.cached += 1
            return hit.text, _meta(rkey, hit, True)
        if self.replay_only:
            raise ReplayOnlyError(f"{self.cell.name}: request {rkey[:12]} is not cached (replay-only)")
        t0 = time.perf_counter()
        response = self.model().complete(request)
        if not response.latency_s:
            response.latency_s = time.perf_counter() - t0
        store_response(self.store, rkey, self.cell.identity, request, response)
        self.called += 1
        return response.text, _meta(rkey, response, False)

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if close is not None:
            close()


def _meta(rkey: str, r: Response, cached: bool) -> dict[str, Any]:
    return {
        "response": rkey,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "latency_s": r.latency_s,
        "cost_usd": r.cost_usd,
        "cached": cached,
    }


# ---------------------------------------------------------------- run job


def episode_key(cell: Cell, target_key: str, env: EnvConfig) -> str:
    params = {
        "model": cell.identity,
        "prompt": PROMPT_VERSION,
        "engine": ENGINE_VERSION,
        "env": {"action": env.kind, "step_limit": env.step_limit, "size": env.image_size},
    }
    return content_key(EPISODE_STAGE, EPISODE_VERSION, params, [target_key])


def run_origami_cell(
    plan: Plan,
    key: str,
    out: str,
    store: Store,
    replay_only: bool | None = None,
    model: Model | None = None,
) -> dict[str, int]:
    cell = plan.cell(key)
    oset = cell.origami_set
    ob = plan.spec.spec.origami
    assert oset is not None and ob is not None
    replay_only = replay_only_from_env() if replay_only is None else replay_only
    asker = CachedAsker(cell, store, replay_only, model)
    rows: list[dict[str, Any]] = []
    errors = 0
    env = EnvConfig(kind=ob.action, step_limit=ob.step_limit, image_size=ob.image_size)
    try:
        for ikey in oset.item_keys:
            try:
                if oset.task == "fullstep":
                    rows.append(_episode_row(cell, ikey, env, asker, store))
                else:
                    rows.append(_mcq_row(ikey, asker, store))
            except ModelCallError as exc:
                log.warning("%s: item %s failed: %s", cell.name, ikey[:12], exc)
                rows.append({"item": ikey, "error": str(exc)})
            errors += rows[-1].get("error") is not None
    finally:
        asker.close()
    counts = {"called": asker.called, "cached": asker.cached, "errors": errors}
    write_manifest(out, cell, counts, rows)
    return counts


def _mcq_row(ikey: str, ask: Callable[[Request], tuple[str, dict[str, Any]]], store: Store) -> dict[str, Any]:
    item = read_mcq(str(store.path(MCQ_STAGE, ikey)))
    text, meta = ask(mcq_request(item.reference, list(item.options), item=ikey))
    return {"item": ikey, "error": None, **meta}


def _episode_row(cell: Cell, target_key: str, env: EnvConfig, asker: CachedAsker, store: Store) -> dict[str, Any]:
    ekey = episode_key(cell, target_key, env)
    if store.has(EPISODE_STAGE, ekey):
        return {"item": target_key, "episode": ekey, "error": None, "cached": True}
    target_png = store.read_bytes(TARGET_STAGE, target_key, "target.png")
    episode = run_episode(target_png, env, asker, item=target_key)
    if episode.error is not None:
        raise ModelCallError(episode.error)
    with store.writing(EPISODE_STAGE, ekey) as tmp:
        (tmp / "episode.json").write_text(json.dumps(episode.record(), indent=1, allow_nan=False))
        (tmp / "final.png").write_bytes(render_folded(episode.final, env.image_size))
        np.save(tmp / "silhouette.npy", silhouette(episode.final, env.image_size))
    return {"item": target_key, "episode": ekey, "error": None, "cached": False}


# ---------------------------------------------------------------- score job

SCHEMA = pa.schema(
    [
        ("item", pa.string()),
        ("design", pa.string()),
        ("category", pa.string()),
        ("model", pa.string()),
        ("reference", pa.bool_()),
        ("benchmark", pa.string()),
        ("domain", pa.string()),
        ("granularity", pa.int32()),
        ("tier", pa.string()),
        ("correct", pa.float64()),
        ("qe", pa.float64()),
        ("gs", pa.float64()),
        ("ss", pa.float64()),
        ("steps", pa.int32()),
        ("invalid", pa.int32()),
        ("turns", pa.int32()),
        ("stopped", pa.bool_()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("latency_s", pa.float64()),
        ("cost_usd", pa.float64()),
        ("cached", pa.bool_()),
        ("error", pa.string()),
        ("response", pa.string()),
    ]
)


def score_origami_cell(plan: Plan, key: str, run_manifest: str, out: str, store: Store) -> int:
    from shredfold.metrics.shape import aligned_iou

    cell = plan.cell(key)
    oset = cell.origami_set
    ob = plan.spec.spec.origami
    assert oset is not None and ob is not None
    by_item = {r["item"]: r for r in load_json(run_manifest)["items"]}
    clip = None
    if oset.task == "fullstep":
        from shredfold.metrics.clip import load_clip

        clip, why = load_clip(ob.clip)
        if clip is None:
            log.warning("%s: SS left empty: %s", cell.name, why)
    rows = []
    for obj, ikey in zip(oset.items, oset.item_keys, strict=True):
        q = by_item.get(ikey, {"error": "not run"})
        design = obj if oset.task == "fullstep" else obj.design
        row: dict[str, Any] = {
            "item": ikey,
            "design": design.id,
            "category": design.category,
            "model": cell.model.id,
            "reference": cell.model.reference,
            "benchmark": "origami",
            "domain": oset.task,
            "granularity": 0,
            "tier": oset.tier,
            "error": q.get("error"),
            "cached": bool(q.get("cached")),
        }
        if oset.task == "fullstep":
            row.update(_score_episode(ikey, q, store, clip, aligned_iou))
        else:
            row.update(_score_mcq(ikey, q, store))
        rows.append(row)
    write_cell_table(rows, SCHEMA, out)
    log.info("%s: %d rows scored", cell.name, len(rows))
    return len(rows)


def _score_mcq(ikey: str, q: dict[str, Any], store: Store) -> dict[str, Any]:
    out: dict[str, Any] = {"correct": 0.0, "steps": 1, "turns": 1, "invalid": 0}
    if q.get("error") is not None or not q.get("response"):
        return out
    response = Response.model_validate(store.get_json(RESPONSE_STAGE, q["response"])["response"])
    answer = store.get_json(MCQ_STAGE, ikey, "item.json")["answer"]
    try:
        out["correct"] = float(parse_mcq(response.text) == answer)
    except AnswerError:
        out["invalid"] = 1
    out.update(_accounting([response]), response=q["response"])
    return out


def _score_episode(ikey: str, q: dict[str, Any], store: Store, clip: Any, aligned_iou: Any) -> dict[str, Any]:
    # None, not NaN: an undefined QE or an absent SS is an empty cell, ignored by averages
    out: dict[str, Any] = {"gs": 0.0, "qe": None, "ss": None, "steps": 0, "turns": 0, "invalid": 0}
    if q.get("error") is not None or not q.get("episode"):
        return out
    folder = store.path(EPISODE_STAGE, q["episode"])
    record = json.loads((folder / "episode.json").read_text(encoding="utf-8"))
    turns = record["turns"]
    actions = [t for t in turns if t["reason"] != "stop"]
    target = np.load(store.path(TARGET_STAGE, ikey) / "silhouette.npy")
    final = np.load(folder / "silhouette.npy")
    out["gs"] = round(aligned_iou(final, target), 6)
    out["qe"] = sum(t["effective"] for t in actions) / len(actions) if actions else None
    out["steps"] = len(actions)
    out["turns"] = len(turns)
    out["invalid"] = sum(not t["valid"] for t in turns)
    out["stopped"] = bool(record["stopped"])
    if clip is not None:
        target_png = store.read_bytes(TARGET_STAGE, ikey, "target.png")
        out["ss"] = round(clip.similarity((folder / "final.png").read_bytes(), target_png), 6)
    metas = [t["meta"] for t in turns]
    out["input_tokens"] = sum(m.get("input_tokens", 0) for m in metas)
    out["output_tokens"] = sum(m.get("output_tokens", 0) for m in metas)
    out["latency_s"] = sum(m.get("latency_s", 0.0) for m in metas)
    out["cost_usd"] = sum(m.get("cost_usd", 0.0) for m in metas)
    out["response"] = q["episode"]
    return out


def _accounting(responses: list[Response]) -> dict[str, Any]:
    return {
        "input_tokens": sum(r.input_tokens for r in responses),
        "output_tokens": sum(r.output_tokens for r in responses),
        "latency_s": sum(r.latency_s for r in responses),
        "cost_usd": sum(r.cost_usd for r in responses),
    }
