"""OrigamiBench full-step synthesis: fold a blank sheet toward a target shape, one action per
turn, within ``step_limit`` turns.

- items: the designs used as targets (``fullstep_targets`` of them, a seeded choice), by tier;
- build: solve each target's folded state once (:mod:`shredfold.origami_bench.targets`);
- ask: an episode of requests per target, each turn cached (the history is in the request,
  so an episode replays exactly); the finished episode is stored by key;
- score: QE (share of accepted, outline-changing actions), GS (silhouette IoU after the
  best of the square's symmetries), SS (CLIP similarity, when weights are configured, with
  ``ss_weights`` naming them by hash).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from shredfold.calls import ModelCallError
from shredfold.models.asker import CachedAsker
from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.design import TIERS, Design
from shredfold.origami_bench.targets import TARGET_STAGE, target_key
from shredfold.prompts.origami import VERSION as PROMPT_VERSION
from shredfold.spec import ResolvedSpec
from shredfold.store import content_key
from shredfold.tasks import origami_common as common
from shredfold.tasks.base import (
    Cell,
    Column,
    DataCard,
    Headline,
    ItemSet,
    JobContext,
    PlanContext,
    Row,
    Table,
    build_each,
)
from shredfold.tasks.registry import register

EPISODE_STAGE, EPISODE_VERSION = "origami_episode", 1
D = common.DIGITS

EXPORT_COLUMNS = (
    Column("key", "string", "the target's content key (results/store/origami_target/<key>)"),
    Column("set_key", "string", "the key of its item set (one tier)"),
    *common.DESIGN_COLUMNS,
    Column("target", "image", "the folded design to reach, drawn as the model sees it (PNG)"),
    Column("target_fold", "string", "the target's folded state as a FOLD file (JSON)"),
    Column("sequence", "string", "the design's fold sequence (JSON list of actions), or null"),
    Column("flat_foldable", "bool", "whether the layer solver found the design flat-foldable"),
)


class Target(BaseModel):
    """A full-step item: a design to fold, keyed by its target object."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    design: Design

    @property
    def tier(self) -> str:
        return self.design.tier


def fullstep_designs(designs: Sequence[Design], limit: int | None, seed: int) -> list[Design]:
    from shredfold.origami_bench.mcq import rng_for

    if limit is None or limit >= len(designs):
        return list(designs)
    order = rng_for(content_key("origami_fullstep_pick", 1, {"seed": seed})).permutation(len(designs))
    keep = sorted(int(i) for i in order[:limit])
    return [designs[i] for i in keep]


def env_params(spec: ResolvedSpec) -> dict[str, Any]:
    ob = common.origami_spec(spec)
    return {"action": ob.action, "step_limit": ob.step_limit, "size": ob.image_size}


def episode_key(cell: Cell, target: str, spec: ResolvedSpec) -> str:
    params = {
        "model": cell.identity,
        "prompt": PROMPT_VERSION,
        "engine": ENGINE_VERSION,
        "env": env_params(spec),
    }
    return content_key(EPISODE_STAGE, EPISODE_VERSION, params, [target])


@register(order=20)
class OrigamiFullstepTask(common.OrigamiTask):
    name = "origami_fullstep"
    item_type = Target
    breakdown = common.breakdown(
        f"round(avg(qe), {D}) AS qe",
        f"round(avg(gs), {D}) AS gs",
        f"round(avg(ss), {D}) AS ss",
        "min(ss_weights) AS ss_weights",
        f"round(avg(steps), {D}) AS steps",
        f"round(sum(invalid) / nullif(sum(turns), 0), {D}) AS invalid_rate",
    )
    headlines = (
        Headline("origami_gs", "gs", common.DESIGN, where="task = 'fullstep'"),
        Headline("origami_qe", "qe", common.DESIGN, where="task = 'fullstep'"),
    )

    def item_sets(self, ctx: PlanContext) -> list[ItemSet]:
        ob = ctx.spec.spec.origami
        if ob is None or "fullstep" not in ob.tasks:
            return []

        def make() -> list[Target]:
            designs = list(common.catalogue(ctx).designs)
            chosen = fullstep_designs(designs, ob.fullstep_targets, ctx.spec.spec.seed)
            return [Target(key=target_key(d, ob.image_size), design=d) for d in chosen]

        what = {"task": "fullstep", "targets": ob.fullstep_targets, "size": ob.image_size}
        targets = common.planned_items(ctx, what, Target, make)
        return common.tier_sets(self.name, "fullstep", ob.image_size, [(t.key, t) for t in targets])

    def query_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return {**common.run_params(spec), "env": env_params(spec)}

    def build(self, item_set: ItemSet, job: JobContext) -> dict[str, int]:
        from shredfold.origami_bench.targets import solve_target

        size = common.origami_spec(job.spec).image_size
        return build_each(item_set.items, TARGET_STAGE, job.store, lambda t, tmp: solve_target(t.design, size, tmp))

    def ask(self, cell: Cell, asker: CachedAsker, job: JobContext) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for ikey in cell.item_set.item_keys:
            try:
                rows.append(self._episode(cell, ikey, asker, job))
            except ModelCallError as exc:
                job.log.warning("%s: item %s failed: %s", cell.name, ikey[:12], exc)
                rows.append({"item": ikey, "error": str(exc)})
        return rows

    def _episode(self, cell: Cell, target: str, asker: CachedAsker, job: JobContext) -> dict[str, Any]:
        import numpy as np

        from shredfold.origami_bench.env import EnvConfig, render_folded, run_episode, silhouette

        ekey = episode_key(cell, target, job.spec)
        if job.store.has(EPISODE_STAGE, ekey):
            return {"item": target, "episode": ekey, "error": None, "cached": True}
        ob = common.origami_spec(job.spec)
        env = EnvConfig(kind=ob.action, step_limit=ob.step_limit, image_size=ob.image_size)
        target_png = job.store.read_bytes(TARGET_STAGE, target, "target.png")
        episode = run_episode(target_png, env, asker, item=target)
        if episode.error is not None:
            raise ModelCallError(episode.error)
        with job.store.writing(EPISODE_STAGE, ekey) as tmp:
            (tmp / "episode.json").write_text(json.dumps(episode.record(), indent=1, allow_nan=False))
            (tmp / "final.png").write_bytes(render_folded(episode.final, env.image_size))
            np.save(tmp / "silhouette.npy", silhouette(episode.final, env.image_size))
        return {"item": target, "episode": ekey, "error": None, "cached": False}

    def score(self, cell: Cell, answers: Mapping[str, dict[str, Any]], job: JobContext) -> list[Row]:
        from shredfold.metrics.clip import load_clip

        clip, why = load_clip(common.origami_spec(job.spec).clip)
        if clip is None:
            job.log.warning("%s: SS left empty: %s", cell.name, why)
        rows: list[Row] = []
        for item in cell.item_set.items:
            q = answers.get(item.key, {"error": "not run"})
            rows.append(self.row(cell, item.key, item.design, q, **self._score_episode(item.key, q, job, clip)))
        return rows

    def _score_episode(self, ikey: str, q: Mapping[str, Any], job: JobContext, clip: Any) -> dict[str, Any]:
        import io

        import numpy as np

        from shredfold.origami_bench.env import gs

        # None, not NaN: an undefined QE or an absent SS is an empty cell, ignored by averages
        out: dict[str, Any] = {"gs": 0.0, "qe": None, "ss": None, "steps": 0, "turns": 0, "invalid": 0}
        if q.get("error") is not None or not q.get("episode"):
            return out
        episode = job.store.object(EPISODE_STAGE, q["episode"])
        record = json.loads(episode.read_text("episode.json"))
        turns = record["turns"]
        actions = [t for t in turns if t["reason"] != "stop"]
        target = np.load(io.BytesIO(job.store.read_bytes(TARGET_STAGE, ikey, "silhouette.npy")))
        final = np.load(io.BytesIO(episode.read_bytes("silhouette.npy")))
        out["gs"] = gs(final, target)
        out["qe"] = sum(t["effective"] for t in actions) / len(actions) if actions else None
        out["steps"] = len(actions)
        out["turns"] = len(turns)
        out["invalid"] = sum(not t["valid"] for t in turns)
        out["stopped"] = bool(record["stopped"])
        if clip is not None:
            target_png = job.store.read_bytes(TARGET_STAGE, ikey, "target.png")
            out["ss"] = round(clip.similarity(episode.read_bytes("final.png"), target_png), 6)
            out["ss_weights"] = clip.label
        out.update(common.accounting([t["meta"] for t in turns]), response=q["episode"])
        return out

    def response_keys(self, cell: Cell, answers: Mapping[str, dict[str, Any]], store: Any) -> list[str]:
        """Every turn's response, read from the episodes (each turn is a cached request)."""
        keys = []
        for q in answers.values():
            if q.get("episode") and not q.get("error"):
                record = store.get_json(EPISODE_STAGE, q["episode"], "episode.json")
                keys += [t["meta"]["response"] for t in record["turns"] if t.get("meta", {}).get("response")]
        return keys

    def leaderboard(self, item_sets: Sequence[ItemSet]) -> tuple[list[str], list[str]]:
        full = "task = 'fullstep'"
        cols = []
        for m in ("qe", "gs", "ss"):
            cols.append(f"round(avg({m}) FILTER (WHERE {full}), {D}) AS origami_{m}")
            cols += [
                f"round(avg({m}) FILTER (WHERE {full} AND tier = '{t}'), {D}) AS origami_{m}_{t}"
                for t in TIERS
            ]
        cols += [
            f"min(ss_weights) FILTER (WHERE {full}) AS origami_ss_weights",
            f"round(avg(steps) FILTER (WHERE {full}), {D}) AS origami_steps",
            f"round(sum(invalid) FILTER (WHERE {full}) / "
            f"nullif(sum(turns) FILTER (WHERE {full}), 0), {D}) AS origami_invalid_rate",
        ]
        return cols, common.LEADERBOARD_TRAILER

    # ------------------------------------------------------------ export (a data set)

    public_name = "origami_fullstep"

    def export_tables(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> list[Table]:
        return [Table(self.public_name, "test", EXPORT_COLUMNS, tuple(item_sets))] if item_sets else []

    def export_row(self, item: Target, item_set: ItemSet, job: JobContext) -> dict[str, Any]:
        target = job.store.object(TARGET_STAGE, item.key)
        meta = json.loads(target.read_text("meta.json"))
        return {
            "key": item.key,
            "set_key": item_set.key,
            **common.design_columns(item.design),
            "target": target.read_bytes("target.png"),
            "target_fold": target.read_text("state.fold"),
            "sequence": None if meta["sequence"] is None else json.dumps(meta["sequence"], sort_keys=True),
            "flat_foldable": bool(meta["flat_foldable"]),
        }

    def export_card(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> DataCard:
        ob = common.origami_spec(spec)
        designs = {i.design.key: i.design for s in item_sets for i in s.items}
        summary = (
            "OrigamiBench full-step synthesis: fold a blank square toward `target`, one action "
            f"per turn ({ob.action} actions), within {ob.step_limit} turns; scored by QE (share "
            "of accepted, outline-changing actions), GS (silhouette IoU after the best of the "
            "square's symmetries) and SS (CLIP similarity). The episode is played in shredfold's "
            "environment (`shredfold serve-env`, the Gymnasium and TRL environments)."
        )
        facts = {**common.origami_facts(spec), **env_params(spec)}
        return DataCard(summary, common.design_licences(list(designs.values())), facts)
