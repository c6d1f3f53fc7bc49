from __future__ import annotations

from pathlib import Path

import pytest
from jigsaw_puzzles import Puzzle, make_puzzle
from table_photos import NEWS, TABLE, build

from shredfold.spec import SynthesisSettings


@pytest.fixture(scope="session")
def puzzle4() -> Puzzle:
    return make_puzzle(4, seed=1)


@pytest.fixture(scope="session")
def puzzle12() -> Puzzle:
    return make_puzzle(12, seed=2)


@pytest.fixture(scope="session")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder in which the table-top samples of this session are built (each once)."""
    return tmp_path_factory.mktemp("table-photos")


@pytest.fixture(scope="session")
def news6(photos: Path) -> Path:
    return build(photos, "news6", NEWS, "news_en", 6)


@pytest.fixture(scope="session")
def table6(photos: Path) -> Path:
    return build(photos, "table6", TABLE, "table", 6)


@pytest.fixture(scope="session")
def news6_blender(photos: Path) -> Path:
    return build(photos, "news6-blender", NEWS, "news_en", 6, SynthesisSettings(mode="blender"))
