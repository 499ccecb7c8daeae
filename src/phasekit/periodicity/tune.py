"""Window auto-tuning and grouping of instances by length (Phase-TA, sections III-A and III-B).

The paper roams "a rather wide initial search interval for L ... in a dichotomical manner"
(0..10 000 samples), maximizing the share of the profile covered by the extracted
instances. The coverage as a function of L is zero below the shortest period and is not
unimodal above it, so a plain bisection on [0, 10 000] can miss short periods. Our search is
dichotomic in log scale: L on the doubling grid min_window, 2 min_window, ... up to the
maximum, then repeated halving of the bracket around the best L (two probes at the quarter
points of the bracket per step) until it is narrower than 5 % of L. About 15 passes of the
detector in all. The objective is the coverage of the instances that survive the length
grouping, the alpha filter and the minimum of 3 instances a pattern needs (our addition: a
window long enough to hold two instances of a long super-period, say compute iterations
plus a checkpoint, would otherwise win with a group that can never become a pattern), so
that a window size producing scattered, marginal detections is not rewarded. Coverages within ``tie`` = 1 point of the best count as ties, won by the
smallest L: such differences are within the noise of the detector, and a smaller window is
cheaper, more local, and loses less at region edges.

A long run is tuned on excerpts (ours): above ``EXCERPTS_ABOVE`` = 2^22 valid samples (5.8
hours at 5 ms) each pass of the search runs over ``EXCERPT_BUDGET`` = 2^22 samples in
stretches of ``EXCERPT_WINDOWS`` = 8 windows of the largest size tried, evenly spaced over the
run (:func:`excerpts`), and only the chosen window, with the scan's other peaks, passes over
the whole run. The coverage is a share, which evenly spaced stretches estimate, and a region
longer than the gap between two of them is sure to be seen: a 24-hour run at 5 ms has 26
stretches of 160,000 samples, 2.9 % of the run apart, below the 5 % a pattern needs. The search's
cost stops growing with the run, where it was about 15 passes over all of it; the
stretches' edges lose up to one window each, which weighs the largest windows down by up
to an eighth of their coverage. The estimate can also move the choice within the tie below:
on a 12-hour NEMO-like run the stretches chose 220 samples, tied within a point with 232,
which covers 77.0 % of the whole run where 220 covers 76.3 %.

Every window tried is kept with its coverage (the result's ``tuning``): a run that repeats
at two scales shows two peaks of coverage over L, and :func:`scan_peaks` gives them to
:mod:`phasekit.periodicity.scales` (ours).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from phasekit.periodicity.detect import Batches

ALPHA = 0.05
LENGTH_TOLERANCE = 0.05
MIN_WINDOW = 32
MAX_WINDOW = 10_000
TIE = 0.01
PRECISION = 0.05
EXCERPTS_ABOVE = 1 << 22
EXCERPT_BUDGET = 1 << 22
EXCERPT_WINDOWS = 8


def group_lengths(lengths: np.ndarray, *, tolerance: float = LENGTH_TOLERANCE) -> np.ndarray:
    """Group id per entry of ``lengths``, in increasing length: sorted distinct lengths stay in
    one group while each is within ``tolerance`` (relative) of the previous one (Phase-TA,
    III-B groups instances "according to their lengths"; the gap rule is ours: the lengths of
    one periodicity spread by a sample or two around its period, and a group boundary falls
    in the empty stretch between two periodicities, never inside one)."""
    if lengths.size == 0:
        return np.empty(0, np.int64)
    values, inverse = np.unique(lengths, return_inverse=True)
    breaks = np.diff(values) > tolerance * values[:-1]
    return np.concatenate([[0], np.cumsum(breaks)])[inverse].astype(np.int64)


def kept_groups(batches: Batches, n_valid: int, *, alpha: float = ALPHA,
                tolerance: float = LENGTH_TOLERANCE, min_instances: int = 1
                ) -> tuple[np.ndarray, np.ndarray]:
    """Group id per batch (−1 for groups covering less than ``alpha`` of the valid samples,
    Phase-TA III-B, alpha = 5 %, or holding fewer than ``min_instances`` instances), and the
    covered samples of every kept group."""
    covered = batches.length * batches.count
    groups = group_lengths(batches.length, tolerance=tolerance)
    if groups.size == 0:
        return groups, np.empty(0)
    per_group = np.bincount(groups, weights=covered)
    instances = np.bincount(groups, weights=batches.count)
    keep = (per_group >= alpha * n_valid) & (instances >= min_instances)
    renumber = np.full(per_group.size, -1, np.int64)
    renumber[keep] = np.arange(int(keep.sum()))
    return renumber[groups], per_group[keep]


@dataclass(frozen=True)
class TuningStep:
    window: int
    coverage: float


def tune_window(evaluate: Callable[[int], float], *, min_window: int = MIN_WINDOW,
                max_window: int = MAX_WINDOW, precision: float = PRECISION, tie: float = TIE,
                workers: int = 1, hints: Sequence[int] = ()) -> tuple[int, list[TuningStep]]:
    """The L maximizing ``evaluate(L)`` (a coverage in 0..1) by the log-scale dichotomy above.

    ``hints``: windows added to the doubling grid (those of the autocorrelation's lag, module
    docstring); those outside [min_window, max_window] are ignored. Independent evaluations
    run on ``workers`` threads (the detector releases the GIL).
    """
    trace: dict[int, float] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:

        def score(windows: list[int]) -> None:
            todo = sorted({w for w in windows if w not in trace}, reverse=True)
            for window, value in zip(todo, pool.map(evaluate, todo), strict=True):
                trace[window] = value

        grid = []
        window = min_window
        while window < max_window:
            grid.append(window)
            window *= 2
        grid.append(max_window)
        grid = sorted({*grid, *(int(h) for h in hints if min_window <= h <= max_window)})
        score(grid)
        best_index = int(np.argmax([trace[w] for w in grid]))
        if trace[grid[best_index]] > 0:
            low = grid[max(0, best_index - 1)]
            high = grid[min(len(grid) - 1, best_index + 1)]
            best = grid[best_index]
            while high - low > max(2, precision * best):
                candidates = [(low + best) // 2, best, (best + high) // 2]
                score(candidates)
                best = max(candidates, key=lambda w: (trace[w], -w))
                span = (high - low) / 4
                low, high = max(low, int(best - span)), min(high, int(best + span))
    top = max(trace.values())
    best = min(w for w, c in trace.items() if c >= top - tie)
    steps = [TuningStep(w, trace[w]) for w in sorted(trace)]
    return best, steps


def excerpts(segments: list[tuple[int, int]], *, budget: int = EXCERPT_BUDGET,
             length: int) -> list[tuple[int, int]]:
    """Stretches [start, end) of the valid ``segments``, ``length`` samples each (fewer where
    a segment ends) and about ``budget`` in all, centred in equal shares of the valid samples
    (module docstring); ``segments`` themselves when they hold no more than ``budget``."""
    sizes = np.array([e - s for s, e in segments], dtype=np.int64)
    total = int(sizes.sum())
    count = max(1, budget // max(1, length))
    if total <= budget or count * length >= total:
        return list(segments)
    before = np.concatenate([[0], np.cumsum(sizes)])  # valid samples before each segment
    share = total / count
    found: list[tuple[int, int]] = []
    for i in range(count):
        lo = int(i * share + (share - length) / 2)
        hi = lo + length
        for (s, e), first in zip(segments, before[:-1], strict=True):
            a, b = max(lo, int(first)), min(hi, int(first) + e - s)
            if b > a:
                found.append((s + a - int(first), s + b - int(first)))
    return found


def scan_peaks(steps: list[TuningStep], *, alpha: float = ALPHA) -> list[int]:
    """The windows where the coverage of the scan ``steps`` (every window the tuning tried)
    has a local maximum of at least ``alpha``, in increasing window; a flat top gives its
    smallest window (ours: the other scales of :mod:`phasekit.periodicity.scales` start from
    these, the tuning keeping only the best)."""
    ordered = sorted(steps, key=lambda s: s.window)
    runs: list[tuple[int, float]] = []  # (first window, coverage) of each run of equal coverage
    for step in ordered:
        if not runs or step.coverage != runs[-1][1]:
            runs.append((step.window, step.coverage))
    peaks = []
    for i, (window, value) in enumerate(runs):
        left = runs[i - 1][1] if i else -np.inf
        right = runs[i + 1][1] if i + 1 < len(runs) else -np.inf
        if value >= alpha and value > left and value > right:
            peaks.append(window)
    return peaks
