"""OrigamiBench as a benchmark: its declaration and the hooks the generic code calls (report
sections, release environment facts, job memory, the bill's request shapes). Its tasks are
:mod:`shredfold.tasks.origami_mcq` and :mod:`shredfold.tasks.origami_fullstep`; its
building blocks (engine, designs, agents) are in :mod:`shredfold.origami` and
:mod:`shredfold.origami_bench`, where models can use them too.
"""

from __future__ import annotations

from shredfold.spec import OrigamiBenchSpec
from shredfold.tasks.benchmark import Benchmark
from shredfold.tasks.origamibench import release, report
from shredfold.tasks.registry import register_benchmark

BENCHMARK = register_benchmark(
    Benchmark(
        name="origami",
        title="OrigamiBench",
        section=OrigamiBenchSpec,
        order=10,
        report=report.SECTIONS,
        environment=release.environment,
        carried=release.carried,
        from_carried=release.from_carried,
    )
)
