"""OrigamiBench as a benchmark: its declaration and the hooks the generic code calls (report
sections, release environment facts, job memory, the bill's request shapes). Its tasks are
:mod:`shredfold.tasks.origami_mcq` and :mod:`shredfold.tasks.origami_fullstep`; its
building blocks (engine, designs, agents) are in :mod:`shredfold.origami` and
:mod:`shredfold.origami_bench`, where models can use them too.
"""

from __future__ import annotations

from shredfold.spec import OrigamiBenchSpec
from shredfold.tasks.benchmark import Benchmark, Memory
from shredfold.tasks.origamibench import bill, release, report, resources
from shredfold.tasks.registry import register_benchmark

BENCHMARK = register_benchmark(
    Benchmark(
        name="origami",
        title="OrigamiBench",
        section=OrigamiBenchSpec,
        order=10,
        report=report.SECTIONS,
        bill=bill.OrigamiBill,
        memory=Memory(set_mb=resources.set_mb, query_mb=resources.query_mb, request_mpx=resources.request_mpx, score_mb=resources.score_mb, score_threads=resources.score_threads),
        environment=release.environment,
        carried=release.carried,
        from_carried=release.from_carried,
    )
)
