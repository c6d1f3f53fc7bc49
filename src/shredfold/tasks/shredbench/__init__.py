"""ShredBench as a benchmark: its declaration and the hooks the generic code calls (report
sections, release environment facts, job memory, the bill's request shapes). Its task is
:mod:`shredfold.tasks.shred`; its building blocks (renderer, shredder, readers) are in
:mod:`shredfold.shred` and :mod:`shredfold.shred.solvers`, where models can use them too.
"""

from __future__ import annotations

from shredfold.shred.sample_key import SAMPLE_STAGE
from shredfold.spec import ShredBenchSpec
from shredfold.tasks.benchmark import Benchmark, Memory
from shredfold.tasks.registry import register_benchmark
from shredfold.tasks.shredbench import bill, release, report, resources, serve

BENCHMARK = register_benchmark(
    Benchmark(
        name="shred",
        title="ShredBench",
        section=ShredBenchSpec,
        order=0,
        report=report.SECTIONS,
        bill=bill.ShredBill,
        item_index=serve.SampleIndex,
        memory=Memory(set_mb=resources.set_mb, query_mb=resources.query_mb, request_mpx=resources.request_mpx, score_mb=resources.score_mb, warm=resources.warm),
        environment=release.environment,
        sample_stages=(SAMPLE_STAGE,),
        check_samples=release.check_samples,
    )
)
