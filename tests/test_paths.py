from __future__ import annotations

import re

import pytest

from shredfold import paths


@pytest.mark.parametrize("attempt", [0, 1, 2, 10, 123])
def test_an_attempt_suffix_reads_back_as_its_attempt(attempt: int) -> None:
    suffix = paths.attempt_suffix(attempt)
    assert re.fullmatch(paths.ATTEMPT_PATTERN, suffix)
    assert paths.attempt_number(suffix) == attempt


@pytest.mark.parametrize("suffix", ["-r0", "-r", "r1", "-r01", "-rx", "-r1 "])
def test_what_the_rules_never_match_is_not_an_attempt(suffix: str) -> None:
    assert not re.fullmatch(paths.ATTEMPT_PATTERN, suffix)
    with pytest.raises(ValueError, match="not an attempt suffix"):
        paths.attempt_number(suffix)
