"""OrigamiBench: designs, procedural fold sequences, the folding environment, one-step
multiple-choice items and full-step targets, built on the engine (:mod:`shredfold.origami`).

The task modules (:mod:`shredfold.tasks.origamibench.mcq`, :mod:`shredfold.tasks.origamibench.fullstep`)
plan, ask and score with what lives here.
"""
