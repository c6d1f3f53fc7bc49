"""Benchmark tasks, one module each (ShredBench; origami one-step MCQ; origami full-step).

See :mod:`shredfold.tasks.base` for the protocol and :mod:`shredfold.tasks.registry` for how
tasks are found.
"""
