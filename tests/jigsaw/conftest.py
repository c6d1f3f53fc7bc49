from __future__ import annotations

import pytest
from jigsaw_puzzles import Puzzle, make_puzzle


@pytest.fixture(scope="session")
def puzzle4() -> Puzzle:
    return make_puzzle(4, seed=1)


@pytest.fixture(scope="session")
def puzzle12() -> Puzzle:
    return make_puzzle(12, seed=2)
