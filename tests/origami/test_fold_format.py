import json

import pytest

from shredfold.origami.fold_format import (
    FoldFormatError,
    frame_from_arrays,
    read_cp,
    read_fold,
    write_fold,
)

SQUARE_WITH_DIAGONAL = {
    "file_spec": 1.1,
    "file_title": "diagonal",
    "vertices_coords": [[0, 0], [1, 0], [1, 1], [0, 1]],
    "edges_vertices": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]],
    "edges_assignment": ["B", "B", "B", "B", "V"],
    "faces_vertices": [[0, 1, 2], [0, 2, 3]],
    "faceOrders": [[0, 1, 1]],
}


def test_round_trip_keeps_geometry_orders_and_metadata():
    fold = read_fold(json.dumps(SQUARE_WITH_DIAGONAL))
    again = read_fold(write_fold(fold))
    assert again == fold
    assert again.key_frame.face_orders == ((0, 1, 1),)
    assert again.metadata["file_title"] == "diagonal"


def test_frames_are_read_with_their_metadata():
    data = dict(SQUARE_WITH_DIAGONAL)
    data["file_frames"] = [
        {
            "frame_title": "folded",
            "frame_inherit": True,
            "frame_parent": 0,
            "vertices_coords": [[0, 0], [1, 0], [0, 0], [0, 0]],
        }
    ]
    fold = read_fold(json.dumps(data))
    (frame,) = fold.frames
    assert frame.metadata["frame_title"] == "folded"
    assert frame.edges_vertices == fold.key_frame.edges_vertices  # inherited
    assert read_fold(write_fold(fold)).frames[0].vertices_coords[2] == (0.0, 0.0)


@pytest.mark.parametrize(
    ("change", "field", "index"),
    [
        ({"vertices_coords": None}, "vertices_coords", None),
        ({"vertices_coords": [[0, 0], [1, 0], [1, float("nan")], [0, 1]]}, "vertices_coords", 2),
        ({"edges_vertices": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 7]]}, "edges_vertices", 4),
        ({"edges_assignment": ["B", "B", "B", "B"]}, "edges_assignment", None),
        ({"edges_assignment": ["B", "B", "B", "B", "Q"]}, "edges_assignment", 4),
        ({"faces_vertices": [[0, 1, 2], [0, 9, 3]]}, "faces_vertices", 1),
        ({"faceOrders": [[0, 1, 2]]}, "faceOrders", 0),
    ],
)
def test_malformed_fields_are_named_with_their_index(change, field, index):
    data = {**SQUARE_WITH_DIAGONAL, **change}
    data = {k: v for k, v in data.items() if v is not None}
    # json.dumps writes NaN as a bare token, which Python's reader accepts, as FOLD files do
    with pytest.raises(FoldFormatError) as err:
        read_fold(json.dumps(data))
    assert err.value.field == field
    assert err.value.index == index
    assert field in str(err.value)


def test_not_json_is_a_format_error():
    with pytest.raises(FoldFormatError, match="json"):
        read_fold("{not json")


def test_cp_is_flipped_to_y_up_keeping_letters():
    segments = read_cp("1 0 0 100 0\n2 0 0 100 100\n3 0 100 100 0\n\n")
    assert segments[0] == ((0.0, 0.0), (100.0, 0.0), "B")
    assert segments[1] == ((0.0, 0.0), (100.0, -100.0), "M")
    assert segments[2][2] == "V"


def test_cp_with_garbage_names_the_line():
    with pytest.raises(FoldFormatError) as err:
        read_cp("1 0 0 1 0\n2 0 zero 1 1\n")
    assert err.value.index == 1


def test_frame_from_numpy_arrays():
    import numpy as np

    frame = frame_from_arrays(np.eye(2), np.array([[0, 1]]), np.array(["M"]))
    assert frame.vertices_coords == ((1.0, 0.0), (0.0, 1.0))
    assert isinstance(frame.edges_vertices[0][0], int)
