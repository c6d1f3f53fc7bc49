"""Bootstrap intervals and paired tests on cases whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from shredfold.stats import cluster_ci, holm, paired_diff, seed_of


def scores(n_docs: int = 30, per_doc: int = 3, seed: int = 7) -> tuple[list[float], list[str]]:
    rng = np.random.default_rng(seed)
    doc_level = rng.uniform(0.1, 0.7, n_docs)
    values, docs = [], []
    for d in range(n_docs):
        for _ in range(per_doc):
            values.append(float(np.clip(doc_level[d] + rng.normal(0, 0.05), 0, 1)))
            docs.append(f"doc{d}")
    return values, docs


def test_identical_models_differ_by_nothing() -> None:
    a, docs = scores()
    r = paired_diff(a, list(a), docs, seed_of("x"))
    assert r.diff == 0.0 and r.low == 0.0 and r.high == 0.0
    assert r.p == 1.0
    assert r.items == 90 and r.clusters == 30


def test_a_shifted_copy_has_the_shift_inside_its_interval_and_a_small_p() -> None:
    a, docs = scores()
    rng = np.random.default_rng(1)
    b = [v + 0.05 + rng.normal(0, 0.02) for v in a]  # B is worse (higher NED) by 0.05
    r = paired_diff(b, a, docs, seed_of("shift"))
    assert r.low < 0.05 < r.high
    assert abs(r.diff - 0.05) < 0.01
    assert r.p < 0.001


def test_an_exact_shift_gives_an_interval_of_exactly_that_shift() -> None:
    a, docs = scores()
    r = paired_diff([v + 0.25 for v in a], a, docs, seed_of("exact"))
    assert r.low == pytest.approx(0.25) and r.high == pytest.approx(0.25)
    assert r.p == 1 / 2001


def test_noise_without_a_shift_is_not_significant() -> None:
    a, docs = scores()
    rng = np.random.default_rng(3)
    b = [v + rng.normal(0, 0.03) for v in a]
    r = paired_diff(a, b, docs, seed_of("noise"))
    assert r.low < 0 < r.high and r.p > 0.05


def test_the_interval_is_reproducible_from_its_seed_and_independent_of_item_order() -> None:
    values, docs = scores()
    one = cluster_ci(values, docs, seed_of("m", "ned", ["k1", "k2"]))
    again = cluster_ci(list(reversed(values)), list(reversed(docs)), seed_of("m", "ned", ["k1", "k2"]))
    other = cluster_ci(values, docs, seed_of("m", "ned", ["k1", "k3"]))
    assert one == again
    assert (one.low, one.high) != (other.low, other.high)
    assert one.low < one.mean < one.high
    assert one.mean == pytest.approx(float(np.mean(values)))


def test_a_documents_items_are_resampled_together() -> None:
    # Ten items of one document at 0 and one item of another at 1: a replicate draws two
    # documents, and both draws are the second one with probability 1/4, so the upper end
    # of the interval is 1. Resampling items one by one would put it near 0.27.
    values = [0.0] * 10 + [1.0]
    docs = ["a"] * 10 + ["b"]
    r = cluster_ci(values, docs, seed_of("clusters"))
    assert r.mean == pytest.approx(1 / 11)
    assert r.low == 0.0 and r.high == 1.0
    assert r.clusters == 2


def test_one_cluster_has_a_zero_width_interval() -> None:
    r = cluster_ci([0.2, 0.4], ["d", "d"], 1)
    assert r.low == r.high == pytest.approx(0.3)


def test_holm_adjusts_step_down_and_stays_monotone() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []
    nan = float("nan")
    adjusted = holm([0.01, nan, 0.04])  # an untested pair is not part of the family
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.04) and adjusted[1] != adjusted[1]


def test_one_document_gives_no_p_value() -> None:
    r = paired_diff([0.1, 0.2], [0.3, 0.5], ["d", "d"], 1)
    assert r.diff == pytest.approx(-0.25) and r.p != r.p  # NaN


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        cluster_ci([float("nan")], ["d"], 1)
    with pytest.raises(ValueError, match="scores for A"):
        paired_diff([0.1], [0.1, 0.2], ["d"], 1)
