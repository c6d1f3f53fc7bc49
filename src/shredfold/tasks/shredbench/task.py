"""ShredBench: read back a document that was rendered, cut into N pieces and scattered.

- items: every document of each domain at each granularity N (a sample each; a set is a
  domain at one N), or every sample of an outside set (``shred.samples``,
  :mod:`shredfold.shred.outside`), a set per domain and N it holds;
- build: render, cut and synthesise each sample (:mod:`shredfold.shred.sample`), or store
  an outside one (:mod:`shredfold.shred.outside_sample`);
- ask: one request per sample (the scraps as separate images, or one table-top image);
- score: NED, BLEU, ROUGE-L for every domain, TEDS / TEDS-S for tables.

A failed item is scored as an empty answer (NED 1, BLEU 0, …) and flagged in ``error``, so a
model cannot improve its averages by failing on hard items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from shredfold.calls import ModelCallError, Request
from shredfold.corpus.document import Document, Kind, Lang
from shredfold.models import registry
from shredfold.models.asker import CachedAsker, ReplayOnlyError
from shredfold.models.envelope import load_response
from shredfold.progress import Progress
from shredfold.progress import current as current_progress
from shredfold.shred.outside import OutsideRef, OutsideSample, OutsideSetError
from shredfold.shred.prompts import (
    PAPER_VERSION,
    build_request,
    paper_request,
    parse_answer,
    read_answer,
)
from shredfold.shred.prompts import VERSION as PROMPT_VERSION
from shredfold.shred.sample_folder import (
    SAMPLE_STAGE,
    load_hidden,
    load_layout,
    load_public,
    load_truth,
)
from shredfold.shred.sample_key import sample_key
from shredfold.spec import RenderSettings, ResolvedSpec, SynthesisSettings, spec_error_at
from shredfold.store import content_key
from shredfold.tasks.base import (
    Cell,
    Column,
    DataCard,
    EvalItem,
    EvalScore,
    ItemSet,
    JobContext,
    Layout,
    Licence,
    PlanContext,
    Row,
    Stage,
    Table,
    build_each,
    fill,
)
from shredfold.tasks.manifest import ManifestRow
from shredfold.tasks.metric import (
    ERRORS,
    ITEMS,
    LATENCY_DIGITS,
    Board,
    Breakdown,
    Eq,
    Field,
    Headline,
    IsNull,
    Metric,
    Ratio,
    Split,
    count,
    distinct,
    field_names,
    metrics_in,
    quantile,
    row_type,
    row_values,
    total,
)
from shredfold.tasks.registry import register


class ShredItem(BaseModel):
    """One sample: a document at one granularity, with the settings that shape it — or,
    for an outside sample (``outside``), the files it is made from (no render settings)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    doc: Document
    n: int
    render: RenderSettings | None = None
    synthesis: SynthesisSettings | None = None
    seed: int | None = None
    outside: OutsideRef | None = None

    @property
    def kind(self) -> Kind:
        return self.doc.kind

    @property
    def lang(self) -> Lang:
        return self.doc.lang


class ShredKeys(Row):
    """What names a ShredBench row's item (the row's first columns)."""

    item: str
    doc_id: str
    model: str
    reference: bool
    benchmark: str
    domain: str
    granularity: int
    kind: str
    lang: str
    protocol: str

    arrow_types: ClassVar[dict[str, str]] = {"granularity": "int32"}


class ShredTail(BaseModel):
    """How a ShredBench answer was scored, what it cost, whether it failed (the last columns)."""

    signature: str
    truncated: bool  # the answer was cut to bound a metric's cost (see shredfold.limits)
    truncation: str  # what was cut ("" when nothing)
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    cached: bool
    error: str | None
    response: str | None


TABLE_ROWS = Eq("kind", "table")
NED = Metric.score("ned", lower_is_better=True)
NED_RAW = Metric.score("ned_raw", lower_is_better=True)
ERROR_RATE = Metric("error_rate", Ratio(count("error"), count()))
# What :func:`score_text` returns for every answer, and the items' and errors' counts.
SCORES = (
    ITEMS, ERRORS, ERROR_RATE, NED, NED_RAW, Metric.score("bleu"), Metric.score("rouge_l"),
    Metric.score("teds", float, TABLE_ROWS), Metric.score("teds_s", float, TABLE_ROWS),
)  # fmt: skip
# The failure diagnostics (shredfold.shred.diagnostics, ``Diagnosis.columns``), empty where
# undefined (no answer, no cut word; an empty value is left out of its mean).
DIAGNOSED: tuple[Metric | Field, ...] = (
    Metric.score("omission", float | None),
    Metric.score("omission_small", float | None),
    Metric.score("omission_large", float | None),
    Metric.score("hallucination", float | None),
    Metric.score("order_tau", float | None),
    Field("cut_words", int | None, arrow="int32"),
    Metric.score("cut_word_recovery", float | None),
    Field("piece_omission", str | None),  # JSON: per piece (polygon order) area share, chars, omission
)
DIAGNOSTICS = metrics_in(DIAGNOSED)
# Latency over every answered item, cached or not: a stored answer keeps the latency it was
# measured with, so the columns do not depend on which run (or retry attempt) paid for it,
# and re-scoring from stored responses reproduces them exactly. Cost is what the answers cost.
COST = (
    Metric("input_tokens", total("input_tokens"), digits=None),
    Metric("output_tokens", total("output_tokens"), digits=None),
    Metric("cost_usd", total("cost_usd")),
    Metric("latency_p50_s", quantile("latency_s", 0.5, IsNull("error")), digits=LATENCY_DIGITS),
    Metric("latency_p95_s", quantile("latency_s", 0.95, IsNull("error")), digits=LATENCY_DIGITS),
)
# One protocol per plan; named so that two leaderboards are never compared blind.
PROTOCOL = Metric("protocol", distinct("protocol"), digits=None)

ShredRow = row_type("ShredRow", ShredKeys, (*SCORES, *DIAGNOSED), ShredTail, __name__,
                    "One answer to a ShredBench sample: its keys, scores and diagnostics, cost.")  # fmt: skip

# The unit of resampling: a document, with its variants at every N.
DOCUMENT = ("domain", "doc_id")


def diagnose_answer(pred: str, item: ShredItem, hidden: Mapping[str, Any], layout: Mapping[str, Any] | None) -> dict[str, Any]:
    """The failure diagnostics of one answer (see :mod:`shredfold.shred.diagnostics`): where the
    truth's characters lie comes from the layout stored with the sample, which pieces hold
    them from the sample's polygons."""
    from shredfold.limits import text_cap
    from shredfold.shred.diagnostics import diagnose
    from shredfold.shred.glyphs import PageGlyphs, skeleton

    if item.outside is not None or layout is None:
        return {}  # no polygons: nothing says which piece holds which character
    glyphs = PageGlyphs.from_json(dict(layout))
    page = hidden["page"]
    # bounded like the metrics: an answer far longer than the page cannot be found in it
    answer = skeleton(parse_answer(pred, item.kind), item.kind)[: text_cap(len(glyphs.chars))]
    d = diagnose(
        glyphs.chars, glyphs.boxes, glyphs.lines, glyphs.words, hidden["polygons"],
        float(page["width"] * page["height"]), answer, item.lang,
    )  # fmt: skip
    return d.columns()


def score_text(
    pred: str, truth: str, truth_html: str | None, kind: str, lang: str, paper: bool = False
) -> dict[str, Any]:
    """Scores of one answer against the ground truth (values in, values out).

    Tables: text metrics compare the reading-order text of the tables (the normalizer turns
    an HTML or Markdown table into it), TEDS/TEDS-S compare their trees.
    ``ned_raw`` is the paper's NED: on the answer (fences stripped) and the truth as they
    are, in the format the prompt asked for (a table as HTML under our protocol), so a
    perfect answer scores 0 under both. Under the paper's protocol (``paper``) the truth is
    the document as written and Markdown tables in it are scored as tables like HTML ones.

    Every metric's cost is bounded: an answer far longer than the truth is cut (it scores
    as what the metric makes of the cut answer, which cannot be good) and flagged.
    """
    from shredfold.limits import join_notes
    from shredfold.metrics.teds import table_scores
    from shredfold.metrics.text import RAW_NED_SIGNATURE, ned_raw, text_scores

    answer, parse_note = read_answer(pred, kind)
    scores: dict[str, Any] = dict(text_scores(answer, truth, kind, lang))  # type: ignore[arg-type]
    table_note = ""
    if kind == "table":
        assert truth_html is not None
        tables = table_scores(answer, truth_html)
        scores["teds"], scores["teds_s"] = tables["teds"], tables["teds_s"]
        table_note = str(tables["truncation"])
    else:
        scores["teds"] = math.nan
        scores["teds_s"] = math.nan
    scores["truncation"] = join_notes(parse_note, str(scores["truncation"]), table_note)
    scores["truncated"] = bool(scores["truncation"])
    # The paper's NED compares the answer with the truth in the format the prompt asked for:
    # the document as written under the paper's protocol (``truth`` is its source), the text
    # as drawn under ours, except a table, which our prompt asks for as HTML.
    asked = truth_html if kind == "table" and not paper and truth_html is not None else truth
    scores["ned_raw"] = ned_raw(answer, asked)
    scores["signature"] = "|".join(
        [f"protocol:{'paper' if paper else 'shredfold'}", str(scores["signature"]), RAW_NED_SIGNATURE]
    )
    return scores


def protocol(spec: ResolvedSpec) -> str:
    return spec.spec.shred.protocol if spec.spec.shred is not None else "shredfold"


def shred_request(cell: Cell, item: ShredItem, job: JobContext) -> Request:
    public = load_public(job.store.object(SAMPLE_STAGE, item.key))
    return sample_request(
        protocol(job.spec), cell.model.images.mode, kind=item.kind, lang=item.lang, n=item.n,
        pieces=public.pieces, composite=public.composite, item=item.key,
    )  # fmt: skip


# ---------------------------------------------------------------- export and eval

SHREDFOLD_LICENCE = Licence("shredfold's own material", "MIT", "mit", "shredfold's pyproject.toml (license)")
DEJAVU_LICENCE = ("DejaVu fonts licence (Bitstream Vera and Arev fonts licences; DejaVu's changes "
                  "in the public domain)", "other", "https://dejavu-fonts.github.io/License.html")  # fmt: skip
NOTO_LICENCE = ("SIL Open Font License 1.1", "ofl-1.1", "https://github.com/notofonts/noto-cjk/blob/main/Sans/LICENSE")

EXPORT_COLUMNS = (
    Column("key", "string", "the sample's content key (results/store/sample/<key>)"),
    Column("set_key", "string", "the key of its item set (a domain at one N)"),
    Column("doc_id", "string", "the document's id (its N variants share it)"),
    Column("domain", "string", "news_en, news_zh, code_python, code_java, code_cpp or table"),
    Column("n", "int32", "granularity: the number of pieces the page was cut into"),
    Column("kind", "string", "prose, code or table"),
    Column("lang", "string", "en or zh"),
    Column("origin", "string", "rendered (from the corpus) or outside (a sample set given to the spec)"),
    Column("protocol", "string", "the spec's protocol: shredfold or paper"),
    Column("pieces", "images", "protocol shredfold, image mode pieces: the scraps, one PNG each, in the shuffled order a model sees them (empty for an outside sample given as one photograph)"),
    Column("composite", "image", "protocol shredfold, image mode composite: every scrap on one table top (JPEG)"),
    Column("paper_image", "image", "protocol paper: the table top as the paper's models saw it (JPEG quality 95, longest side 2048 px)"),
    Column("truth", "string", "protocol shredfold's truth: the text drawn on the page, one drawn line per line"),
    Column("truth_html", "string", "tables: the table as HTML (TEDS compares against it); else null"),
    Column("source", "string", "protocol paper's truth: the document as written (Markdown, code, HTML)"),
    Column("system", "string", "protocol shredfold: the system message"),
    Column("prompt_pieces", "string", "protocol shredfold: the user message sent with `pieces`"),
    Column("prompt_composite", "string", "protocol shredfold: the user message sent with `composite`"),
    Column("system_paper", "string", "protocol paper: the system message"),
    Column("prompt_paper", "string", "protocol paper: the user message sent with `paper_image`"),
)


class ShredEvalOptions(BaseModel):
    """How an evaluation harness asks a sample (defaults: the exported spec's protocol, and
    each scrap as its own image, as a model file's ``images.mode`` defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: Literal["shredfold", "paper"] | None = None
    image_mode: Literal["pieces", "composite"] = "pieces"


def eval_options(options: Mapping[str, Any]) -> ShredEvalOptions:
    try:
        return ShredEvalOptions.model_validate(dict(options))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "options"
        raise ValueError(f"shredbench option {where}: {err['msg']}") from None


def sample_request(
    protocol: str, image_mode: str, *, kind: str, lang: str, n: int, pieces: Sequence[bytes],
    composite: bytes, paper_image: bytes | None = None, item: str | None,
) -> Request:  # fmt: skip
    """What a model is asked about a sample: the paper's photograph and instruction, or the
    scraps (pieces or one composite) with the per-kind instruction. ``paper_image`` is the
    photograph when it is already made (else it is made from the composite)."""
    if protocol == "paper":
        from shredfold.shred.presentation import paper_image as make_paper_image

        return paper_request(paper_image or make_paper_image(composite), item=item)
    # an outside sample given as one photograph has no piece files: everyone sees it
    as_composite = image_mode == "composite" or not pieces
    images = [composite] if as_composite else list(pieces)
    return build_request(kind=kind, lang=lang, n=n, images=images, composite=as_composite, item=item)


@register(order=0)
class ShredTask:
    name = "shred"
    benchmark = "shred"
    layout = Layout(
        set="shred/{domain}/N{n}",
        query="query/{model}/shred/{domain}/N{n}",
        score="score/{model}/shred/{domain}/N{n}",
        name="{model}/shred/{domain}/N{n}",
    )
    item_type = ShredItem
    row_type = ShredRow
    query_stage = Stage("query", 1)
    # 5: ned_raw against the truth in the format the prompt asked (a table's HTML, ours)
    score_stage = Stage("score", 5)
    board = Board(
        columns=(*SCORES, Split(NED, "granularity", "_n{}", label="n"),
                 Split(NED_RAW, "granularity", "_n{}", label="n"), *COST, PROTOCOL),
        rank=(NED,),
    )  # fmt: skip
    breakdown = Breakdown("breakdown.csv", ("domain", "granularity"), (*SCORES, *DIAGNOSTICS, *COST))
    headlines = tuple(Headline(m, DOCUMENT) for m in ("ned", "bleu", "rouge_l", "teds"))

    # ------------------------------------------------------------ items

    def item_sets(self, ctx: PlanContext) -> list[ItemSet]:
        from shredfold.corpus.loaders import CorpusError, load_corpus

        spec = ctx.spec.spec
        sb = spec.shred
        if sb is None:
            return []
        if sb.samples is not None:
            try:
                return self._outside_sets(ctx)
            except OutsideSetError as exc:
                field = "folder" if sb.samples.folder is not None else "manifest"
                raise spec_error_at(ctx.spec.path, ("shred", "samples", field), str(exc)) from None
        try:
            corpus = load_corpus(sb.corpus, list(sb.domains), sb.documents_per_domain)
        except CorpusError as exc:
            field = "folder" if sb.corpus.folder is not None else "jsonl" if sb.corpus.jsonl is not None else None
            at = ("shred", "corpus", field) if field else ("shred", "documents_per_domain")
            raise spec_error_at(ctx.spec.path, at, str(exc)) from None
        out = []
        for domain in sb.domains:
            render = sb.render_for(domain)
            for n in sb.granularities:
                items = tuple(
                    ShredItem(
                        key=sample_key(doc, n, render, sb.synthesis, spec.seed),
                        doc=doc,
                        n=n,
                        render=render,
                        synthesis=sb.synthesis,
                        seed=spec.seed,
                    )
                    for doc in corpus[domain]
                )
                labels = {"domain": domain, "n": n}
                key = content_key("sample_set", 1, labels, [i.key for i in items])
                out.append(ItemSet(self.name, key, labels, items, fill(self.layout.set, labels)))
        return out

    def _outside_sets(self, ctx: PlanContext) -> list[ItemSet]:
        """The item sets of an outside sample set: one per (domain, n) it holds, kept to the
        spec's domains and granularities when it names any (each named one must be there)."""
        from shredfold.corpus.document import DOMAINS
        from shredfold.shred.outside import Checks, read_outside

        sb = ctx.spec.spec.shred
        assert sb is not None and sb.samples is not None
        where = sb.samples.folder or sb.samples.manifest
        # the first plan of a set hashes and decodes every image: tens of seconds for photographs
        with Progress(f"plan: outside samples of {where}", None, unit="sample", brief=True):
            samples = read_outside(sb.samples, Checks(ctx.store, ctx.write))
        have_domains = {s.doc.domain for s in samples}
        have_ns = {s.n for s in samples}
        for name, field, asked, have in (("domain", "domains", sb.domains, have_domains),
                                         ("N", "granularities", sb.granularities, have_ns)):  # fmt: skip
            absent = [str(a) for a in asked if a not in have]
            if absent:
                raise spec_error_at(ctx.spec.path, ("shred", field), (
                    f"{where}: the spec asks for {name} {', '.join(absent)} but the set has none "
                    f"(it has {', '.join(str(h) for h in sorted(have))})"
                ))  # fmt: skip
        groups: dict[tuple[str, int], list[OutsideSample]] = {}
        for s in samples:
            if (not sb.domains or s.doc.domain in sb.domains) and (not sb.granularities or s.n in sb.granularities):
                groups.setdefault((s.doc.domain, s.n), []).append(s)
        out = []
        for domain, n in sorted(groups, key=lambda g: (DOMAINS.index(g[0]), g[1])):  # type: ignore[arg-type]
            items = tuple(ShredItem(key=s.key, doc=s.doc, n=s.n, outside=s.ref) for s in groups[domain, n])
            labels = {"domain": domain, "n": n}
            key = content_key("sample_set", 1, labels, [i.key for i in items])
            out.append(ItemSet(self.name, key, labels, items, fill(self.layout.set, labels)))
        return out

    def query_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        if protocol(spec) == "paper":
            return {"prompt": PAPER_VERSION, "protocol": "paper"}
        return {"prompt": PROMPT_VERSION}

    def score_params(self, spec: ResolvedSpec) -> dict[str, Any]:
        return {"protocol": "paper"} if protocol(spec) == "paper" else {}

    # ------------------------------------------------------------ build

    def build(self, item_set: ItemSet, job: JobContext) -> dict[str, int]:
        def make(item: ShredItem, folder: Path) -> None:
            if item.outside is not None:
                from shredfold.shred.outside import source_root
                from shredfold.shred.outside_sample import write_outside_sample

                sb = job.spec.spec.shred
                assert sb is not None and sb.samples is not None
                sample = OutsideSample(item.key, item.doc, item.n, item.outside)
                write_outside_sample(sample, folder, source_root(sb.samples))
                job.log.info("outside sample %s (%s, N=%d) stored", item.key[:12], item.doc.doc_id, item.n)
                return
            assert item.render is not None and item.synthesis is not None and item.seed is not None
            # Imported only when a sample is made: query and score jobs call build too (to
            # remake samples moved aside as corrupt), and synthesis pulls in scipy.spatial.
            from shredfold.shred.sample import make_sample

            make_sample(item.doc, item.n, item.render, item.synthesis, item.seed, folder)
            job.log.info("sample %s (%s, N=%d) made", item.key[:12], item.doc.doc_id, item.n)

        return build_each(item_set.items, SAMPLE_STAGE, job.store, make)

    # ------------------------------------------------------------ ask

    def ask(self, cell: Cell, asker: CachedAsker, job: JobContext) -> list[ManifestRow]:
        items: tuple[ShredItem, ...] = cell.item_set.items
        keys = [asker.key(shred_request(cell, item, job)) for item in items]
        pending = [i for i, rkey in enumerate(keys) if not asker.has(rkey)]
        if asker.replay_only and pending:
            # Checked before any call, so an audit never spends a cent.
            missing = ", ".join(items[i].key[:12] for i in pending[:5])
            raise ReplayOnlyError(
                f"{cell.name}: {len(pending)} of {len(items)} item(s) have no cached response "
                f"({missing}{' …' if len(pending) > 5 else ''}) and replay-only mode forbids "
                "calling the model"
            )
        current_progress().advance(len(items) - len(pending), cached=True)
        errors: dict[int, str] = {}
        if pending:
            asker.model()  # built (and checked ready) before the first call
            workers = cell.model.max_concurrency if registry.concurrent(cell.model) else 1
            errors = self._ask_pending(cell, items, keys, pending, asker, job, workers)
        return [
            ManifestRow(
                item=item.key, doc_id=item.doc.doc_id, response=None if i in errors else keys[i],
                cached=i not in pending, error=errors.get(i),
            )  # fmt: skip
            for i, item in enumerate(items)
        ]

    def _ask_pending(
        self,
        cell: Cell,
        items: tuple[ShredItem, ...],
        keys: list[str],
        pending: list[int],
        asker: CachedAsker,
        job: JobContext,
        workers: int,
    ) -> dict[int, str]:
        """Ask the pending items ``workers`` at a time; a non-call error stops the cell."""

        def one(i: int) -> str | None:
            # The request is rebuilt here rather than kept from the key pass: holding every
            # image of a paper-sized cell in memory at once would cost hundreds of megabytes.
            try:
                asker.ask(shred_request(cell, items[i], job), keys[i])
            except ModelCallError as exc:
                job.log.warning("%s: item %s failed: %s", cell.name, items[i].key[:12], exc)
                current_progress().advance(error=True)
                return str(exc)
            current_progress().advance()
            return None

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="query") as pool:
            futures: dict[Future[str | None], int] = {pool.submit(one, i): i for i in pending}
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    # A bug or a configuration error, not a failed call: stop queueing, keep
                    # what was stored, and fail the job loudly.
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise f.exception()  # type: ignore[misc]
            return {futures[f]: err for f in futures if (err := f.result()) is not None}

    # ------------------------------------------------------------ score

    def score(self, cell: Cell, answers: Mapping[str, ManifestRow], job: JobContext) -> list[Row]:
        rows: list[Row] = []
        paper = protocol(job.spec) == "paper"
        for item in cell.item_set.items:
            sample = job.store.object(SAMPLE_STAGE, item.key)
            truth = load_truth(sample)
            q = answers.get(item.key) or ManifestRow.not_run(item.key)
            response = load_response(job.store, q.response) if q.answered and q.response else None
            pred = response.text if response else ""
            text = truth.source if paper else truth.text
            scores = score_text(pred, text, truth.html, item.kind, item.lang, paper)
            diagnostics = diagnose_answer(pred, item, load_hidden(sample), load_layout(sample))
            rows.append(
                ShredRow(
                    item=item.key,
                    doc_id=item.doc.doc_id,
                    model=cell.model.id,
                    reference=cell.model.reference,
                    benchmark=self.benchmark,
                    domain=str(cell.labels["domain"]),
                    granularity=int(cell.labels["n"]),
                    kind=item.kind,
                    lang=item.lang,
                    protocol="paper" if paper else "shredfold",
                    **row_values(SCORES, scores),
                    **diagnostics,
                    signature=scores["signature"],
                    truncated=scores["truncated"],
                    truncation=scores["truncation"],
                    input_tokens=response.input_tokens if response else 0,
                    output_tokens=response.output_tokens if response else 0,
                    latency_s=response.latency_s if response else math.nan,
                    cost_usd=response.cost_usd if response else 0.0,
                    cached=q.cached,
                    error=q.error,
                    response=q.response,
                )
            )
            current_progress().advance(error=q.failed)
        return rows

    def response_keys(self, cell: Cell, answers: Mapping[str, ManifestRow], store: Any) -> list[str]:
        return [q.response for q in answers.values() if q.answered and q.response]

    def signatures(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> dict[str, str]:
        from importlib import metadata

        from shredfold.metrics.text import signature
        from shredfold.shred.diagnostics import VERSION as DIAGNOSTICS_VERSION

        kinds = sorted({(i.kind, i.lang) for s in item_sets for i in s.items})
        out = {f"text/{kind}/{lang}": signature(kind, lang) for kind, lang in kinds}  # type: ignore[arg-type]
        if any(kind == "table" for kind, _ in kinds):
            out["teds"] = f"teds:apted{metadata.version('apted')}/rename=pubtabnet/size=all-nodes"
        out["diagnostics"] = f"diagnostics-v{DIAGNOSTICS_VERSION}"
        out["prompt"] = PROMPT_VERSION
        return out

    # ------------------------------------------------------------ export (a data set)

    public_name = "shredbench"

    def export_tables(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> list[Table]:
        return [Table(self.public_name, "test", EXPORT_COLUMNS, tuple(item_sets))] if item_sets else []

    def export_row(self, item: ShredItem, item_set: ItemSet, job: JobContext) -> dict[str, Any]:
        sample = job.store.object(SAMPLE_STAGE, item.key)
        public, truth = load_public(sample), load_truth(sample)
        common = {"kind": item.kind, "lang": item.lang, "n": item.n, "pieces": public.pieces,
                  "composite": public.composite, "item": item.key}  # fmt: skip
        pieces = sample_request("shredfold", "pieces", **common)
        composite = sample_request("shredfold", "composite", **common)
        paper = sample_request("paper", "composite", **common)
        return {
            "key": item.key,
            "set_key": item_set.key,
            "doc_id": item.doc.doc_id,
            "domain": item.doc.domain,
            "n": item.n,
            "kind": item.kind,
            "lang": item.lang,
            "origin": "outside" if item.outside is not None else "rendered",
            "protocol": protocol(job.spec),
            "pieces": list(public.pieces),
            "composite": public.composite,
            "paper_image": paper.images[0],
            "truth": truth.text,
            "truth_html": truth.html,
            "source": truth.source,
            "system": pieces.messages[0].text,
            "prompt_pieces": pieces.messages[1].text,
            "prompt_composite": composite.messages[1].text,
            "system_paper": paper.messages[0].text,
            "prompt_paper": paper.messages[1].text,
        }

    def export_card(self, spec: ResolvedSpec, item_sets: Sequence[ItemSet]) -> DataCard:
        from shredfold.shred.fonts import FONTS, font_roles

        sb = spec.spec.shred
        assert sb is not None
        items: list[ShredItem] = [i for s in item_sets for i in s.items]
        licences = [SHREDFOLD_LICENCE]
        if sb.samples is not None:
            licences.append(Licence("the outside samples (shred.samples)", "their own terms, not known to shredfold: state them before publishing", "unknown"))
        elif sb.corpus.folder is None and sb.corpus.jsonl is None:
            licences.append(Licence("the documents of the built-in corpus (written for shredfold)", "MIT", "mit", "shredfold's pyproject.toml (license)"))
        else:
            licences.append(Licence("the documents of the spec's corpus", "their own terms, not known to shredfold: state them before publishing", "unknown"))
        roles = {r for i in items if i.render is not None for r in font_roles(i.doc, i.render.style)}
        dejavu = sorted(FONTS[r].file for r in roles if "dejavu" in FONTS[r].provider)
        noto = sorted({FONTS[r].file for r in roles} - set(dejavu))
        if dejavu:
            licences.append(Licence(f"the fonts the pages are drawn in: {', '.join(dejavu)}", *DEJAVU_LICENCE))
        if noto:
            licences.append(Licence(f"the fonts the pages are drawn in: {', '.join(noto)}", *NOTO_LICENCE))
        summary = (
            "ShredBench: a document rendered to a page, cut into N irregular pieces (N = 1 is "
            "the intact page), turned into paper scraps, shuffled and scattered; a model must "
            "return the text in order. A row is one sample with the images each protocol "
            "sends and both protocols' truths. Protocol `shredfold`: each model's image mode "
            "(`pieces` or `composite`) with a per-kind instruction, scored against `truth` "
            "(normalised NED, BLEU, ROUGE-L; TEDS / TEDS-S against `truth_html` for tables). "
            "Protocol `paper`: `paper_image` with one Markdown instruction, scored against "
            "`source` (ned_raw is the paper's NED)."
        )
        facts = {
            "protocol": protocol(spec),
            "domains": sorted({i.doc.domain for i in items}),
            "granularities": sorted({i.n for i in items}),
            "prompt": PAPER_VERSION if protocol(spec) == "paper" else PROMPT_VERSION,
        }
        return DataCard(summary, tuple(licences), facts)

    # ------------------------------------------------------------ eval (an Inspect AI task)

    def eval_item(self, row: Mapping[str, Any], options: Mapping[str, Any]) -> EvalItem:
        opts = eval_options(options)
        proto = opts.protocol or row["protocol"]
        request = sample_request(
            proto, opts.image_mode, kind=row["kind"], lang=row["lang"], n=row["n"], pieces=row["pieces"],
            composite=row["composite"], paper_image=row["paper_image"], item=row["key"],
        )  # fmt: skip
        truth = row["source"] if proto == "paper" else row["truth"]
        facts = {"kind": row["kind"], "lang": row["lang"], "truth": truth, "truth_html": row["truth_html"],
                 "protocol": proto, "domain": row["domain"], "n": row["n"], "doc_id": row["doc_id"]}  # fmt: skip
        return EvalItem(row["key"], request, truth, facts)

    def eval_score(self, facts: Mapping[str, Any], answer: str) -> EvalScore:
        paper = facts["protocol"] == "paper"
        scores = score_text(answer, facts["truth"], facts["truth_html"], facts["kind"], facts["lang"], paper)
        values = {m: float(scores[m]) for m in field_names(SCORES)}
        meta = {"signature": scores["signature"], "truncated": scores["truncated"], "truncation": scores["truncation"]}
        return EvalScore(values, answer, meta)
