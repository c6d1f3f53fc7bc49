"""One generic Inspect AI task over any evaluated shredfold task.

A sample is the task's :class:`~shredfold.tasks.base.EvalItem`: its request (exactly what
shredfold sends a model: system message, user text, images) as Inspect chat messages, its
target, and the facts scoring needs as the sample's metadata. The solver is Inspect's
``generate()``, so any of Inspect's model providers answers; the scorer calls the task's
``eval_score`` (the metric functions shredfold's score jobs call, so the same answer gets the
same numbers) and records the metric signature in each score's metadata. Every value is
averaged by Inspect's ``mean`` over the samples where it is defined (a NaN, e.g. TEDS on
prose, is left out as shredfold's leaderboard leaves it out).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from shredfold.calls import Request
from shredfold.inspect_eval.rows import SourceError, export_rows, spec_rows
from shredfold.tasks.base import EvalItem, Evaluated, evaluated
from shredfold.tasks.registry import tasks

DEFAULT_SPEC = "specs/default.yaml"


def evaluated_tasks() -> dict[str, Evaluated]:
    """The tasks an evaluation harness can run, by public name."""
    return {t.public_name: t for t in tasks() if evaluated(t)}  # type: ignore[attr-defined,misc]


def get_evaluated(name: str) -> Evaluated:
    known = evaluated_tasks()
    if name not in known:
        raise SourceError(f"no shredfold task {name!r} for Inspect; known: {', '.join(sorted(known))}")
    return known[name]


def chat_messages(request: Request, max_side: int | None = None) -> list[ChatMessage]:
    """A shredfold request as Inspect messages: text first, then the images in order, as the
    OpenAI-compatible adapter sends them (``max_side`` downscales as its ``images.max_side``)."""
    from shredfold.models.base import data_url
    from shredfold.models.openai_compat import prepare_image

    out: list[ChatMessage] = []
    for m in request.messages:
        images = [prepare_image(img, max_side) if max_side else img for img in m.images]
        if m.role == "system":
            if images:
                raise ValueError("a system message with images has no Inspect form")
            out.append(ChatMessageSystem(content=m.text))
        elif m.role == "user":
            parts: list[ContentText | ContentImage] = [ContentText(text=m.text)] if m.text else []
            parts += [ContentImage(image=data_url(img)) for img in images]
            out.append(ChatMessageUser(content=parts if images else m.text))
        else:
            raise ValueError(f"message role {m.role!r} has no Inspect form here")
    return out


def sample(item: EvalItem, max_side: int | None = None) -> Sample:
    return Sample(
        input=chat_messages(item.request, max_side), target=item.target, id=item.id, metadata=dict(item.facts)
    )


@scorer(metrics={"*": [mean(), stderr()]})
def shredfold_scorer(task: str) -> Scorer:
    """Scores an answer with shredfold's own metric functions for ``task``."""
    bench = get_evaluated(task)

    async def score(state: TaskState, target: Target) -> Score:
        result = bench.eval_score(state.metadata, state.output.completion)
        return Score(value=dict(result.values), answer=result.answer, metadata=dict(result.metadata))

    return score


def _rows(name: str, export: str | None, spec: str | None, results: str, split: str | None,
          build: bool) -> tuple[str, Iterator[tuple[str, dict[str, Any]]]]:  # fmt: skip
    if export is not None and spec is not None:
        raise SourceError("give export=FOLDER or spec=SPEC, not both")
    if export is not None:
        return str(export), export_rows(export, name, split)
    chosen = spec or DEFAULT_SPEC
    if not Path(chosen).is_file():
        raise SourceError(f"{chosen}: no such spec; give -T export=FOLDER (a `shredfold export`) or -T spec=SPEC")
    return str(chosen), spec_rows(chosen, results, name, split, build)


def make_task(
    name: str,
    *,
    export: str | None = None,
    spec: str | None = None,
    results: str = "results",
    split: str | None = None,
    build: bool = True,
    max_side: int | None = None,
    **options: Any,
) -> Task:
    """The Inspect task of shredfold's task ``name`` (its public name), from an export folder
    or a spec (default ``specs/default.yaml``; its items are made in ``results`` when
    missing unless ``build`` is false); ``split`` keeps one split; ``options`` are the task's
    own (e.g. ShredBench's ``protocol`` and ``image_mode``)."""
    bench = get_evaluated(name)
    if max_side is not None and (not isinstance(max_side, int) or max_side < 64):
        raise SourceError(f"max_side: {max_side!r} is not a whole number of pixels >= 64")
    source, rows = _rows(name, export, spec, results, split, build)
    samples = [sample(item, max_side) for item in _items(bench, rows, options)]
    if not samples:
        raise SourceError(f"{source}: no {name} items{' in split ' + split if split else ''} under these options")
    return Task(
        name=f"shredfold/{name}",  # as the entry point registers it, however the task was made
        dataset=MemoryDataset(samples, name=f"shredfold/{name}", location=source),
        solver=generate(),
        scorer=shredfold_scorer(name),
        metadata={"shredfold": metadata.version("shredfold"), "source": source, "split": split, "options": options},
    )


def _items(bench: Evaluated, rows: Iterator[tuple[str, dict[str, Any]]], options: Mapping[str, Any]) -> Iterator[EvalItem]:
    for _, row in rows:
        item = bench.eval_item(row, options)
        if item is not None:
            yield item
