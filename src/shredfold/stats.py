"""Bootstrap statistics for leaderboards: values in, values out (numpy only, no I/O).

Items are not independent: a ShredBench document is cut at every granularity N, and its
variants share the document's difficulty. So the unit of resampling is a *cluster* (a
document; an origami design): a bootstrap replicate draws clusters with replacement and
takes every item of a drawn cluster, and a statistic is the mean over the drawn items (the
same mean the leaderboard reports, so the interval is around the number shown).

Every random choice comes from a generator seeded from content keys (:func:`seed_of`): the
same items give the same interval on any machine, and adding an item changes it.

- :func:`cluster_ci` — a percentile interval for one model's mean;
- :func:`paired_diff` — the mean difference of two models on their shared items, its
  percentile interval, and a two-sided p-value from the bootstrap distribution shifted to
  the null (no difference);
- :func:`holm` — Holm's step-down adjustment of a family of p-values.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

REPLICATES = 2000
LEVEL = 0.95
# Replicates are drawn in blocks, so a paper-sized grid (hundreds of documents) stays within
# a few megabytes of indices whatever REPLICATES is.
_BLOCK = 256


def seed_of(*parts: object) -> int:
    """A 128-bit seed from the canonical JSON of ``parts`` (content keys, metric names)."""
    data = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return int(hashlib.sha256(data.encode("utf-8")).hexdigest()[:32], 16)


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    items: int
    clusters: int


@dataclass(frozen=True)
class PairedDiff:
    diff: float  # mean(a) - mean(b) over shared items
    low: float
    high: float
    p: float
    items: int
    clusters: int


def _clusters(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts, clusters in sorted order (so the result does not depend
    on the order the items came in)."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    names = sorted(set(clusters), key=str)
    index = {c: i for i, c in enumerate(names)}
    which = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite (leave undefined items out)")
    sums = np.bincount(which, weights=v, minlength=len(names))
    counts = np.bincount(which, minlength=len(names)).astype(np.float64)
    return sums, counts


def _replicate_means(sums: np.ndarray, counts: np.ndarray, seed: int, reps: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = len(sums)
    out = np.empty(reps)
    for start in range(0, reps, _BLOCK):
        n = min(_BLOCK, reps - start)
        draw = rng.integers(0, g, size=(n, g))
        out[start : start + n] = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    return out


def _percentiles(reps: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(reps, [tail, 1.0 - tail])
    return float(low), float(high)


def cluster_ci(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    seed: int,
    *,
    reps: int = REPLICATES,
    level: float = LEVEL,
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap interval, clusters resampled
    whole. One cluster gives a zero-width interval (nothing to resample)."""
    if not values:
        raise ValueError("no values")
    sums, counts = _clusters(values, clusters)
    mean = float(sums.sum() / counts.sum())
    low, high = _percentiles(_replicate_means(sums, counts, seed, reps), level)
    # The mean lies inside its own interval by construction; rounding noise must not say
    # otherwise when every replicate is equal.
    return Interval(mean, min(low, mean), max(high, mean), len(values), len(sums))


def paired_diff(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    seed: int,
    *,
    reps: int = REPLICATES,
    level: float = LEVEL,
) -> PairedDiff:
    """Model A minus model B on the same items (``a[i]`` and ``b[i]`` score item i).

    The interval is the percentile interval of the replicate differences. The p-value is
    two-sided, from the replicates shifted to mean zero (the null of no difference):
    ``(1 + #{|d* - d| >= |d|}) / (1 + reps)``. Identical models give a zero difference and
    p = 1; a constant shift gives an interval of exactly that shift and the smallest p; a
    single cluster gives no p-value (NaN).
    """
    if len(a) != len(b):
        raise ValueError(f"{len(a)} scores for A but {len(b)} for B")
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    sums, counts = _clusters(list(d), clusters)
    diff = float(sums.sum() / counts.sum())
    reps_d = _replicate_means(sums, counts, seed, reps)
    low, high = _percentiles(reps_d, level)
    # Differences within float rounding of zero are no difference (a - a can be 1e-17).
    tol = 1e-12 * max(1.0, float(np.abs(d).max(initial=0.0)))
    extreme = int(np.count_nonzero(np.abs(reps_d - diff) >= abs(diff) - tol))
    # One cluster has nothing to resample: every replicate is the observed difference, which
    # says nothing about noise, so there is no p-value (NaN) rather than the smallest one.
    p = min(1.0, (1 + extreme) / (1 + reps)) if len(sums) > 1 else math.nan
    return PairedDiff(diff, min(low, diff), max(high, diff), p, len(d), len(sums))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (monotone, capped at 1). NaN
    (no test) stays NaN and does not count in the family."""
    tested = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    m = len(tested)
    order = sorted(tested, key=lambda i: (pvalues[i], i))
    out = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out
