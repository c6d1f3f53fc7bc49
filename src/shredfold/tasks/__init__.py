"""Benchmarks and their tasks: a task per module (ShredBench; origami one-step MCQ; origami
full-step), a benchmark's declaration and hooks per package (:mod:`.shredbench`,
:mod:`.origamibench`).

See :mod:`shredfold.tasks.base` for the task protocol, :mod:`shredfold.tasks.benchmark` for
a benchmark's hooks, :mod:`shredfold.tasks.registry` for how both are found and :mod:`shredfold.tasks.manifest` for what a query job records of each item.
"""
