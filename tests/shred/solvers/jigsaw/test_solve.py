from __future__ import annotations

import numpy as np
import pytest
from jigsaw_puzzles import Puzzle, make_puzzle

from shredfold.shred.solvers.jigsaw.scoring import cluster_errors, join_correct
from shredfold.shred.solvers.jigsaw.solve import solve


def assert_exact(p: Puzzle) -> None:
    sol = solve(p.pieces)
    assert sol.complete, [len(c.members) for c in sol.clusters]
    cluster = sol.clusters[0]
    errors = cluster_errors(cluster.poses, cluster.members, p.truth,
                            [s.outline for s in sol.scraps])
    worst_px = max(e[0] for e in errors)
    worst_deg = max(e[1] for e in errors)
    assert worst_px <= 2.0 and worst_deg <= 1.0, (worst_px, worst_deg)


def test_four_pieces_reassemble_exactly(puzzle4: Puzzle) -> None:
    assert_exact(puzzle4)


def test_twelve_pieces_reassemble_exactly(puzzle12: Puzzle) -> None:
    assert_exact(puzzle12)


def test_every_accepted_join_is_right(puzzle12: Puzzle) -> None:
    sol = solve(puzzle12.pieces)
    assert len(sol.assembly.joins) == len(puzzle12.pieces) - 1
    for c in sol.assembly.joins:
        assert join_correct(c.i, c.j, c.pose, puzzle12.truth, sol.scraps[c.j].outline)


def test_a_missing_piece_still_yields_the_clusters_it_can() -> None:
    p = make_puzzle(12, seed=2, drop=5)
    sol = solve(p.pieces)
    assert sum(len(c.members) for c in sol.clusters) == 11
    assert len(sol.clusters[0].members) >= 6
    for c in sol.assembly.joins:
        assert join_correct(c.i, c.j, c.pose, p.truth, sol.scraps[c.j].outline)


def test_clusters_come_out_with_text_lines_level(puzzle12: Puzzle) -> None:
    sol = solve(puzzle12.pieces)
    cluster = sol.clusters[0]
    m = cluster.members[0]
    # Upright or upside down (OCR settles which): the page's x axis maps to +-x.
    rel = cluster.poses[m] @ np.linalg.inv(puzzle12.truth[m])
    angle = np.degrees(np.arctan2(rel[1, 0], rel[0, 0]))
    assert min(abs(angle), 180 - abs(angle)) < 0.5


@pytest.mark.parametrize("n", [1])
def test_a_single_piece_is_levelled_by_its_page_border(n: int) -> None:
    p = make_puzzle(n, seed=3)
    sol = solve(p.pieces)
    (cluster,) = sol.clusters
    rel = cluster.poses[0] @ np.linalg.inv(p.truth[0])
    angle = np.degrees(np.arctan2(rel[1, 0], rel[0, 0]))
    assert min(abs(angle), 180 - abs(angle)) < 0.2
    assert sum(s.border for s in sol.shapes[0].sides) == 4


@pytest.mark.slow
def test_the_model_reads_a_reassembled_page(puzzle4: Puzzle) -> None:
    import io

    from shredfold.metrics.text import ned
    from shredfold.models.builtin.jigsaw import JigsawOcr
    from shredfold.shred.prompts import build_request
    from shredfold.spec import ModelConfig

    def png(im: object) -> bytes:
        buf = io.BytesIO()
        im.save(buf, format="PNG")  # type: ignore[attr-defined]
        return buf.getvalue()

    request = build_request(kind="prose", lang="en", n=4, images=[png(p) for p in puzzle4.pieces],
                            composite=False, item=None)
    model = JigsawOcr(ModelConfig(id="jigsaw-ocr", adapter="jigsaw-ocr"))
    assert model.identity()["adapter"] == "jigsaw-ocr"
    answer = model.complete(request).text
    assert ned(answer, puzzle4.text, "prose") < 0.1
