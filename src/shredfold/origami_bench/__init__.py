"""OrigamiBench: designs, procedural fold sequences, the folding environment, one-step
multiple-choice items and full-step targets, built on the engine (:mod:`shredfold.origami`).

The task modules (:mod:`shredfold.tasks.origami_mcq`, :mod:`shredfold.tasks.origami_fullstep`)
plan, ask and score with what lives here.
"""
