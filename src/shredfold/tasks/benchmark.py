"""A benchmark's declaration: what the generic code (the spec, the bill, the report, the
job resources, a release) asks of it beyond its tasks' protocol.

A benchmark is a package that declares one :class:`Benchmark` and registers its tasks
(:func:`shredfold.tasks.registry.register`, tasks naming it as their ``benchmark``). The
generic modules iterate over the registered benchmarks and call these hooks; none of them
names a benchmark. A hook left out has a neutral meaning, said at each field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from shredfold.spec import ResolvedSpec


@dataclass(frozen=True)
class ReportSection:
    """A section of ``results/report.html``: an element with id ``id`` and heading
    ``title``; ``context(inputs)`` gives the values its Jinja ``template`` (the section's
    body) is rendered with, as ``section`` (None: the section says it has nothing). The
    inputs are the report's (:class:`shredfold.report.build.Inputs`): the plan, the store,
    the result tables and the report's drawing helpers (``inputs.kit``)."""

    id: str
    title: str
    template: str
    context: Callable[[Any], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Shape:
    """One request as far as its price goes (``count`` identical ones): the bill's unit
    (:mod:`shredfold.cost`)."""

    text_tokens: int
    images: tuple[tuple[int, int], ...]  # pixel sizes as made, before the adapter downscales
    answer_tokens: int  # typical
    count: int = 1


class Bill(Protocol):
    """A benchmark's part of the bill of one plan (made by :attr:`Benchmark.bill` from the
    spec and the store, read only): its cells' request counts and shapes, and the notes that
    say how they were estimated."""

    def requests(self, cell: Any) -> int: ...

    def shapes(self, cell: Any) -> list[Shape]: ...

    def notes(self, cells: Sequence[Any]) -> list[str]: ...


@dataclass(frozen=True)
class Memory:
    """What its jobs ask of the machine, in MB as measured (the job resources add their
    margin): ``set_mb(item_set, spec)``, ``query_mb(cell, spec)`` (its in-process solvers';
    None: a model behind an endpoint, sized by ``request_mpx(cell, spec)``, the megapixels
    of one request's images), ``score_mb(cell, spec)``, ``score_threads(cell, spec)``, and
    ``warm(item_sets)``, work done once per plan before they are asked. A hook left out: the
    job resources' defaults (:mod:`shredfold.stages.resources`)."""

    set_mb: Callable[[Any, ResolvedSpec], float] | None = None
    query_mb: Callable[[Any, ResolvedSpec], float | None] | None = None
    request_mpx: Callable[[Any, ResolvedSpec], float] | None = None
    score_mb: Callable[[Any, ResolvedSpec], float] | None = None
    score_threads: Callable[[Any, ResolvedSpec], int] | None = None
    warm: Callable[[Any], None] | None = None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its spec section (``name:`` in a spec, validated by ``section``), its
    place among benchmarks (``order``) and its hooks."""

    name: str
    title: str  # how people name it ("ShredBench")
    section: type[BaseModel]
    order: int
    # The report's sections for it, in order (none: it shows on the leaderboard only).
    report: tuple[ReportSection, ...] = ()
    # Its jobs' memory and threads (the job resources' defaults where left out).
    memory: Memory = Memory()
    # How ``shredfold serve`` recognises its prompts: ``read(prompt)`` → the template, or
    # ValueError (None: serve answers no request of it).
    prompt_reader: Callable[[str], str] | None = None
    # How ``shredfold serve`` finds the item a request shows, for a served model of it that
    # reads its item (the oracle): ``item_index(store).item_for(images)`` → key or None.
    item_index: Callable[[Any], Any] | None = None
    # Its part of the bill, ``bill(spec, store)`` (None: requests counted, not priced).
    bill: Callable[[ResolvedSpec, Any], Bill] | None = None
    # Facts of this machine that shape its results (fonts, engine versions), by name:
    # recorded in a release's environment.json beside the code's versions; ``shredfold
    # verify`` says which differ where it runs (None: none).
    environment: Callable[[], Mapping[str, Any]] | None = None
    # Files outside the store its scoring reads (weights the spec names), carried by a
    # release: release path → local file (None: none) …
    carried: Callable[[ResolvedSpec], Mapping[str, Path]] | None = None
    # … and the spec reading them from a release unpacked at the given folder.
    from_carried: Callable[[ResolvedSpec, Path], ResolvedSpec] | None = None
    # Store stages whose objects a release made ``--with-samples`` carries whole.
    sample_stages: tuple[str, ...] = ()
    # ``shredfold verify`` on such a release: makes its samples again and compares them,
    # ``check(store, item_sets_of, folder_of, scratch, report)`` (None: nothing to redo).
    check_samples: Callable[..., None] | None = None

    # Its own ``shredfold`` commands: ``commands(subparsers)`` adds them (each sets ``func``,
    # raising :class:`shredfold.errors.UserError` for what the user can fix) (None: none).
    commands: Callable[[Any], None] | None = None

    def section_of(self, spec: ResolvedSpec) -> BaseModel | None:
        """Its section of ``spec`` (None: the spec does not run it)."""
        return getattr(spec.spec, self.name, None)
