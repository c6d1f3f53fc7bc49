from shredfold.report.highlight import mark


def test_flags_land_on_the_non_space_characters_in_order() -> None:
    assert mark("ab c", [False, True, False], "prose") == [("a", False), ("b", True), (" c", False)]
    assert mark("a\nb", [True, True], "code") == [("a", True), ("\n", False), ("b", True)]


def test_a_tables_cell_separator_is_not_a_scored_character() -> None:
    assert mark("City | Rain", [False] * 4 + [True] * 4, "table") == [("City | ", False), ("Rain", True)]


def test_a_character_that_folds_to_two_takes_two_flags() -> None:
    # "ﬁ" folds to "fi" (NFKC): two skeleton characters, marked if either is
    assert mark("ﬁx", [False, True, False], "prose") == [("ﬁ", True), ("x", False)]
    assert mark("abc", [True], "prose") == [("a", True), ("bc", False)]  # short flags: the rest unmarked
