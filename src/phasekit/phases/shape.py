"""Shape and periodic regimes in one series: offline change points by self-supervised
classification of subsequences (after ClaSP).

A power trace or an IPC series often changes *shape* (one periodic pattern gives way to
another) without its level changing enough for a level-shift detector; and a detector that
compares consecutive samples cuts every cycle of a periodic signal. This module follows ClaSP
(Ermshaus, Schäfer, Leser: "ClaSP: parameter-free time series segmentation", Data Mining and
Knowledge Discovery 37, 2023, and its reference implementation claspy, BSD-3):

1. **Window** ``w``: by SuSS (ClaSP section 4.3; claspy ``window_size.suss``): the smallest
   width whose sliding mean, standard deviation and range are, on average, close to the whole
   series' (score above 0.89 on a scale where width 1 is 0 and width n-1 is 1), found by an
   exponential then a binary search from 10 samples. ``window=`` overrides it. The window is
   found once, on the whole series, and kept for every sub-segment (as claspy does).
2. **k nearest neighbours** (k = 3) of every subsequence of length ``w`` by z-normalized
   Euclidean distance, excluding trivial matches within ``w // 2`` samples (ClaSP section
   4.1). Computed exactly, along the diagonals of the distance matrix with running dot
   products (the STOMP/SCRIMP order), in numba, in parallel over blocks of diagonals: O(m²)
   for m subsequences, O(m) memory. A subsequence of (numerically) constant values has no
   shape: two of them are at distance 0, and one against a non-constant one is at the
   distance of uncorrelated subsequences (2w). (claspy replaces their standard deviation by
   1, which makes two flat subsequences uncorrelated; ours makes a flat stretch a shape.)
3. **Classification-score profile** (ClaSP section 4.2): for every split ``s``, the
   subsequences are labelled left/right, each is predicted by the majority label of its
   neighbours (the ``w`` subsequences that straddle ``s`` are predicted "right", as claspy
   does), and the split is scored by the ROC AUC of those binary predictions (claspy's
   default score, with its argument order: the mean of the two classes' precisions). Scores
   are computed for splits at least ``5 w`` samples from either end (the exclusion radius).
   With k = 3 a subsequence is predicted "right" exactly when ``s`` is at most the median of
   its neighbours' offsets, so the counts of the confusion matrix for *all* splits come from
   prefix sums in O(m) (claspy evaluates each split in O(m), O(m²) in all): the profile costs
   nothing beside the neighbour search.
4. **Split and significance** (ClaSP section 4.4): the best split is kept when the
   Wilcoxon rank-sum test between the predicted labels left and right of it has p <= 1e-15
   (claspy's default for one series; normal approximation without tie correction, as
   claspy). When the whole range gives no significant split, ClaSP's ensemble of temporal
   constraints is tried: up to 9 random sub-ranges (at least twice the minimum segment),
   longest first, each scored (profile + length / n) / 2, stopping at the first significant
   split or when a sub-range does not beat the best so far (claspy ``ClaSPEnsemble`` with
   early stopping; the ranges are drawn as claspy draws them, from NumPy's legacy
   ``RandomState(seed)``, seed 2357). Our departure: a sub-range's split must also pass the
   test with the predictions of the whole range at that split (the larger p is kept). claspy
   tests a sub-range's split on labels sliced at the split's position in the whole range,
   which shifts them by the sub-range's start and makes such splits rarely pass; a plain
   local test instead added false changes (one on each of 2 of the 25 TSSB development
   series), the joint test none.
5. **Binary segmentation** (ClaSP section 4.5): segments are split best score first, each new
   segment getting its own neighbour search (neighbours within the segment); a split closer
   than the minimum segment (``5 w``) to an existing change point or an end is rejected; at
   most ``n // (5 w) - 1`` change points, or ``max_changes``.

Why it does not cut every cycle of a periodic signal: a subsequence's nearest neighbours in
a stationary periodic stretch lie one or more periods away on *both* sides of any split
inside it, so predictions there are no better than chance and the rank-sum test rejects the
split.

Input handling (our choices): NaN gaps are filled by linear interpolation between the
samples around them (constant extension at the ends) for the neighbour search only; change
points are reported on the original sample indices, the number of filled samples is in the
result, and an all-NaN series raises :class:`~phasekit.errors.InputError`. Infinite values
raise InputError. A constant series, or one shorter than two minimum segments (and at
least 40 samples are needed to search at all), returns no change point with an explanation.

Long series (ours): the exact neighbour search grows with the square of the series' length
(a 10-minute profile at 5 ms, 120 000 samples, took minutes). Two stated approximations keep
the cost near-linear:

- **Approximate neighbours** for a search over more than ``exact_up_to`` subsequences
  (:data:`EXACT_UP_TO`, 32 768; smaller segments of the binary segmentation are searched
  exactly). Every ``q``-th subsequence (``q = max(1, w // 4)``, half the trivial-match
  radius, or wider so that a search keeps at most :data:`ANCHORS_MAX` anchors, 131 072: the
  k-d tree's query was the largest cost of a search over a million subsequences, 21 s) is
  an anchor, sketched by the piecewise aggregate approximation of its
  z-normalized values (8 segment means, scaled so that the sketch distance is a lower bound
  of the z-normalized Euclidean distance: Keogh et al. 2001, PAA; with 16 the k-d tree took
  38 s of a 53 s search over 2.9 million samples, with 8 it takes 5 s). A k-d tree over the
  sketches gives each anchor its 13 nearest anchors (fewer when anchors are wider apart
  than half the trivial-match radius; (1 + 1)-approximate, scipy's ``eps``),
  the ``q`` subsequences around each are scored exactly, and the anchor keeps its 3 best
  non-trivial matches. Every subsequence then scores exactly the matches of its two
  surrounding anchors shifted by its offset from them, each one sample either way (a match
  of ``i`` shifted by one is usually a match of ``i + 1``: the diagonals of the distance
  matrix the exact search runs along, and along each of them the dot product runs from one
  subsequence to the next in O(1)), and keeps the best ``k``. Last, one round of
  NN-descent (Dong, Charikar, Li 2011: a neighbour's neighbour is likely a neighbour):
  every subsequence scores its neighbours' neighbours, each one subsequence either way,
  and keeps the best ``k`` (a candidate on the diagonal of one of the previous subsequence's
  takes its dot product from it in O(1)). On a day-long run compared every 17 samples this
  round replaces more than half the neighbours (a subsequence keeps 1.2 of its 3). Forced
  on the TSSB series it lowers the correlation lost at the third neighbour from 0.0156 to
  0.0141 (every 2 samples: 0.0135 to 0.0127), and with subsequences every 2 samples it
  raises the F1 of three series and lowers none (Crop from 0.20 to 1.00: the whole series'
  best split was a short-edge one the rank-sum test rejected, which ended the search). So
  that it costs no more, the anchors keep 3 matches from 4 extra tree neighbours, where they
  kept 6 from 8. O(m log m) for the tree, O(m w) for the anchors' scoring and the last
  round, O(m) memory. A split of such a search must also score at least
  :data:`APPROXIMATE_AUC` (0.55, where chance is 0.5): over many subsequences the rank-sum
  test finds chance-level differences significant, and the approximate neighbours'
  predictions, shifted from a few anchors' matches, differ from chance more than exact ones
  do (in the 81 000-sample aperiodic start of a NEMO-like run the approximate search's best
  split scored 0.52 with p 5e-20, the exact search's 0.54 with p 0.09). Every change point
  the exact search finds on the TSSB and DCSLab series scores 0.60 or more. With every
  search forced through the approximation, the mean F1 on the TSSB series is 0.858 against
  0.801 exact (benchmarks/shape_coarse.py): the neighbours differ, the change points mostly
  not (the F1 of 18 of the 25 series is the exact one's).
- **Subsequences every f-th sample** above ``full_resolution_up_to`` samples
  (:data:`FULL_RESOLUTION_UP_TO`, 1 048 576: about 87 minutes at 5 ms): only the
  subsequences starting every ``f = ceil(n / full_resolution_up_to)`` samples are compared,
  each still ``w`` samples long (the window found by SuSS on every sample, or the given
  one), and everything above runs on them as on every subsequence: the trivial-match radius
  is ``w // 2`` samples, the ``w`` straddling subsequences and the minimum segment are
  counted in strides, the ensemble's sub-ranges start on a stride, and each change point
  is the start of a compared subsequence, located within ``f`` samples (``coarse_factor``
  in the result). Along a diagonal the dot product moves a stride at a time, in ``2 f``
  products (afresh, ``w`` products, when ``2 f >= w``); so that an exact search costs no
  more than one over ``exact_up_to`` subsequences of every sample (two products a cell),
  it compares at most ``exact_up_to / sqrt(min(f, w / 2))`` of them. Where ``f`` exceeds
  the window (more than ``w`` million samples: a day at 5 ms with a window under 17
  samples) the samples between two compared subsequences lie in none, and a shape that
  lasts less than ``f`` samples can go unseen. Forced on the TSSB series (windows of
  10-53 samples) with subsequences every 2 samples and exact neighbours, the mean F1 is
  0.797 against 0.801 exact; with approximate neighbours as well, 0.793. Every 4 samples,
  0.748 with exact neighbours and 0.709 with approximate ones: a window of 10 samples is
  then compared at 2 or 3 starts a window (benchmarks/shape_coarse.py). Averaging blocks of
  ``f`` samples instead, as this module did before, gave 0.686 and 0.600: a shape that
  changes within a block is averaged away, and a window of a few means has no shape to
  compare. On NEMO-like runs of
  10 minutes to 24 hours the boundaries are found at every length (benchmarks/scale.py).

``exact_up_to=None`` keeps the exact search and ``full_resolution_up_to=None`` every sample,
at any length; the result says which approximation ran (``approximate``,
``coarse_factor``, the explanation).

Cost: the neighbour search is O(m²) per segment, about twice that for a whole binary
segmentation (halving segments); the profile is O(m). On the 25 TSSB development series
(138 538 samples, 2 shared cores) 0.10-0.12 ms per sample warm, 3.5 to 4.6 times less than claspy
0.2.8 on the same series and machine, with the same change points on every one of them
(``benchmarks/segmentation_tssb.py``, RESULTS.md).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from phasekit.errors import InputError, UsageError
from phasekit.parallel import worker_threads
from phasekit.phases.identify import ID_SKIP
from phasekit.phases.registry import Detection, PhaseDetector, register_detector

__all__ = ["ShapeDetector", "ShapeSegmentation", "shape_change_points", "suss_window"]

K_NEIGHBOURS = 3          # ClaSP section 4.1 / claspy default
EXCLUSION_RADIUS = 5      # minimum segment = 5 windows (claspy ``excl_radius``)
P_THRESHOLD = 1e-15       # significance of a split (claspy default for one series)
N_ESTIMATORS = 10         # temporal constraints of the ensemble, the whole range included
SUSS_THRESHOLD = 0.89     # claspy ``suss(threshold=.89)``
SUSS_LOWER = 10           # claspy ``suss(lbound=10)``
MIN_SAMPLES = 40          # below this no search at all (our choice: 2 segments of 2 windows)
FLAT_STD = 1e-8           # a subsequence whose std is below this (series scaled to std 1) is flat
EXACT_UP_TO = 32_768      # larger searches use approximate neighbours (module docstring)
APPROXIMATE_AUC = 0.55    # an approximate search's split scores at least this (chance: 0.5)
FULL_RESOLUTION_UP_TO = 1_048_576  # longer series compare every f-th subsequence
ANCHOR_SKETCH = 8         # PAA segments of an anchor's sketch
ANCHORS_MAX = 131_072     # at most this many anchors in one search (the k-d tree's cost)
ANCHOR_EXTRA = 4          # nearest anchors asked beyond k and the trivial ones
ANCHOR_KEEP = 3           # matches an anchor keeps for its neighbours to shift
TREE_EPS = 1.0            # the k-d tree's (1 + eps)-approximate nearest anchors


@dataclass(frozen=True, eq=False)
class ShapeSegmentation:
    """Change points of shape regimes in one series (see the module docstring).

    - ``change_points``: sorted int64 sample indices, each the first sample of a new segment.
    - ``window``: the subsequence length used; ``window_method``: ``"suss"`` or ``"given"``.
    - ``scores``: classification score (ROC AUC, 0.5 chance to 1 perfect) of each change
      point, and ``p_values`` its rank-sum test, both in ``change_points`` order.
    - ``profile``: float64 of ``n_samples``: the best classification score of a split at
      each sample over all the segments searched (NaN where no split was scored).
    - ``filled``: how many NaN samples were interpolated for the search.
    - ``explanation``: why nothing (or what) was found, in one sentence.
    - ``coarse_factor``: the subsequences compared start every this many samples (1: at
      every sample); the change points are within that many samples.
    - ``approximate``: whether the whole series' neighbours were searched approximately
      (more than ``exact_up_to`` subsequences; module docstring).
    """

    change_points: np.ndarray
    window: int
    n_samples: int
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0))
    p_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    profile: np.ndarray = field(default_factory=lambda: np.zeros(0))
    window_method: str = "suss"
    filled: int = 0
    explanation: str = ""
    coarse_factor: int = 1
    approximate: bool = False

    @property
    def n_segments(self) -> int:
        return len(self.change_points) + 1

    def segments(self) -> list[tuple[int, int]]:
        """``[(start, end), ...]`` half-open sample ranges of the segments."""
        bounds = [0, *map(int, self.change_points), self.n_samples]
        return list(itertools.pairwise(bounds))

    def to_dict(self) -> dict[str, Any]:
        profile = [None if not np.isfinite(v) else float(v) for v in self.profile]
        return {"kind": "shape_segmentation", "version": 1,
                "change_points": [int(c) for c in self.change_points], "window": self.window,
                "window_method": self.window_method, "n_samples": self.n_samples,
                "scores": [float(s) for s in self.scores],
                "p_values": [float(p) for p in self.p_values], "profile": profile,
                "filled": self.filled, "explanation": self.explanation,
                "coarse_factor": self.coarse_factor, "approximate": self.approximate}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> ShapeSegmentation:
        profile = np.array([np.nan if v is None else v for v in data.get("profile", [])],
                           dtype=np.float64)
        return ShapeSegmentation(
            change_points=np.asarray(data["change_points"], dtype=np.int64),
            window=int(data["window"]), n_samples=int(data["n_samples"]),
            scores=np.asarray(data.get("scores", []), dtype=np.float64),
            p_values=np.asarray(data.get("p_values", []), dtype=np.float64),
            profile=profile, window_method=str(data.get("window_method", "suss")),
            filled=int(data.get("filled", 0)), explanation=str(data.get("explanation", "")),
            coarse_factor=int(data.get("coarse_factor", 1)),
            approximate=bool(data.get("approximate", False)))

    def __repr__(self) -> str:
        return (f"ShapeSegmentation({len(self.change_points)} change points "
                f"{self.change_points.tolist()}, window={self.window}, n={self.n_samples})")


# --- input ---------------------------------------------------------------------------------
def _prepare(x: Any) -> tuple[np.ndarray, int]:
    """1-D float64 copy with NaN gaps interpolated, and how many were filled."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"shape segmentation needs numbers: {exc}") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"shape segmentation takes one series (1-D), got shape {arr.shape}")
    if np.isinf(arr).any():
        raise InputError(f"the series has infinite values (first at sample "
                         f"{int(np.flatnonzero(np.isinf(arr))[0])})")
    missing = np.isnan(arr)
    filled = int(missing.sum())
    if filled and filled == arr.size:
        raise InputError("the series has no finite value (all NaN)")
    if filled:
        idx = np.arange(arr.size)
        arr = arr.copy()
        arr[missing] = np.interp(idx[missing], idx[~missing], arr[~missing])
    return np.ascontiguousarray(arr), filled


# --- SuSS window ---------------------------------------------------------------------------
@njit(cache=True)
def _suss_score(x: np.ndarray, w: int, mean: float, std: float, rng: float) -> float:
    """claspy ``_suss_score``: mean over the windows of width ``w`` ending at samples w..n-1
    of the distance between (mean, std, max - min) of the window and of the whole series,
    divided by sqrt(w). Rolling min/max by monotonic deques, O(n)."""
    n = x.shape[0]
    if w >= n:
        return 0.0
    qmax = np.empty(n, np.int64)
    qmin = np.empty(n, np.int64)
    hmax = tmax = hmin = tmin = 0
    s = 0.0
    s2 = 0.0
    total = 0.0
    count = 0
    for t in range(n):
        v = x[t]
        s += v
        s2 += v * v
        if t >= w:
            u = x[t - w]
            s -= u
            s2 -= u * u
        while tmax > hmax and x[qmax[tmax - 1]] <= v:
            tmax -= 1
        qmax[tmax] = t
        tmax += 1
        while tmin > hmin and x[qmin[tmin - 1]] >= v:
            tmin -= 1
        qmin[tmin] = t
        tmin += 1
        if qmax[hmax] <= t - w:
            hmax += 1
        if qmin[hmin] <= t - w:
            hmin += 1
        if t >= w:
            m = s / w
            var = s2 / w - m * m
            sd = math.sqrt(var) if var > 0.0 else 0.0
            r = x[qmax[hmax]] - x[qmin[hmin]]
            dm = m - mean
            ds = sd - std
            dr = r - rng
            total += math.sqrt(dm * dm + ds * ds + dr * dr)
            count += 1
    if count == 0:
        return 0.0
    return total / count / math.sqrt(w)


def suss_window(x: np.ndarray, *, lower: int = SUSS_LOWER,
                threshold: float = SUSS_THRESHOLD) -> int:
    """The SuSS subsequence width of ``x`` (ClaSP section 4.3; claspy ``suss`` then halved
    as ``BinaryClaSPSegmentation`` does), at least 3; ``lower`` for a constant series."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if n < lower:
        return max(3, n // 2)
    lo_v, hi_v = float(x.min()), float(x.max())
    if lo_v == hi_v:
        return max(3, lower)
    z = (x - lo_v) / (hi_v - lo_v)
    stats = (float(z.mean()), float(z.std()), 1.0)
    max_score = _suss_score(z, 1, *stats)
    min_score = _suss_score(z, n - 1, *stats)
    if min_score == max_score:
        return max(3, lower)

    def score(w: int) -> float:
        return 1.0 - (_suss_score(z, w, *stats) - min_score) / (max_score - min_score)

    exp = 0
    while True:
        w = 2 ** exp
        if w >= lower and (score(w) > threshold or w >= n):
            break
        exp += 1
    lo, hi = max(lower, 2 ** (exp - 1)), 2 ** exp + 1
    while lo <= hi:
        w = (lo + hi) // 2
        sc = score(w)
        if sc < threshold:
            lo = w + 1
        elif sc > threshold:
            hi = w - 1
        else:
            break
    return max(3, lo)


# --- kernels -------------------------------------------------------------------------------
def _sliding_stats(x: np.ndarray, w: int, stride: int = 1
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation and a flat flag of the subsequences of length ``w`` that
    start every ``stride`` samples."""
    if stride == 1:
        c1 = np.concatenate(([0.0], np.cumsum(x)))
        c2 = np.concatenate(([0.0], np.cumsum(x * x)))
        mu = (c1[w:] - c1[:-w]) / w
        var = (c2[w:] - c2[:-w]) / w - mu * mu
    else:
        mu, var = _strided_moments(x, w, stride)
    sd = np.sqrt(np.clip(var, 0.0, None))
    flat = sd < FLAT_STD + 1e-7 * np.abs(mu)
    return mu, np.where(flat, 1.0, sd), flat


@njit(cache=True, parallel=True)
def _strided_moments(x: np.ndarray, w: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the subsequences of length ``w`` starting every ``stride``
    samples, each summed on its own (fewer passes over a long series than prefix sums)."""
    m = max(0, (x.shape[0] - w) // stride + 1)
    mu = np.empty(m)
    var = np.empty(m)
    for i in prange(m):
        s1 = 0.0
        s2 = 0.0
        for t in range(i * stride, i * stride + w):
            s1 += x[t]
            s2 += x[t] * x[t]
        mu[i] = s1 / w
        var[i] = s2 / w - mu[i] * mu[i]
    return mu, var


@njit(cache=True, inline="always")
def _insert(best_d: np.ndarray, best_i: np.ndarray, row: int, d: float, j: int) -> None:
    k = best_d.shape[1]
    if d >= best_d[row, k - 1]:
        return
    p = k - 1
    while p > 0 and best_d[row, p - 1] > d:
        best_d[row, p] = best_d[row, p - 1]
        best_i[row, p] = best_i[row, p - 1]
        p -= 1
    best_d[row, p] = d
    best_i[row, p] = j


@njit(cache=True, inline="always")
def _next_dot(x: np.ndarray, w: int, stride: int, dot: float, fresh: bool, i: int, j: int
              ) -> float:
    """The dot product of the subsequences starting at samples i and j, from ``dot``, that
    of the pair ``stride`` samples earlier (or afresh: ``fresh``, or a stride of half a
    window or more)."""
    if fresh or 2 * stride >= w:
        dot = 0.0
        for t in range(w):
            dot += x[i + t] * x[j + t]
        return dot
    for t in range(stride):
        dot += x[i + w - stride + t] * x[j + w - stride + t] - x[i - stride + t] * x[j - stride + t]
    return dot


@njit(cache=True)
def _knn_block(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
               stride: int, g0: int, g1: int, best_d: np.ndarray, best_i: np.ndarray) -> None:
    """Neighbours along diagonals g0 <= j - i < g1 of the subsequences of ``x`` (length w,
    subsequence i starting at sample i * stride)."""
    m = mu.shape[0]
    two_w = 2.0 * w
    for g in range(g0, g1):
        dot = 0.0
        for i in range(m - g):
            j = i + g
            # fresh dot product now and then: no drift along long diagonals
            dot = _next_dot(x, w, stride, dot, i % 2048 == 0, i * stride, j * stride)
            if flat[i] or flat[j]:
                d = 0.0 if (flat[i] and flat[j]) else two_w
            else:
                corr = (dot - w * mu[i] * mu[j]) / (w * sd[i] * sd[j])
                d = two_w * (1.0 - corr)
            _insert(best_d, best_i, i, d, j)
            _insert(best_d, best_i, j, d, i)


@njit(cache=True, parallel=True)
def _knn_parallel(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
                  stride: int, k: int, bounds: np.ndarray) -> np.ndarray:
    """k nearest neighbours (indices, nearest first) of every subsequence of ``x`` (one
    every ``stride`` samples), trivial matches excluded by the first diagonal ``bounds[0]``;
    blocks of diagonals ``bounds[b]:bounds[b+1]`` in parallel, each with its own lists,
    merged at the end."""
    m = mu.shape[0]
    nb = bounds.shape[0] - 1
    all_d = np.full((nb, m, k), np.inf)
    all_i = np.full((nb, m, k), -1, np.int64)
    for b in prange(nb):
        _knn_block(x, mu, sd, flat, w, stride, bounds[b], bounds[b + 1], all_d[b], all_i[b])
    best_d = all_d[0].copy()
    best_i = all_i[0].copy()
    for b in range(1, nb):
        for r in range(m):
            for q in range(k):
                if all_i[b, r, q] >= 0:
                    _insert(best_d, best_i, r, all_d[b, r, q], all_i[b, r, q])
    return best_i


def _exact_limit(exact_up_to: int | None, w: int, stride: int) -> int | None:
    """The most subsequences an exact search compares: ``exact_up_to`` when they start at
    every sample; fewer when they start every ``stride`` samples, as each cell of the
    distance matrix then costs up to ``min(2 stride, w)`` products instead of two, so that
    the exact search's cost stays within that of ``exact_up_to`` subsequences."""
    if exact_up_to is None or stride == 1:
        return exact_up_to
    return max(2 * MIN_SAMPLES, math.isqrt(exact_up_to ** 2 // max(1, min(stride, w // 2))))


def _approximate(m: int, exact_up_to: int | None) -> bool:
    """Whether a search over ``m`` subsequences finds approximate neighbours (``exact_up_to``:
    the limit of :func:`_exact_limit`)."""
    return exact_up_to is not None and m > exact_up_to


def _starts(n: int, w: int, stride: int) -> int:
    """How many subsequences of length ``w`` start every ``stride`` samples of ``n``."""
    return (n - w) // stride + 1


def _trivial(w: int, stride: int) -> int:
    """The trivial-match radius in subsequences (``w // 2`` samples; ClaSP section 4.1)."""
    return (w // 2) // stride


def _knn(x: np.ndarray, w: int, k: int = K_NEIGHBOURS, exact_up_to: int | None = None,
         stride: int = 1) -> np.ndarray:
    """(m, k) neighbour indices of the m subsequences of ``x`` that start every ``stride``
    samples: exact, or approximate when m exceeds ``exact_up_to`` (module docstring)."""
    if _approximate(_starts(x.shape[0], w, stride), _exact_limit(exact_up_to, w, stride)):
        return _approximate_knn(x, w, k, stride)
    mu, sd, flat = _sliding_stats(x, w, stride)
    m = mu.shape[0]
    g0 = _trivial(w, stride) + 1
    blocks = max(1, min(4 * numba.get_num_threads(), (m - g0) // 64))
    # equal work per block: diagonal g has m - g cells
    cells = np.cumsum(np.arange(m - g0, 0, -1, dtype=np.float64))
    cuts = np.searchsorted(cells, cells[-1] * np.arange(1, blocks) / blocks) + g0
    bounds = np.unique(np.concatenate(([g0], cuts, [m]))).astype(np.int64)
    return _knn_parallel(np.ascontiguousarray(x), mu, sd, flat, w, stride, k, bounds)


@njit(cache=True)
def _distance(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
              stride: int, i: int, j: int) -> float:
    """z-normalized squared Euclidean distance of subsequences i and j (starting at samples
    i * stride and j * stride; flat ones as in the exact search)."""
    dot = 0.0
    if not (flat[i] or flat[j]):
        for t in range(w):
            dot += x[i * stride + t] * x[j * stride + t]
    return _from_dot(dot, mu, sd, flat, w, i, j)


@njit(cache=True)
def _from_dot(dot: float, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int, i: int,
              j: int) -> float:
    """The z-normalized squared Euclidean distance of subsequences i and j from their dot
    product (flat ones as in the exact search)."""
    if flat[i] or flat[j]:
        return 0.0 if (flat[i] and flat[j]) else 2.0 * w
    return 2.0 * w * (1.0 - (dot - w * mu[i] * mu[j]) / (w * sd[i] * sd[j]))


@njit(cache=True)
def _keep(best_d: np.ndarray, best_i: np.ndarray, d: float, j: int) -> None:
    """Insert (d, j) into the sorted lists unless it is no better than the last or ``j`` is
    already there."""
    k = best_d.shape[0]
    if d >= best_d[k - 1]:
        return
    for t in range(k):
        if best_i[t] == j:
            return
    p = k - 1
    while p > 0 and best_d[p - 1] > d:
        best_d[p] = best_d[p - 1]
        best_i[p] = best_i[p - 1]
        p -= 1
    best_d[p] = d
    best_i[p] = j


@njit(cache=True, parallel=True)
def _anchor_matches(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
                    stride: int, excl: int, q: int, nearest: np.ndarray, keep: int
                    ) -> np.ndarray:
    """The ``keep`` best non-trivial matches of every anchor (subsequence a * q), scored
    exactly over the q subsequences around each of its ``nearest`` anchors (anchors in
    parallel)."""
    m = mu.shape[0]
    out = np.full((nearest.shape[0], keep), -1, np.int64)
    for a in prange(nearest.shape[0]):
        i = a * q
        best_d = np.full(keep, np.inf)
        for c in range(nearest.shape[1]):
            centre = nearest[a, c] * q
            for j in range(max(0, centre - q // 2), min(m, centre + q - q // 2)):
                if abs(j - i) > excl:
                    _keep(best_d, out[a], _distance(x, mu, sd, flat, w, stride, i, j), j)
    return out


@njit(cache=True)
def _offsets(matches: np.ndarray, first: int, q: int, excl: int) -> np.ndarray:
    """The distinct diagonals (offsets j - i, in subsequences) of anchor ``first``'s and the
    next anchor's matches, each one subsequence either way, beyond the trivial-match
    radius."""
    n_anchors, keep = matches.shape
    found = np.empty(2 * keep * 3, np.int64)
    count = 0
    for a in range(first, min(n_anchors, first + 2)):
        for c in range(keep):
            if matches[a, c] < 0:
                continue
            for d in range(-1, 2):
                offset = matches[a, c] - a * q + d
                if abs(offset) > excl:
                    found[count] = offset
                    count += 1
    return np.unique(found[:count])


@njit(cache=True, parallel=True)
def _shifted_matches(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
                     stride: int, excl: int, q: int, matches: np.ndarray, k: int
                     ) -> np.ndarray:
    """The k best of every subsequence among its two surrounding anchors' matches, shifted
    by its offset from each anchor and one subsequence either way, scored exactly: along
    each such diagonal of the distance matrix the dot product runs from one subsequence to
    the next in O(1) at every sample, O(stride) otherwise (:func:`_next_dot`; rows in
    parallel chunks of one anchor's subsequences)."""
    m = mu.shape[0]
    n_anchors = matches.shape[0]
    out = np.full((m, k), -1, np.int64)
    for first in prange(n_anchors):
        offsets = _offsets(matches, first, q, excl)
        lo, hi = first * q, min(m, first * q + q)
        best = np.full((hi - lo, k), np.inf)
        for offset in offsets:
            running = False
            dot = 0.0
            for i in range(lo, hi):
                j = i + offset
                if j < 0 or j >= m:
                    running = False
                    continue
                dot = _next_dot(x, w, stride, dot, not running, i * stride, j * stride)
                running = True
                _keep(best[i - lo], out[i], _from_dot(dot, mu, sd, flat, w, i, j), j)
        for i in range(lo, hi):
            spare = excl + 1  # a row left short (never seen in practice) takes far offsets
            for t in range(k):
                if out[i, t] < 0:
                    while abs((i + spare) % m - i) <= excl and spare < m:
                        spare += 1
                    out[i, t] = (i + spare) % m
                    spare += 1
    return out


@njit(cache=True, inline="always")
def _slot(keys: np.ndarray, c: int) -> int:
    """The slot of ``c`` in an open-addressing table of non-negative keys (-1: empty), or
    the empty slot where it would go."""
    mask = keys.shape[0] - 1
    h = (c * 40503) & mask
    while keys[h] >= 0 and keys[h] != c:
        h = (h + 1) & mask
    return h


@njit(cache=True, parallel=True)
def _neighbours_of_neighbours(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray,
                              w: int, stride: int, excl: int,
                              nbr: np.ndarray) -> np.ndarray:
    """The k best of every subsequence among its k neighbours and their own k neighbours,
    each one subsequence either way, scored exactly (one round of NN-descent: a neighbour's
    neighbour is likely a neighbour; Dong, Charikar, Li 2011). Rows run in order within
    blocks of 2048, in parallel over blocks: a candidate whose predecessor was the previous
    row's candidate (the same diagonal) takes its dot product from it (:func:`_next_dot`),
    the others afresh."""
    m, k = nbr.shape
    out = np.empty_like(nbr)
    block = 2048
    size = 1
    while size < 2 * (k + 3 * k * k):
        size *= 2
    for first in prange((m + block - 1) // block):
        best_d = np.empty(k)
        keys = np.full(size, -1, np.int64)
        dots = np.empty(size)
        prev_keys = np.full(size, -1, np.int64)
        prev_dots = np.empty(size)
        lo = first * block
        for i in range(lo, min(m, lo + block)):
            best_d[:] = np.inf
            out[i, :] = -1
            keys[:] = -1
            for t in range(k + k * k * 3):
                if t < k:
                    c = nbr[i, t]
                else:
                    r = t - k
                    c = nbr[nbr[i, r // (3 * k)], (r // 3) % k] + r % 3 - 1
                if c < 0 or c >= m or abs(c - i) <= excl:
                    continue
                h = _slot(keys, c)
                if keys[h] == c:
                    continue
                p = _slot(prev_keys, c - 1) if (i > lo and c > 0) else -1
                if p >= 0 and prev_keys[p] == c - 1:
                    dot = _next_dot(x, w, stride, prev_dots[p], False, i * stride, c * stride)
                else:
                    dot = _next_dot(x, w, stride, 0.0, True, i * stride, c * stride)
                keys[h] = c
                dots[h] = dot
                _keep(best_d, out[i], _from_dot(dot, mu, sd, flat, w, i, c), c)
            if out[i, k - 1] < 0:  # fewer than k distinct candidates: the row as it was
                out[i, :] = nbr[i]
            keys, prev_keys = prev_keys, keys
            dots, prev_dots = prev_dots, dots
    return out


def _sketches(x: np.ndarray, mu: np.ndarray, sd: np.ndarray, flat: np.ndarray, w: int,
              stride: int, anchors: np.ndarray) -> np.ndarray:
    """PAA of the z-normalized subsequences ``anchors`` (starting at ``anchors * stride``),
    scaled so that the Euclidean distance of two sketches is at most that of the
    subsequences (Keogh et al. 2001)."""
    starts = anchors * stride
    edges = np.round(np.linspace(0, w, min(ANCHOR_SKETCH, w) + 1)).astype(np.int64)
    sketch = np.empty((starts.size, edges.size - 1))
    for s, (lo, hi) in enumerate(itertools.pairwise(edges)):
        sums = np.zeros(starts.size)
        for t in range(lo, hi):  # the anchors' own samples, not prefix sums of the series
            sums += x[starts + t]
        sketch[:, s] = (sums / (hi - lo) - mu[anchors]) / sd[anchors] * math.sqrt(hi - lo)
    sketch[flat[anchors]] = 0.0
    return sketch


def _approximate_knn(x: np.ndarray, w: int, k: int = K_NEIGHBOURS, stride: int = 1
                     ) -> np.ndarray:
    """(m, k) approximate neighbour indices of the subsequences starting every ``stride``
    samples: anchors, their sketches' k-d tree, matches shifted along the diagonals, then
    the neighbours' neighbours (module docstring)."""
    from scipy.spatial import cKDTree

    x = np.ascontiguousarray(x)
    mu, sd, flat = _sliding_stats(x, w, stride)
    excl = _trivial(w, stride)
    q = max(1, excl // 2, math.ceil(mu.shape[0] / ANCHORS_MAX))
    sketch = _sketches(x, mu, sd, flat, w, stride, np.arange(0, mu.shape[0], q))
    asked = min(sketch.shape[0], k + 2 * (excl // q + 1) + ANCHOR_EXTRA)
    _, nearest = cKDTree(sketch).query(sketch, k=asked, eps=TREE_EPS,
                                       workers=worker_threads())
    nearest = np.asarray(nearest, dtype=np.int64).reshape(sketch.shape[0], asked)
    matches = _anchor_matches(x, mu, sd, flat, w, stride, excl, q, nearest, ANCHOR_KEEP)
    shifted = _shifted_matches(x, mu, sd, flat, w, stride, excl, q, matches, k)
    return _neighbours_of_neighbours(x, mu, sd, flat, w, stride, excl, shifted)


@njit(cache=True)
def _profile_counts(nbr: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """For every split s (0..m) of m subsequences: a(s), subsequences i >= s predicted right,
    and b(s), subsequences i < s predicted right (the w straddling ones included), where i
    is predicted right when most of its k neighbours start at or after s."""
    m, k = nbr.shape
    need = k // 2 + 1                 # neighbours at or after s for a "right" vote
    hist = np.zeros(m + 2, np.int64)  # hist[v]: subsequences whose vote turns at v
    d_u = np.zeros(m + 2, np.int64)   # i < s <= med_i
    d_e = np.zeros(m + 2, np.int64)   # i in [s - w, s) with med_i < s
    tmp = np.empty(k, np.int64)
    for i in range(m):
        for q in range(k):
            tmp[q] = nbr[i, q]
        tmp.sort()
        med = tmp[k - need]           # predicted right iff s <= med
        hist[med] += 1
        if med > i:
            d_u[i + 1] += 1
            d_u[med + 1] -= 1
        lo = max(i, med) + 1
        hi = i + w
        if hi > m:
            hi = m
        if lo <= hi:
            d_e[lo] += 1
            d_e[hi + 1] -= 1
    a = np.zeros(m + 1, np.int64)
    b = np.zeros(m + 1, np.int64)
    tail = 0                          # #{i: med_i >= s}
    tails = np.zeros(m + 1, np.int64)
    for s in range(m, -1, -1):
        tail += hist[s]
        tails[s] = tail
    u = 0
    e = 0
    for s in range(m + 1):
        u += d_u[s]
        e += d_e[s]
        a[s] = tails[s] - u
        b[s] = u + e
    return a, b


def _profile(nbr: np.ndarray, w: int, min_seg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC AUC profile (NaN outside the allowed splits) and the counts a, b (module doc)."""
    m = nbr.shape[0]
    a, b = _profile_counts(nbr, w)
    s = np.arange(m + 1)
    c = (m - s) - a
    d = s - b
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = 0.5 * (a / (a + b) + d / (c + d))
    auc[(a + b == 0) | (c + d == 0)] = np.nan
    ok = (s >= min_seg) & (s < m - min_seg + w)
    auc[~ok] = np.nan
    return auc, a, b


def _rank_sum_p(s: int, m: int, ones_left: int, ones_total: int) -> float:
    """Two-sided p of claspy's rank-sum test between the binary predictions left of ``s``
    (``ones_left`` ones among s) and right of it (m - s values), no tie correction."""
    n1, n2 = s, m - s
    if n1 == 0 or n2 == 0:
        return 1.0
    zeros = m - ones_total
    r0 = (zeros + 1) / 2.0 if zeros else 0.0
    r1 = zeros + (ones_total + 1) / 2.0 if ones_total else 0.0
    rank_sum = (n1 - ones_left) * r0 + ones_left * r1
    expected = n1 * (m + 1) / 2.0
    z = (rank_sum - expected) / math.sqrt(n1 * n2 * (m + 1) / 12.0)
    return math.erfc(abs(z) / math.sqrt(2.0))


@dataclass
class _Split:
    cp: int            # in the coordinates of the searched range
    score: float       # ensemble score (profile + length share) / 2, claspy's priority
    auc: float
    p: float
    profile: np.ndarray  # AUC profile over the range, by sample (NaN outside)
    lo: int            # the sub-range the split came from, relative to the searched range


def _clasp(x: np.ndarray, w: int, min_seg: int, total: int, exact_up_to: int | None,
           stride: int = 1
           ) -> tuple[int, float, float, float, np.ndarray, np.ndarray, np.ndarray]:
    """One ClaSP on ``x`` with subsequences starting every ``stride`` samples: best split
    (a sample), its AUC, p value, priority score, the profile by sample and the counts a, b
    of every split between subsequences (for testing other splits of the same range)."""
    nbr = _knn(x, w, exact_up_to=exact_up_to, stride=stride)
    auc, a, b = _profile(nbr, math.ceil(w / stride), math.ceil(min_seg / stride))
    by_sample = np.repeat(auc, stride)[:x.shape[0]]
    if not np.isfinite(auc).any():
        return -1, np.nan, 1.0, -np.inf, by_sample, a, b
    cp = int(np.nanargmax(auc))
    p = _rank_sum_p(cp, nbr.shape[0], int(b[cp]), int(a[cp] + b[cp]))
    if (_approximate(nbr.shape[0], _exact_limit(exact_up_to, w, stride))
            and auc[cp] < APPROXIMATE_AUC):
        p = 1.0
    score = (auc[cp] + x.shape[0] / total) / 2.0
    return cp * stride, float(auc[cp]), p, float(score), by_sample, a, b


def _ensemble(x: np.ndarray, w: int, min_seg: int, threshold: float, seed: int,
              exact_up_to: int | None, stride: int = 1) -> _Split | None:
    """ClaSP with temporal constraints and early stopping (module docstring, step 4); the
    sub-ranges start on a multiple of ``stride``, as the subsequences do."""
    n = x.shape[0]
    ranges = [(0, n)]
    if n > 3 * min_seg:
        rng = np.random.RandomState(seed)  # claspy's generator and draws: the same ranges
        tries = 0
        while len(ranges) < N_ESTIMATORS and tries < 1000:
            tries += 1
            lo, area = (int(v) for v in rng.choice(n, 2, replace=True))
            lo -= lo % stride
            hi = lo + min(area, n - lo)
            if hi - lo >= 2 * min_seg:
                ranges.append((lo, hi))
    ranges.sort(key=lambda r: r[1] - r[0], reverse=True)
    best: _Split | None = None
    whole: tuple[np.ndarray, np.ndarray] | None = None
    for lo, hi in ranges:
        cp, auc, p, score, profile, a, b = _clasp(x[lo:hi], w, min_seg, n, exact_up_to,
                                                  stride)
        if whole is None:
            whole = (a, b)
        elif cp >= 0:  # a sub-range's split must also separate the whole range
            c = (lo + cp) // stride
            a0, b0 = whole
            p = max(p, _rank_sum_p(c, a0.shape[0] - 1, int(b0[c]), int(a0[c] + b0[c])))
        if cp < 0:
            continue
        if best is None or score > best.score:
            full = np.full(n, np.nan)
            full[lo:lo + profile.shape[0]] = profile
            best = _Split(cp=lo + cp, score=score, auc=auc, p=p, profile=full, lo=lo)
        else:
            break
        if best.p <= threshold:
            break
    return best


def _explain_none(n: int, w: int, min_seg: int, reason: str) -> str:
    return (f"no shape change found in {n} samples (window {w}, minimum segment {min_seg}): "
            f"{reason}")


def shape_change_points(x: np.ndarray, *, window: int | None = None,
                        max_changes: int | None = None, threshold: float = P_THRESHOLD,
                        seed: int = 2357, exact_up_to: int | None = EXACT_UP_TO,
                        full_resolution_up_to: int | None = FULL_RESOLUTION_UP_TO
                        ) -> ShapeSegmentation:
    """Change points between shape (or periodic) regimes of one series (module docstring).

    Parameters
    ----------
    x : 1-D array (or one column); NaN gaps are interpolated for the search.
    window : subsequence length; by default found by SuSS (ClaSP section 4.3).
    max_changes : at most this many change points (default: as many as the minimum segment,
        5 windows, allows).
    threshold : p value under which a split is significant (claspy's default 1e-15).
    seed : seed of the random temporal constraints of the ensemble (claspy's 2357).
    exact_up_to : a search over more subsequences than this finds approximate neighbours
        (module docstring); None: exact at any length.
    full_resolution_up_to : above this many samples only the subsequences starting every
        ``ceil(n / full_resolution_up_to)`` samples are compared (module docstring); None:
        every subsequence, at any length.
    """
    if window is not None and (isinstance(window, bool) or not isinstance(window, int | np.integer)
                               or window < 3):
        raise UsageError(f"window must be an integer of at least 3 samples, got {window!r}")
    if max_changes is not None and (isinstance(max_changes, bool)
                                    or not isinstance(max_changes, int | np.integer)
                                    or max_changes < 0):
        raise UsageError(f"max_changes must be a non-negative integer, got {max_changes!r}")
    if not (isinstance(threshold, float | int) and 0.0 < threshold < 1.0):
        raise UsageError(f"threshold must be a p value in (0, 1), got {threshold!r}")
    for name, limit in (("exact_up_to", exact_up_to),
                        ("full_resolution_up_to", full_resolution_up_to)):
        if limit is not None and (isinstance(limit, bool)
                                  or not isinstance(limit, int | np.integer)
                                  or limit < 2 * MIN_SAMPLES):
            raise UsageError(f"{name} must be None or an integer of at least "
                             f"{2 * MIN_SAMPLES} samples, got {limit!r}")
    arr, filled = _prepare(x)
    n = arr.shape[0]
    stride = 1
    if full_resolution_up_to is not None and n > full_resolution_up_to:
        stride = math.ceil(n / full_resolution_up_to)
    empty = np.zeros(0, dtype=np.int64)
    nan_profile = np.full(n, np.nan)

    def nothing(w: int, method: str, reason: str) -> ShapeSegmentation:
        return ShapeSegmentation(change_points=empty, window=w, n_samples=n,
                                 scores=np.zeros(0), p_values=np.zeros(0), profile=nan_profile,
                                 window_method=method, filled=filled,
                                 explanation=_explain_none(n, w, EXCLUSION_RADIUS * w, reason))

    method = "given" if window is not None else "suss"
    if n < MIN_SAMPLES:
        return nothing(int(window or 3), method, f"too short (at least {MIN_SAMPLES} samples "
                                                 "are needed)")
    spread = float(arr.std())
    if spread == 0.0 or spread <= 1e-12 * max(1.0, float(np.abs(arr).max())):
        return nothing(int(window or 3), method, "the series is constant")
    z = (arr - arr.mean()) / spread
    w = int(window) if window is not None else suss_window(z)
    min_seg = EXCLUSION_RADIUS * w
    if n < 2 * min_seg:
        return nothing(w, method, f"too short for two segments of {min_seg} samples")
    limit = n // min_seg - 1
    if max_changes is not None:
        limit = min(limit, int(max_changes))
    if limit <= 0:
        return nothing(w, method, "max_changes is 0")

    profile = nan_profile.copy()
    cps: list[int] = []
    found: list[tuple[int, float, float]] = []
    heap: list[tuple[float, int, int, int, _Split]] = []
    counter = 0

    def valid(c: int) -> bool:
        return all(not (b - min_seg <= c < b + min_seg) for b in (0, *cps, n))

    def search(lo: int, hi: int) -> None:
        nonlocal counter
        if hi - lo < 2 * min_seg:
            return
        split = _ensemble(z[lo:hi], w, min_seg, threshold, seed, exact_up_to, stride)
        if split is None:
            return
        part = profile[lo:hi]
        np.fmax(part, split.profile, out=part)
        if split.p > threshold or not valid(lo + split.cp):
            return
        counter += 1
        heapq.heappush(heap, (-split.score, counter, lo, hi, split))

    search(0, n)
    while heap and len(cps) < limit:
        _, _, lo, hi, split = heapq.heappop(heap)
        cp = lo + split.cp
        cps.append(cp)
        found.append((cp, split.auc, split.p))
        if len(cps) >= limit:
            break
        search(lo, cp)
        search(cp, hi)

    exact_limit = _exact_limit(exact_up_to, w, stride)
    approximate = _approximate(_starts(n, w, stride), exact_limit)
    approximated = (f"; neighbours approximated in searches over {exact_limit:,} "
                    "subsequences" if approximate else "")
    strided = ("" if stride == 1 else
               f"; subsequences start every {stride} samples, so each change point is within "
               f"{stride} samples")
    if not found:
        return ShapeSegmentation(
            change_points=empty, window=w, n_samples=n, scores=np.zeros(0),
            p_values=np.zeros(0), profile=profile, window_method=method, filled=filled,
            explanation=_explain_none(n, w, min_seg, f"no split is significant "
                                                     f"(rank-sum p > {threshold:g})")
            + approximated + strided, approximate=approximate, coarse_factor=stride)
    found.sort()
    cp_arr = np.array([f[0] for f in found], dtype=np.int64)
    return ShapeSegmentation(
        change_points=cp_arr, window=w, n_samples=n,
        scores=np.array([f[1] for f in found]), p_values=np.array([f[2] for f in found]),
        profile=profile, window_method=method, filled=filled, approximate=approximate,
        coarse_factor=stride,
        explanation=(f"{len(cp_arr)} shape change(s) in {n} samples (window {w} by "
                     f"{method}, minimum segment {min_seg}, p <= {threshold:g})"
                     + approximated + strided))


@register_detector
class ShapeDetector(PhaseDetector):
    """The ``shape`` method: the phases of one series by its shape (:func:`shape_change_points`,
    offline: every phase is "detected" at the end of the run); ids as the ev method gives
    them, consecutive phases apart, without merging (two shapes may share a level)."""

    name = "shape"
    threshold = P_THRESHOLD
    merges = False

    def check_threshold(self, threshold: float | None) -> float:
        """``P_THRESHOLD``, whatever is given: the detection threshold given with ``auto`` is
        the ev method's, not a p value."""
        return self.threshold

    def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
               sensors: Any = None, **options: Any) -> Detection:
        """The shape segmentation of the one column of ``X`` (``options``: those of
        :func:`shape_change_points`)."""
        if X.shape[1] != 1:
            raise UsageError(f"segments one series; {X.shape[1]} sensors given (choose one)",
                             parameter="method", value=self.name)
        segmentation = shape_change_points(X[:, 0], **options)
        starts = np.concatenate([[0], segmentation.change_points]).astype(np.int64)
        n = X.shape[0]
        return Detection(starts=starts, detected_at=np.full(starts.size, n - 1),
                         score=np.full(n, np.nan), limit=np.full(n, np.nan), method=self.name,
                         threshold=threshold,
                         params={"window": segmentation.window,
                                 "window_method": segmentation.window_method,
                                 "filled": segmentation.filled,
                                 "approximate": segmentation.approximate,
                                 "coarse_factor": segmentation.coarse_factor},
                         explanation=segmentation.explanation)

    def id_threshold(self, given: float | None, found: Detection) -> float | None:
        """None: identification's own default, ``ID_THRESHOLD``."""
        return None

    def params(self, options: dict[str, Any], found: Detection, method_choice: str
               ) -> dict[str, Any]:
        """The young part left out of identification, the method choice and the
        segmentation's window, filled samples and approximations."""
        return {"min_length": ID_SKIP, "method_choice": method_choice, **found.params}
