"""ShredBench as a benchmark: its declaration and the hooks the generic code calls (report
sections, release environment facts, job memory, the bill's request shapes, how ``serve``
recognises its prompts) and its task (:mod:`.task`). Its building blocks (renderer, shredder,
readers, prompts) are in :mod:`shredfold.shred`, below the tasks layer, where models can use
them too.
"""

from __future__ import annotations

from shredfold.shred import prompts
from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.spec import ShredBenchSpec
from shredfold.tasks.benchmark import Benchmark, Memory
from shredfold.tasks.registry import register_benchmark
from shredfold.tasks.shredbench import bill, commands, release, report, resources, serve

BENCHMARK = register_benchmark(
    Benchmark(
        name="shred",
        title="ShredBench",
        section=ShredBenchSpec,
        order=0,
        report=report.SECTIONS,
        bill=bill.ShredBill,
        prompt_reader=prompts.infer_template,
        item_index=serve.SampleIndex,
        memory=Memory(set_mb=resources.set_mb, query_mb=resources.query_mb, request_mpx=resources.request_mpx, score_mb=resources.score_mb, warm=resources.warm),
        environment=release.environment,
        sample_stages=(SAMPLE_STAGE,),
        check_samples=release.check_samples,
        commands=commands.add,
    )
)

# Its task registers on import (after the benchmark: a task names it).
from shredfold.tasks.shredbench import task  # noqa: E402, F401
