"""Generated garbage thrown at the .fold and .cp readers and at the crease pattern built from
what they return: a FoldFormatError naming the place, never another exception, and files too
big to be a crease pattern are refused before they are parsed."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shredfold.origami.fold_format import (
    MAX_CP_LINES,
    MAX_FOLD_CHARS,
    MAX_FOLD_LISTS,
    FoldFormatError,
    read_cp,
    read_fold,
)
from shredfold.origami.pattern import CreasePattern

FUZZ = settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", 150)), deadline=None, suppress_health_check=[HealthCheck.too_slow])

numbers = st.one_of(
    st.integers(-3, 8),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([0.5, 1e300, -1e300, 1e-300, 2**70]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=25,
)
points = st.lists(st.one_of(numbers, st.just("x")), min_size=1, max_size=3)
fold_fields = st.fixed_dictionaries(
    {},
    optional={
        "vertices_coords": st.one_of(st.lists(points, max_size=8), json_values),
        "edges_vertices": st.one_of(st.lists(st.lists(st.integers(-1, 8), max_size=3), max_size=10), json_values),
        "edges_assignment": st.one_of(st.lists(st.sampled_from(list("MVBFUCJmvx")), max_size=10), json_values),
        "faces_vertices": st.one_of(st.lists(st.lists(st.integers(-1, 8), max_size=5), max_size=4), json_values),
        "faceOrders": st.one_of(st.lists(st.lists(st.one_of(st.integers(-2, 5), st.text(max_size=2)), max_size=4), max_size=4), json_values),
        "file_frames": st.one_of(st.lists(json_values, max_size=2), json_values),
    },
)


def _build(fold) -> None:
    """What a caller does with a file that parsed: build the crease pattern."""
    CreasePattern.from_fold(fold.key_frame)


def _must_fail_cleanly(call) -> None:
    try:
        call()
    except FoldFormatError as exc:
        message = str(exc)
        assert message and ":" in message, message  # "field[index]: cause"
        assert exc.field


@FUZZ
@given(st.text(max_size=200))
def test_any_text_is_a_fold_or_a_format_error(text: str) -> None:
    _must_fail_cleanly(lambda: _build(read_fold(text)))


@FUZZ
@given(fold_fields, st.sampled_from(["", "file_frames"]))
def test_fold_shaped_garbage_is_a_format_error_or_a_pattern(data: dict, _unused: str) -> None:
    text = json.dumps(data, allow_nan=False)
    _must_fail_cleanly(lambda: _build(read_fold(text)))


SQUARE = {
    "vertices_coords": [[0, 0], [1, 0], [1, 1], [0, 1]],
    "edges_vertices": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]],
    "edges_assignment": ["B", "B", "B", "B", "V"],
    "faces_vertices": [[0, 1, 2], [0, 2, 3]],
    "faceOrders": [[0, 1, 1]],
}


@FUZZ
@given(
    st.sampled_from(sorted(SQUARE)),
    st.one_of(json_values, st.lists(st.lists(st.one_of(numbers, st.text(max_size=2), st.none()), max_size=4), max_size=4)),
    st.booleans(),
)
def test_one_garbage_field_in_a_valid_file_is_named(key: str, value: object, drop_faces: bool) -> None:
    # the other fields are valid, so the reader gets as far as the garbage; the error may
    # name a field the garbage makes inconsistent (faceOrders once faces_vertices is wrong)
    data = {k: v for k, v in SQUARE.items() if not (drop_faces and k == "faces_vertices")}
    data[key] = value
    text = json.dumps(data, allow_nan=False)
    try:
        _build(read_fold(text))
    except FoldFormatError as exc:
        assert exc.field in SQUARE, (exc.field, key)


@FUZZ
@given(
    st.lists(
        st.lists(st.integers(0, 4), min_size=2, max_size=2, unique=True).map(tuple),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=5, max_size=5),
    st.lists(st.sampled_from("MVBFU"), min_size=12, max_size=12),
)
def test_small_graphs_on_a_grid_build_or_fail_cleanly(edges, coords, letters) -> None:
    # valid JSON and indices, arbitrary topology: crossings, duplicates, dangling lines,
    # coincident vertices, several pieces
    data = {
        "vertices_coords": [list(c) for c in coords],
        "edges_vertices": [list(e) for e in edges],
        "edges_assignment": letters[: len(edges)],
    }
    _must_fail_cleanly(lambda: _build(read_fold(json.dumps(data))))


cp_lines = st.one_of(
    st.tuples(st.integers(-1, 4), numbers, numbers, numbers, numbers).map(lambda t: " ".join(map(str, t))),
    st.text(alphabet="0123456789 .-e+naif\t", max_size=30),
)


@FUZZ
@given(st.lists(cp_lines, max_size=12))
def test_cp_garbage_is_a_format_error_or_a_pattern(lines: list[str]) -> None:
    def call() -> None:
        segs = read_cp("\n".join(lines))
        CreasePattern.from_segments([s[:2] for s in segs], [s[2] for s in segs])

    _must_fail_cleanly(call)


def test_a_fold_with_ten_million_vertices_is_refused_before_parsing() -> None:
    # 60 MB of text: refused by counting, so neither time nor memory goes into parsing it
    text = '{"vertices_coords": [' + "[0,0]," * 10**7 + '[0,0]], "edges_vertices": []}'
    assert len(text) < MAX_FOLD_CHARS and text.count("[") > MAX_FOLD_LISTS
    try:
        read_fold(text)
    except FoldFormatError as exc:
        assert "too large" in str(exc) and f"{MAX_FOLD_LISTS}" in str(exc)
    else:
        raise AssertionError("a 10^7-vertex file was parsed")


def test_a_huge_text_is_refused_by_its_length() -> None:
    text = " " * (MAX_FOLD_CHARS + 1)
    try:
        read_fold(text)
    except FoldFormatError as exc:
        assert "too large" in str(exc)
    else:
        raise AssertionError("an oversized text was parsed")


def test_deep_nesting_and_enormous_numbers_are_format_errors() -> None:
    for text in ["[" * 100_000 + "]" * 100_000, '{"vertices_coords": [[' + "9" * 5000 + ", 0]]}"]:
        _must_fail_cleanly(lambda text=text: read_fold(text))


def test_a_cp_with_too_many_lines_is_refused() -> None:
    text = "2 0 0 1 1\n" * (MAX_CP_LINES + 1)
    try:
        read_cp(text)
    except FoldFormatError as exc:
        assert "too large" in str(exc)
    else:
        raise AssertionError("an oversized .cp was parsed")


def test_coordinates_far_outside_any_sheet_are_refused() -> None:
    data = {
        "vertices_coords": [[0, 0], [1e300, 0], [1e300, 1e300], [0, 1e300]],
        "edges_vertices": [[0, 1], [1, 2], [2, 3], [3, 0]],
    }
    try:
        read_fold(json.dumps(data))
    except FoldFormatError as exc:
        assert str(exc).startswith("vertices_coords[1]:") and "1e+300" in str(exc)
    else:
        raise AssertionError("coordinates of 1e300 were accepted")


def test_an_integer_coordinate_past_float_range_is_refused_by_name() -> None:
    # 400 digits parse as a Python int (under its 4300-digit limit) that no float holds
    text = '{"vertices_coords": [[0, 0], [1' + "0" * 400 + ', 0]], "edges_vertices": [[0, 1]]}'
    try:
        read_fold(text)
    except FoldFormatError as exc:
        assert str(exc).startswith("vertices_coords[1]:") and "1.00e+400" in str(exc)
    else:
        raise AssertionError("a coordinate of 10^400 was accepted")
