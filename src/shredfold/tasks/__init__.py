"""Benchmark tasks, one module each (ShredBench; origami one-step MCQ; origami full-step).

See :mod:`shredfold.tasks.base` for the protocol, :mod:`shredfold.tasks.registry` for how
tasks are found and :mod:`shredfold.tasks.manifest` for what a query job records of each item.
"""
