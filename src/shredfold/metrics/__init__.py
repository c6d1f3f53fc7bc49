"""Scores for model answers: pure functions from (prediction, reference) to numbers.

:mod:`.text` gives NED, BLEU and ROUGE-L for every domain (the table domain compares
``table_text`` of both sides, see :mod:`shredfold.tables`); :mod:`.teds` adds TEDS and TEDS-S
for tables; :mod:`.shape` is silhouette IoU (GS); :mod:`.clip` is SS. Every text score row
carries ``signature(kind, lang)``. Import the module you need: this package's top level
stays empty so that planning (which reads :mod:`.clip`'s weights identity) imports no
scorer.
"""
