"""OrigamiBench one-step multiple choice: which of four pictures is the reference state after
one more fold? Two variants: associative distractors (other designs) and causal ones (the
same sequence: a later or earlier step, the other assignment, a nearby line). The causal
prompt names the step made, so those distractors are wrong by the prompt, not only by priors.

- items: ``mcq_items`` item specs per variant over the designs with a fold sequence, shipped
  simple folds (:mod:`shredfold.origami_bench.simple_folds`) or a crease order
  (:mod:`shredfold.origami_bench.crease_order`), split by tier;
- build: fold and draw the reference and the four options (:mod:`shredfold.origami_bench.mcq`);
  options too close to another picture are replaced, and an item that cannot be made
  answerable from its pictures is dropped (its item.json says why);
- ask: one request per item that was not dropped;
- score: accuracy over those items; an unparsable answer counts as wrong and invalid.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shredfold.calls import ModelCallError
from shredfold.models.asker import CachedAsker
from shredfold.models.envelope import load_response
from shredfold.origami_bench import simple_folds
from shredfold.origami_bench.design import Design
from shredfold.origami_bench.items import MCQ_STAGE, MCQ_VERSION, McqSpec
from shredfold.origami_bench.prompts import LETTERS, AnswerError, mcq_request, parse_mcq
from shredfold.origami_bench.prompts import VERSION as PROMPT_VERSION
from shredfold.progress import current as current_progress
from shredfold.spec import ResolvedSpec, SpecError
from shredfold.tasks.base import (
    Cell,
    Column,
    DataCard,
    EvalItem,
    EvalScore,
    ItemSet,
    JobContext,
    PlanContext,
    Row,
    Table,
    build_each,
)
from shredfold.tasks.manifest import ManifestRow
from shredfold.tasks.metric import Eq, Headline, Scope
from shredfold.tasks.origamibench import common
from shredfold.tasks.registry import register

VARIANTS = ("mcq_assoc", "mcq_causal")
log = logging.getLogger(__name__)
# How an answer is marked: the JSON answer's letter must be the right option's.
SIGNATURE = f"origami-mcq:json-letter/exact/prompt:{PROMPT_VERSION}"


def mark(text: str, right: str) -> dict[str, float]:
    """An answer's marks: ``correct`` (1 or 0) and ``invalid`` (1 when it does not parse,
    which also counts as wrong)."""
    try:
        return {"correct": float(parse_mcq(text) == right), "invalid": 0.0}
    except AnswerError:
        return {"correct": 0.0, "invalid": 1.0}


EXPORT_COLUMNS = (
    Column("key", "string", "the item's content key (results/store/origami_mcq/<key>)"),
    Column("set_key", "string", "the key of its item set (a variant at one tier)"),
    Column("variant", "string", "mcq_assoc (distractors from other designs) or mcq_causal (the same sequence)"),
    *common.DESIGN_COLUMNS,
    Column("k", "int32", "folds in the reference state; the right option has one more"),
    Column("reference", "image", "the reference state (PNG)"),
    Column("options", "images", "options A, B, C, D (PNG), in the order the model sees them"),
    Column("answer", "string", "the right option's letter"),
    Column("option_kinds", "strings", "what each option is (answer, later, earlier, other-design, …)"),
    Column("step", "string", "mcq_causal: the step the prompt names (JSON); else null"),
    Column("system", "string", "the system message"),
    Column("prompt", "string", "the user message, sent with the reference and the four options"),
)


def check_enough(designs: list[Design], variant: str, ctx: PlanContext) -> None:
    """Fail at plan time, not in a job, when the designs cannot make this variant's items:
    every item needs a design with a fold sequence (or, for one without, a crease order, which
    the plan searches), and three distractor states drawn from the other designs' steps (the
    causal variant falls back on them too)."""
    pool = [d for d in designs if d.sequence]
    where = f"{ctx.spec.path}: origami.tasks: {variant}"
    if any(d.sequence is None for d in designs):
        return  # crease orders decide; plan_items says so if none is found
    if not pool:
        raise SpecError(f"{where} needs designs with a fold sequence (built-in or procedural); the spec's designs have none")
    total = sum(len(d.sequence or ()) for d in pool)
    short = [d.id for d in pool if total - len(d.sequence or ()) < 3]
    if variant == "mcq_assoc" and short:
        raise SpecError(
            f"{where} needs at least three folded states from other designs for each item's "
            f"distractors; {', '.join(short[:5])} would have fewer (add designs or procedural ones)"
        )


@register(order=10)
class OrigamiMcqTask(common.OrigamiTask):
    name = "origami_mcq"
    item_type = McqSpec
    # a column per variant the plan has: origami_mcq_assoc, origami_mcq_causal
    board = common.board(common.ACCURACY, scopes=tuple(Scope((Eq("task", v),), name=v, planned=True) for v in VARIANTS))
    breakdown = common.breakdown(common.ACCURACY)
    headlines = (Headline("accuracy", common.DESIGN),)

    def item_sets(self, ctx: PlanContext) -> list[ItemSet]:
        ob = ctx.spec.spec.origami
        if ob is None:
            return []
        out: list[ItemSet] = []
        for variant in ob.tasks:
            if variant not in VARIANTS:
                continue
            what = {"task": variant, "items": ob.mcq_items, "size": ob.image_size, "version": MCQ_VERSION,
                    "simple_folds": simple_folds.data_digest()}  # fmt: skip
            specs = common.planned_items(ctx, what, McqSpec, lambda v=variant: self._plan(ctx, v))
            out += common.tier_sets(self.name, variant, ob.image_size, [(s.key, s) for s in specs])
        return out

    def _plan(self, ctx: PlanContext, variant: str) -> list[McqSpec]:
        from shredfold.origami_bench.crease_order import OrderBook
        from shredfold.origami_bench.mcq import plan_mcq

        ob = common.origami_spec(ctx.spec)
        designs = list(common.catalogue(ctx).designs)
        check_enough(designs, variant, ctx)
        orders = OrderBook(ctx.store, write=ctx.write)
        specs = plan_mcq(designs, variant, ob.mcq_items, ctx.spec.spec.seed, ob.image_size, orders)  # type: ignore[arg-type]
        missing = orders.not_found()
        if missing:
            by_key = {d.key: d.id for d in designs}
            log.info("%s: %d design(s) without a crease order:\n  %s", variant, len(missing),
                     "\n  ".join(f"{by_key.get(k, k[:12])}: {why}" for k, why in sorted(missing.items())))  # fmt: skip
        if not specs and ob.mcq_items:
            raise SpecError(
                f"{ctx.spec.path}: origami.tasks: {variant}: no design has a fold sequence or a crease "
                f"order ({len(missing)} searched without one)"
            )
        return specs

    def query_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return common.run_params(spec)

    def build(self, item_set: ItemSet, job: JobContext) -> dict[str, int]:
        from shredfold.origami_bench.catalogue import load_catalogue
        from shredfold.origami_bench.crease_order import OrderBook
        from shredfold.origami_bench.mcq import McqDropped, StateCache, build_mcq, write_mcq

        ob = common.origami_spec(job.spec)
        cache = StateCache(OrderBook(job.store, write=True))
        designs: list[Any] = []  # read on the first item that must be built

        def make(item: McqSpec, tmp: Path) -> None:
            if not designs:
                designs.extend(load_catalogue(ob, job.spec.spec.seed, job.store).designs)
            try:
                built: Any = build_mcq(item, designs, ob.image_size, cache)
            except McqDropped as exc:
                job.log.info("item %s (%s, step %d) dropped: %s", item.key[:12], item.design.id, item.k, exc)
                built = exc
            write_mcq(built, tmp)

        return build_each(item_set.items, MCQ_STAGE, job.store, make)

    def ask(self, cell: Cell, asker: CachedAsker, job: JobContext) -> list[ManifestRow]:
        from shredfold.origami_bench.mcq import read_mcq

        rows: list[ManifestRow] = []
        for ikey in cell.item_set.item_keys:
            item = read_mcq(job.store.object(MCQ_STAGE, ikey))
            if item is None:
                current_progress().advance()
                continue  # dropped at build time: nothing to ask
            try:
                answer = asker.ask(mcq_request(item.reference, list(item.options), item=ikey, step=item.step))
            except ModelCallError as exc:
                job.log.warning("%s: item %s failed: %s", cell.name, ikey[:12], exc)
                rows.append(ManifestRow(item=ikey, error=str(exc)))
                current_progress().advance(error=True)
                continue
            rows.append(ManifestRow(item=ikey, error=None, **answer.meta))
            current_progress().advance(cached=rows[-1].cached)
        return rows

    def score(self, cell: Cell, answers: Mapping[str, ManifestRow], job: JobContext) -> list[Row]:
        rows: list[Row] = []
        for item in cell.item_set.items:
            meta = job.store.get_json(MCQ_STAGE, item.key, "item.json")
            listed = answers.get(item.key)
            current_progress().advance(error=listed is not None and listed.failed)
            if "dropped" in meta:
                continue  # not an item a model could answer from its pictures
            q = listed or ManifestRow.not_run(item.key)
            out: dict[str, Any] = {"correct": 0.0, "steps": 1, "turns": 1, "invalid": 0}
            if q.answered and q.response:
                response = load_response(job.store, q.response)
                marks = mark(response.text, meta["answer"])
                out.update(correct=marks["correct"], invalid=int(marks["invalid"]))
                out.update(
                    input_tokens=response.input_tokens,
                    output_tokens=response.output_tokens,
                    latency_s=response.latency_s,
                    cost_usd=response.cost_usd,
                    response=q.response,
                )
            rows.append(self.row(cell, item.key, item.design, q, **out))
        return rows

    def response_keys(self, cell: Cell, answers: Mapping[str, ManifestRow], store: Any) -> list[str]:
        return [q.response for q in answers.values() if q.answered and q.response]

    # ------------------------------------------------------------ export (a data set)

    public_name = "origami_mcq"

    def export_tables(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> list[Table]:
        by_variant = [(v, tuple(s for s in item_sets if s.labels["task"] == v)) for v in VARIANTS]
        return [Table(self.public_name, v, EXPORT_COLUMNS, sets) for v, sets in by_variant if sets]

    def export_row(self, item: McqSpec, item_set: ItemSet, job: JobContext) -> dict[str, Any] | None:
        from shredfold.origami_bench.mcq import read_mcq

        built = read_mcq(job.store.object(MCQ_STAGE, item.key))
        if built is None:
            return None  # dropped at build time: no model is asked it
        request = mcq_request(built.reference, list(built.options), item=item.key, step=built.step)
        return {
            "key": item.key,
            "set_key": item_set.key,
            "variant": item.variant,
            **common.design_columns(item.design),
            "k": item.k,
            "reference": built.reference,
            "options": list(built.options),
            "answer": built.answer,
            "option_kinds": list(built.kinds),
            "step": None if built.step is None else json.dumps(built.step, sort_keys=True),
            "system": request.messages[0].text,
            "prompt": request.messages[1].text,
        }

    def export_card(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> DataCard:
        designs = {i.design.key: i.design for s in item_sets for i in s.items}
        summary = (
            "OrigamiBench one-step multiple choice: which of four pictures is the reference "
            "state after one more fold? Split `mcq_assoc`: distractors from other designs; "
            "`mcq_causal`: distractors from the same sequence (a later or earlier step, the "
            "other assignment, a nearby line), the prompt naming the step made. A row is the "
            "reference, the options A-D, the prompt and the right letter; the answer is a JSON "
            'object `{"answer": "<letter>"}`, scored as accuracy (an unparsable answer is wrong).'
        )
        return DataCard(summary, common.design_licences(list(designs.values())), common.origami_facts(spec))

    # ------------------------------------------------------------ eval (an Inspect AI task)

    def eval_item(self, row: Mapping[str, Any], options: Mapping[str, Any]) -> EvalItem:
        if options:
            raise ValueError(f"origami_mcq takes no option ({', '.join(sorted(options))} given); choose a variant by split")
        step = None if row["step"] is None else json.loads(row["step"])
        request = mcq_request(row["reference"], list(row["options"]), item=row["key"], step=step)
        if row["answer"] not in LETTERS:
            raise ValueError(f"item {row['key']}: answer {row['answer']!r} is not one of {LETTERS}")
        facts = {"answer": row["answer"], "variant": row["variant"], "design": row["design"], "tier": row["tier"]}
        return EvalItem(row["key"], request, row["answer"], facts)

    def eval_score(self, facts: Mapping[str, Any], answer: str) -> EvalScore:
        return EvalScore(mark(answer, facts["answer"]), answer, {"signature": SIGNATURE})
