"""A spec's benchmark items as data sets other tools load (``shredfold export``).

Generic over tasks: each task says what its tables and rows hold and what its part of the
card is (the :class:`~shredfold.tasks.base.Exported` hooks); this package reads the rows
from the store and writes them (:mod:`.hf`: a Hugging Face ``datasets`` folder).
"""
