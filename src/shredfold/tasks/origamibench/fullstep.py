"""OrigamiBench full-step synthesis: fold a blank sheet toward a target shape, one action per
turn, within ``step_limit`` turns.

- items: the designs used as targets (``fullstep_targets`` of them, a seeded choice), by tier;
  a design from a user's folder (one the package does not know,
  :mod:`shredfold.origami_bench.known`) is first validated by a set job of its own (does it
  fold flat within ``validate_timeout_s``?), so
  the validations run in parallel and are stored by key; a target's key names its
  validation's key, never its outcome, so keys do not wait for the jobs;
- build: solve each target's folded state once (:mod:`shredfold.origami_bench.targets`); a
  target whose design did not validate is dropped (its object says why; it is neither asked
  nor scored, and ``on_invalid: stop`` stops the validation job instead);
- ask: an episode of requests per target, each turn cached (the history is in the request,
  so an episode replays exactly); the finished episode is stored by key;
- score: QE (share of accepted, outline-changing actions), GS (silhouette IoU after the
  best of the square's symmetries), SS (CLIP similarity, when weights are configured, with
  ``ss_weights`` naming them by hash).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from shredfold.calls import ModelCallError
from shredfold.models.asker import CachedAsker
from shredfold.origami import ENGINE_VERSION
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.prompts import VERSION as PROMPT_VERSION
from shredfold.origami_bench.targets import TARGET_STAGE, target_key
from shredfold.progress import current as current_progress
from shredfold.spec import ResolvedSpec, spec_error_at
from shredfold.store import content_key
from shredfold.tasks.base import (
    Cell,
    Column,
    DataCard,
    ItemSet,
    JobContext,
    LeftOut,
    PlanContext,
    Row,
    Table,
    build_each,
    fill,
)
from shredfold.tasks.manifest import ManifestRow
from shredfold.tasks.metric import Eq, Headline, Scope
from shredfold.tasks.origamibench import common
from shredfold.tasks.origamibench.common import GS, INVALID_RATE, QE, SS, SS_WEIGHTS, STEPS
from shredfold.tasks.registry import register

EPISODE_STAGE, EPISODE_VERSION = "origami_episode", 1
VALIDATION_STAGE, VALIDATION_VERSION = "origami_validation", 1

EXPORT_COLUMNS = (
    Column("key", "string", "the target's content key (results/store/origami_target/<key>)"),
    Column("set_key", "string", "the key of its item set (one tier)"),
    *common.DESIGN_COLUMNS,
    Column("target", "image", "the folded design to reach, drawn as the model sees it (PNG)"),
    Column("target_fold", "string", "the target's folded state as a FOLD file (JSON), or null where "
           "this engine finds no layer order (known to fold flat from Flat-Folder's results)"),
    Column("sequence", "string", "the design's fold sequence (JSON list of actions), or null"),
    Column("flat_foldable", "bool", "whether the layer solver found the design flat-foldable"),
)


class Target(BaseModel):
    """A full-step item: a design to fold, keyed by its target object (or, in a validation
    set, the design to validate, keyed by its validation)."""

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


def validation_key(design: Design, timeout: float) -> str:
    return content_key(VALIDATION_STAGE, VALIDATION_VERSION, {"timeout_s": timeout, "engine": ENGINE_VERSION}, [design.key])


def needs_validation(design: Design) -> bool:
    """A design from a user's folder that the package does not know (Flat-Folder's designs
    found there are ``flat_folder`` designs, validated ahead of time)."""
    return design.source == "folder"


def validation_problem(design: Design, timeout: float, store: Any) -> str | None:
    """Why a design that needed validation cannot be a target (None: it folds flat), as its
    validation job stored it."""
    return store.get_json(VALIDATION_STAGE, validation_key(design, timeout), "result.json")["problem"]


def target_dropped(store: Any, key: str) -> str | None:
    """Why a built target was dropped (None: it was not)."""
    return store.get_json(TARGET_STAGE, key, "meta.json").get("dropped")


def dropped_targets(item_sets: Sequence[ItemSet], store: Any) -> dict[str, tuple[Design, str]]:
    """The built targets of ``item_sets`` that were dropped: key -> (design, why)."""
    out: dict[str, tuple[Design, str]] = {}
    for s in item_sets:
        for item in s.items:
            if store.has(TARGET_STAGE, item.key) and (why := target_dropped(store, item.key)):
                out[item.key] = (item.design, why)
    return out


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
    board = common.board(
        QE, common.by_tier(QE), GS, common.by_tier(GS), SS, common.by_tier(SS), SS_WEIGHTS, STEPS, INVALID_RATE,
        scopes=(Scope((Eq("task", "fullstep"),)),),
    )
    breakdown = common.breakdown(QE, GS, SS, SS_WEIGHTS, STEPS, INVALID_RATE)
    headlines = (Headline("gs", common.DESIGN), Headline("qe", common.DESIGN))

    def item_sets(self, ctx: PlanContext) -> list[ItemSet]:
        ob = ctx.spec.spec.origami
        if ob is None or "fullstep" not in ob.tasks:
            return []

        timeout = ob.designs.validate_timeout_s

        def make() -> list[Target]:
            designs = list(common.catalogue(ctx).designs)
            chosen = fullstep_designs(designs, ob.fullstep_targets, ctx.spec.spec.seed)
            return [
                Target(key=target_key(d, ob.image_size, validation_key(d, timeout) if needs_validation(d) else None), design=d)
                for d in chosen
            ]

        what = {"task": "fullstep", "targets": ob.fullstep_targets, "size": ob.image_size, "validate_timeout_s": timeout}
        targets = common.planned_items(ctx, what, Target, make)
        checks = {}
        for t in targets:
            if needs_validation(t.design) and t.design.key not in checks:
                vkey = validation_key(t.design, timeout)
                labels = {"task": "validate", "tier": t.tier}
                item = Target(key=vkey, design=t.design)
                checks[t.design.key] = ItemSet(self.name, vkey, labels, (item,), fill(common.LAYOUT.set, labels), asked=False)
        sets = common.tier_sets(self.name, "fullstep", ob.image_size, [(t.key, t) for t in targets])
        sets = [
            replace(s, needs=tuple(dict.fromkeys(checks[t.design.key].key for t in s.items if t.design.key in checks)))
            for s in sets
        ]
        return [*checks.values(), *sets]

    def query_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return {**common.run_params(spec), "env": env_params(spec)}

    def build(self, item_set: ItemSet, job: JobContext) -> dict[str, int]:
        from shredfold.origami_bench.targets import drop_target, solve_target

        ob = common.origami_spec(job.spec)
        timeout = ob.designs.validate_timeout_s
        if item_set.labels["task"] == "validate":
            return self._validate(item_set, job)

        def make(t: Target, tmp: Any) -> None:
            problem = validation_problem(t.design, timeout, job.store) if needs_validation(t.design) else None
            if problem is None:
                solve_target(t.design, ob.image_size, tmp)
            else:
                job.log.info("target %s (%s) dropped: %s", t.key[:12], t.design.id, problem)
                drop_target(t.design, problem, tmp)

        return build_each(item_set.items, TARGET_STAGE, job.store, make)

    def _validate(self, item_set: ItemSet, job: JobContext) -> dict[str, int]:
        """A validation set (one design): solve it within the spec's time, store the verdict;
        with ``on_invalid: stop`` a design that does not validate stops the run here, named
        in one line (the verdict stays stored: changing to ``skip`` costs no new solve)."""
        from shredfold.origami_bench.designs import flat_fold_problem

        ob = common.origami_spec(job.spec)
        timeout = ob.designs.validate_timeout_s

        def make(t: Target, tmp: Any) -> None:
            problem = flat_fold_problem(t.design, timeout)
            verdict = {"design": t.design.id, "design_key": t.design.key, "problem": problem, "timeout_s": timeout, "engine_version": ENGINE_VERSION}
            (tmp / "result.json").write_text(json.dumps(verdict, indent=1))

        counts = build_each(item_set.items, VALIDATION_STAGE, job.store, make)
        for t in item_set.items:
            problem = validation_problem(t.design, timeout, job.store)
            where = t.design.origin.path if t.design.origin is not None else t.design.id
            if problem is not None and ob.designs.on_invalid == "stop":
                raise spec_error_at(
                    job.spec.path, ("origami", "designs"),
                    f"{where}: {problem} (set origami.designs.on_invalid: skip to leave it out)",
                )  # fmt: skip
            if problem is not None:
                job.log.warning("design %s left out (on_invalid: skip): %s", where, problem)
            else:
                job.log.info("design %s: folds flat", where)
        return counts

    def left_out(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet], store: Any) -> LeftOut | None:
        """The targets the set jobs dropped (their design's validation found it does not fold
        flat), named within their folder: the leaderboard's notes; when no target is left,
        the error that says so."""
        dropped = dropped_targets(item_sets, store)
        if not dropped:
            return None
        roots = common.design_roots(spec)
        named = sorted({f"{common.design_name(d, roots)}: {why}" for d, why in dropped.values()})
        note = f"origami.designs: {len(named)} design(s) left out by their validation jobs (on_invalid: skip): " + "; ".join(named)
        planned = {i.key for s in item_sets for i in s.items}
        if planned - dropped.keys():
            return LeftOut(note)
        return LeftOut(note, str(spec_error_at(
            spec.path, ("origami", "designs"),
            f"no usable design: every one of {len(named)} target design(s) was left out by its validation job "
            "(on_invalid: skip): " + "; ".join(named),
        )))  # fmt: skip

    def ask(self, cell: Cell, asker: CachedAsker, job: JobContext) -> list[ManifestRow]:
        rows: list[ManifestRow] = []
        for ikey in cell.item_set.item_keys:
            if target_dropped(job.store, ikey):
                continue  # its design did not validate: nothing to fold
            try:
                rows.append(self._episode(cell, ikey, asker, job))
            except ModelCallError as exc:
                job.log.warning("%s: item %s failed: %s", cell.name, ikey[:12], exc)
                rows.append(ManifestRow(item=ikey, error=str(exc)))
            current_progress().advance(error=rows[-1].failed, cached=rows[-1].cached)
        return rows

    def _episode(self, cell: Cell, target: str, asker: CachedAsker, job: JobContext) -> ManifestRow:
        import numpy as np

        from shredfold.origami_bench.env import EnvConfig, render_folded, run_episode, silhouette

        ekey = episode_key(cell, target, job.spec)
        if job.store.has(EPISODE_STAGE, ekey):
            return ManifestRow(item=target, episode=ekey, error=None, cached=True)
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
        return ManifestRow(item=target, episode=ekey, error=None, cached=False)

    def score(self, cell: Cell, answers: Mapping[str, ManifestRow], job: JobContext) -> list[Row]:
        from shredfold.metrics.clip import load_clip

        clip, why = load_clip(common.origami_spec(job.spec).clip)
        if clip is None:
            job.log.warning("%s: SS left empty: %s", cell.name, why)
        rows: list[Row] = []
        for item in cell.item_set.items:
            if target_dropped(job.store, item.key):
                continue  # not a target a model was given
            q = answers.get(item.key) or ManifestRow.not_run(item.key)
            rows.append(self.row(cell, item.key, item.design, q, **self._score_episode(item.key, q, job, clip)))
            current_progress().advance(error=q.failed)
        return rows

    def _score_episode(self, ikey: str, q: ManifestRow, job: JobContext, clip: Any) -> dict[str, Any]:
        import io

        import numpy as np

        from shredfold.origami_bench.env import gs

        # None, not NaN: an undefined QE or an absent SS is an empty cell, ignored by averages
        out: dict[str, Any] = {"gs": 0.0, "qe": None, "ss": None, "steps": 0, "turns": 0, "invalid": 0}
        if not q.answered or not q.episode:
            return out
        episode = job.store.object(EPISODE_STAGE, q.episode)
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
        out.update(common.accounting([t["meta"] for t in turns]), response=q.episode)
        return out

    def response_keys(self, cell: Cell, answers: Mapping[str, ManifestRow], store: Any) -> list[str]:
        """Every turn's response, read from the episodes (each turn is a cached request)."""
        keys = []
        for q in answers.values():
            if q.answered and q.episode:
                record = store.get_json(EPISODE_STAGE, q.episode, "episode.json")
                keys += [t["meta"]["response"] for t in record["turns"] if t.get("meta", {}).get("response")]
        return keys

    # ------------------------------------------------------------ export (a data set)

    public_name = "origami_fullstep"

    def export_tables(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> list[Table]:
        return [Table(self.public_name, "test", EXPORT_COLUMNS, tuple(item_sets))] if item_sets else []

    def export_row(self, item: Target, item_set: ItemSet, job: JobContext) -> dict[str, Any] | None:
        target = job.store.object(TARGET_STAGE, item.key)
        meta = json.loads(target.read_text("meta.json"))
        if meta.get("dropped"):
            return None  # its design did not validate: no model is given it
        return {
            "key": item.key,
            "set_key": item_set.key,
            **common.design_columns(item.design),
            "target": target.read_bytes("target.png"),
            # a design known to fold flat only from Flat-Folder's results has no solved state
            "target_fold": target.read_text("state.fold") if target.has("state.fold") else None,
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
