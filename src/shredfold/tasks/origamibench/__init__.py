"""OrigamiBench as a benchmark: its declaration and the hooks the generic code calls (report
sections, release environment facts, job memory, the bill's request shapes, how ``serve``
recognises its prompts) and its tasks (:mod:`.mcq`, :mod:`.fullstep`, with what they share in
:mod:`.common`). Its building blocks (engine, designs, agents, prompts) are in
:mod:`shredfold.origami` and :mod:`shredfold.origami_bench`, below the tasks layer, where
models can use them too.
"""

from __future__ import annotations

from shredfold.origami_bench import prompts
from shredfold.spec import OrigamiBenchSpec
from shredfold.tasks.benchmark import Benchmark, Memory
from shredfold.tasks.origamibench import bill, commands, release, report, resources
from shredfold.tasks.registry import register_benchmark

BENCHMARK = register_benchmark(
    Benchmark(
        name="origami",
        title="OrigamiBench",
        section=OrigamiBenchSpec,
        order=10,
        report=report.SECTIONS,
        bill=bill.OrigamiBill,
        prompt_reader=prompts.infer_template,
        memory=Memory(set_mb=resources.set_mb, query_mb=resources.query_mb, request_mpx=resources.request_mpx, score_mb=resources.score_mb, score_threads=resources.score_threads),
        environment=release.environment,
        carried=release.carried,
        from_carried=release.from_carried,
        commands=commands.add,
    )
)

# Its tasks register on import (after the benchmark: a task names it).
from shredfold.tasks.origamibench import fullstep, mcq  # noqa: E402, F401
