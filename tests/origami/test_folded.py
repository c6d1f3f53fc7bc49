import numpy as np

from shredfold.origami.folded import fold_geometry, folded_silhouette
from shredfold.origami.pattern import CreasePattern

BORDER = [((0, 0), (1, 0)), ((1, 0), (1, 1)), ((1, 1), (0, 1)), ((0, 1), (0, 0))]


def test_book_fold_lands_one_half_on_the_other():
    cp = CreasePattern.from_segments(np.array([*BORDER, ((0.5, 0), (0.5, 1))], float), "BBBBV")
    geom = fold_geometry(cp)
    assert sorted(geom.flipped.tolist()) == [False, True]
    assert geom.closure_error < 1e-12
    xs = geom.vertices[:, 0]
    # whichever half stayed, every vertex is now on one side of x = 0.5
    assert np.all(xs >= 0.5 - 1e-12) or np.all(xs <= 0.5 + 1e-12)
    sil = folded_silhouette(geom)
    assert np.isclose(sil.area, 0.5)


def test_flat_crease_does_not_fold():
    cp = CreasePattern.from_segments(np.array([*BORDER, ((0.5, 0), (0.5, 1))], float), "BBBBF")
    geom = fold_geometry(cp)
    assert not geom.flipped.any()
    assert np.allclose(geom.vertices, cp.vertices)
    assert np.isclose(folded_silhouette(geom).area, 1.0)


def test_faces_disagreeing_about_a_vertex_show_as_closure_error():
    # a 4-crease vertex off Kawasaki by 10 degrees cannot close up
    segs = [*BORDER, ((0.5, 0.5), (1, 0.5)), ((0.5, 0.5), (0.5, 1)), ((0.5, 0.5), (0, 0.5)), ((0.5, 0.5), (0.2, 0))]
    cp = CreasePattern.from_segments(np.array(segs, float), "BBBBMMMV")
    assert fold_geometry(cp).closure_error > 0.01
