"""Every scale at which a profile repeats (ours; Phase-TA tunes one window and reports what
repeats at that scale).

A run can repeat at several scales at once: a 2.3 s sub-cycle six times inside a 14.6 s
function. The window search (:mod:`~phasekit.periodicity.tune`) keeps the window of best
coverage; the patterns come from it, and its main periodicity (``patterns[0]``, unchanged) is
the *dominant* scale, of period b. :func:`find_scales` looks for the others from the
method's own evidence and measures them with the detector's distance delta
(:func:`phasekit.periodicity.detect.pair_delta`'s formula). Missing samples are left out of
every comparison here (a pair with a missing sample does not count; a comparison missing
more than ``MAX_MISSING`` = 25 % of its pairs is not made). A scale needs, as a pattern,
``min_instances`` instances covering ``alpha`` of the profile.

**Longer scales.** An outer cycle is what remains of the profile seen through a window of
one inner period (:func:`outer_feature`: per metric the mean and the spread of the b samples
around each sample): the inner cycle averages out of it, drift or not, and a phase of another
level or shape once per outer cycle, or an amplitude envelope, remains. The candidates are
the periods of the other patterns and of the window scan's peaks (every local maximum of the
coverage over the half-window, :func:`phasekit.periodicity.tune.scan_peaks`: the kept length
group covering most in the detector's pass there; a user's "second peak near window 1024")
longer than 1.5 b, and the peaks P of that view's autocorrelation (:func:`autocorrelation`,
r >= ``ACF_FLOOR`` = 0.2, lags up to a third of the profile and ``max_window``) where r(P)
exceeds the least r at the lags P - j b (j = 1, 2, ... down to b / 2; each r the largest
within ``SLACK`` = 10 % of b) by ``ACF_MARGIN`` = 0.05 and is at least r(P - b) and r(P + b):
the highest of peaks within 10 % of one another, shortest first, a multiple of one taken
left out, at most ``MAX_CANDIDATES`` = 3. Of candidates within 10 % of one another the one
covering most is kept (here and below). Each gets its instances in that view
(:func:`instances_at`) and holds when the rule below holds in that view and the view keeps
at least ``OUTER_SHARE`` = 2 % of the profile's variance over its instances
(:func:`outer_share`: a window of one outer period over a profile with no longer scale keeps
only noise, in which long smooth stretches match by chance). They are tried in increasing
period, each over the last scale accepted, the view remade for it.

**Shorter scales.** An inner cycle repeats at the same phase of every outer instance:
:func:`inside_curve` averages the dominant instances (at most ``INSIDE_TESTED`` = 64, each
moved by up to 10 % of b to fit the others) and, for each lag c, finds the best match between
consecutive blocks of the average; the detector's base-period rule on that curve gives a
candidate (:func:`inside_period`). A cycle repeated only twice per outer cycle shows there,
where a sliding window would need two whole periods of it in a row (2 L > 2 P). The other
patterns and the window scan's peaks shorter than b / 1.5 are candidates too. Each must
repeat in that average: delta at most ``INSIDE_FLOOR`` = 0.05 plus what noise survives the
averaging (``QUALITY`` = 2 x the dominant instances' own delta, :func:`repeat_delta`, over
the instances averaged); an iteration's shape in which a segment happens to resemble the one
before it stays above (0.11 to 0.16 in the single-scale controls, 0.001 to 0.03 for nested
cycles). A candidate from the average gets its instances from :func:`instances_at` on the
profile, its runs opening at the detector's instance test (2 x near_zero): its window test
was made on the average, where the noise is lower. They are tried in decreasing period, each
as the inner scale of the last one accepted; one that only repeats a shorter candidate
nested in it (a multiple without outer structure) is left out for that shorter one.

:func:`instances_at` applies the detector's tests at a known period, without its window:
delta between each block and the one before it, at the lag within the detector's 3 %
refinement that fits best; a run opens where delta <= ``near_zero`` and goes on block after
block while delta <= 2 x near_zero, as the detector extends a region. The window's own
base-period rule returns the inner period again when the outer one is a multiple of it, and
a window must fit two whole outer periods between gaps.

**The rule: a scale of period P holds over a shorter one of period b** when

- *nested*: at least ``NESTED`` = half of the samples of the b instances lie inside the P
  instances (two periodicities of different regions are two patterns, not two scales:
  HPCG's set-up and compute iterations);
- *outer structure*: on each P instance (at most ``MAX_TESTED`` = 40, evenly spread) delta
  with the samples P earlier, with the samples P - j b earlier (j = 1, 2, ... down to b / 2)
  and P + b earlier, each the least within 10 % of b of the lag (drift; plus ``PRECISION``
  = 0.5 % of j b for the error of b, itself moved to the autocorrelation's peak near it);
  the median over the instances per lag. The *structure* is the largest median at the lags
  P - j b minus the median at P; it must be at least ``STRUCTURE`` = 0.05 of the variance,
  and P must match better than P - b and P + b. A multiple of b with no outer structure
  repeats as well whole inner periods earlier (structure about 0, below 0 with drift:
  shorter lags drift less): it is not a scale. A phase of another level once per outer
  cycle makes every lag P - j b compare iterations with that phase; an envelope makes the
  lags near P / 2 compare loud iterations with quiet ones.

``ratio`` is a scale's period over the next shorter scale's. Every threshold here is ours,
checked on benchmarks/nested_scales.py (nested profiles with 2..20 inner cycles per outer
one, noise, drift and gaps; single-scale controls; the Phase-TA-like suite); Phase-TA
reports one scale. An amplitude envelope over two cycles is an alternation: delta between a
loud and a quiet iteration exceeds the detector's threshold, so the two are not repetitions
of one cycle and the shorter scale is not found.

Cost: two autocorrelations (one FFT each, the view's on means of b / 10 samples), the
average of the dominant instances and one pass over it per inner lag, :func:`instances_at`
(a few vector passes) per candidate without instances and a few FFTs per tested instance;
no detector pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import ceil
from typing import Any

import numpy as np

from phasekit.periodicity import detect, tune
from phasekit.periodicity.strength import fast_length

__all__ = ["Scale", "autocorrelation", "find_scales", "inside_period", "instances_at",
           "nested_share", "outer_structure", "repeat_delta", "structure_parts"]

#: Module docstring: the rule's thresholds (ours) and the search's bounds.
MULTIPLE = 0.1
SLACK = 0.1
PRECISION = 0.005
ACF_FLOOR = 0.2
ACF_MARGIN = 0.05
STRUCTURE = 0.05
NESTED = 0.5
QUALITY = 2.0
INSIDE_FLOOR = 0.05
OUTER_SHARE = 0.02
MAX_MISSING = 0.25
MAX_CANDIDATES = 3
MAX_TESTED = 40
INSIDE_TESTED = 64
INSIDE_RESOLUTION = 600
FEATURE_BLOCKS = 10

#: Where a scale was found (``Scale.source``).
SOURCES = ("dominant pattern", "pattern", "window scan", "autocorrelation",
           "inside the dominant cycle", "first analysis")


@dataclass(frozen=True, eq=False)
class Scale:
    """One scale at which the profile repeats.

    ``length`` is the mean instance length (samples), ``period_s`` that in seconds;
    ``starts``/``lengths`` the instances (sample indices in the analyzed profile), ``window``
    the detector's half-window that found them (0: :func:`instances_at`), ``source`` where
    the scale was found (:data:`SOURCES`). Relative to the next shorter scale (0 for the
    shortest): ``ratio`` of the periods, ``structure`` how much better the profile repeats
    at this period than whole shorter periods off it, ``nested`` the share of the shorter
    scale's instance samples that lie inside this scale's instances (module docstring).
    """

    period_s: float
    length: float
    coverage: float
    window: int
    source: str
    starts: np.ndarray
    lengths: np.ndarray
    dominant: bool = False
    ratio: float = 0.0
    structure: float = 0.0
    nested: float = 0.0

    @property
    def n_instances(self) -> int:
        return int(self.starts.size)

    def to_dict(self) -> dict[str, Any]:
        return {"period_s": self.period_s, "length": self.length,
                "n_instances": self.n_instances, "coverage": self.coverage,
                "window": self.window, "source": self.source, "dominant": self.dominant,
                "ratio": self.ratio, "structure": self.structure, "nested": self.nested,
                "instances": {"start": self.starts, "length": self.lengths}}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Scale:
        return Scale(period_s=float(data["period_s"]), length=float(data["length"]),
                     coverage=float(data["coverage"]), window=int(data["window"]),
                     source=str(data["source"]),
                     starts=np.asarray(data["instances"]["start"], np.int64),
                     lengths=np.asarray(data["instances"]["length"], np.int64),
                     dominant=bool(data.get("dominant", False)),
                     ratio=float(data.get("ratio", 0.0)),
                     structure=float(data.get("structure", 0.0)),
                     nested=float(data.get("nested", 0.0)))

    def __repr__(self) -> str:
        role = "dominant, " if self.dominant else ""
        return (f"Scale({role}{self.period_s:.4g} s, {self.n_instances} instances, "
                f"coverage {self.coverage:.1%})")


# --- evidence ----------------------------------------------------------------------------
def _prepared(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x as n x d floats minus its mean, 0 where a sample is missing; and the validity."""
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    valid = np.isfinite(x).all(axis=1)
    mean = x[valid].mean(axis=0) if valid.any() else np.zeros(x.shape[1])
    return np.where(valid[:, None], x - mean, 0.0), valid


def _delta(sum_a: np.ndarray, sum_b: np.ndarray, squares: np.ndarray, cross: np.ndarray,
           count: np.ndarray, length: int | np.ndarray) -> np.ndarray:
    """:func:`phasekit.periodicity.detect.pair_delta`'s formula over ``count`` valid pairs
    (sums per dimension in the last axis of ``sum_a``/``sum_b``); inf where more than
    ``MAX_MISSING`` of the ``length`` pairs are missing, 1 for constant blocks."""
    n = np.maximum(count, 1.0)
    spread = squares - ((sum_a ** 2 + sum_b ** 2).sum(axis=-1) / n)
    gap = (((sum_a - sum_b) ** 2).sum(axis=-1)) / n ** 2
    denominator = spread + 0.5 * n * gap
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(denominator > 1e-12 * np.maximum(squares, 1e-300),
                         np.maximum((squares - 2.0 * cross) / denominator, 0.0), 1.0)
    return np.where(count >= (1.0 - MAX_MISSING) * length, delta, np.inf)


def autocorrelation(x: np.ndarray, max_lag: int) -> np.ndarray:
    """r(0..max_lag) of ``x`` (n x d, NaN where missing): each metric minus its least-squares
    line, the sum of products at each lag over the pairs of valid samples divided by their
    count, over the mean square (r(0) = 1; a gap lowers no lag)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    n = x.shape[0]
    valid = np.isfinite(x).all(axis=1)
    max_lag = max(1, min(max_lag, n - 1))
    if valid.sum() < 3:
        return np.zeros(max_lag + 1)
    t = np.flatnonzero(valid).astype(np.float64)
    t -= t.mean()
    y = np.zeros_like(x)
    for d in range(x.shape[1]):
        values = x[valid, d] - x[valid, d].mean()
        y[valid, d] = values - float(t @ values) / float(t @ t) * t
    size = fast_length(n + max_lag + 1)

    def power(v: np.ndarray) -> np.ndarray:
        spectrum = np.fft.rfft(v, size)
        return np.fft.irfft(spectrum.real ** 2 + spectrum.imag ** 2, size)[:max_lag + 1]

    pairs = np.maximum(np.round(power(valid.astype(np.float64))), 1.0)
    products = sum(power(y[:, d]) for d in range(x.shape[1])) / pairs
    return products / products[0] if products[0] > 0 else np.zeros(max_lag + 1)


def _peaks(r: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Lags in [lo, hi] where r has a local maximum (the first of a flat top) of at least
    ``ACF_FLOOR``."""
    hi = min(hi, r.size - 2)
    k = np.arange(max(lo, 1), hi + 1)
    if k.size == 0:
        return k
    return k[(r[k] > r[k - 1]) & (r[k] >= r[k + 1]) & (r[k] >= ACF_FLOOR)]


def _acf_prominence(r: np.ndarray, outer: float, inner: float) -> float:
    """r at ``outer`` minus the least r at ``outer - j inner`` (j = 1, 2, ... down to
    inner / 2), each r its maximum within ``SLACK`` x inner of the lag; -inf when out of
    range."""
    w = max(1, round(SLACK * inner))
    lags = np.round(outer - inner * np.arange(1, int((outer - 0.5 * inner) // inner) + 1))
    at = round(outer)
    if at + w >= r.size or lags.size == 0:
        return -np.inf

    def near(lag: int) -> float:
        return float(r[max(0, lag - w):lag + w + 1].max())

    return near(at) - min(near(int(lag)) for lag in lags)


def _acf_local_max(r: np.ndarray, outer: float, inner: float) -> bool:
    """Whether r at ``outer`` is at least r one ``inner`` period before and after it (each
    the largest within ``SLACK`` x inner of the lag)."""
    w = max(1, round(SLACK * inner))

    def near(lag: float) -> float:
        at = round(lag)
        return float(r[max(0, at - w):at + w + 1].max()) if at - w < r.size else -np.inf

    return near(outer) >= max(near(outer - inner), near(outer + inner))


def _lag_deltas(y: np.ndarray, valid: np.ndarray, start: int, length: int, lo: int,
                hi: int) -> np.ndarray:
    """delta between y[start:start+length] and y[start-lag : start-lag+length] for lag =
    lo..hi over their valid pairs (``y`` from :func:`_prepared`), by FFT correlations."""
    a, ma = y[start:start + length], valid[start:start + length].astype(np.float64)
    b, mb = y[start - hi:start - lo + length], valid[start - hi:start - lo + length].astype(
        np.float64)
    size = fast_length(b.shape[0] + length)
    count = hi - lo + 1

    def correlate(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """sum_i u[i] v[i + hi - lag] for lag = lo..hi."""
        c = np.fft.irfft(np.fft.rfft(v, size) * np.conj(np.fft.rfft(u, size)), size)
        return c[:count][::-1]

    pairs = correlate(ma, mb)
    sum_a = np.stack([correlate(a[:, d], mb) for d in range(y.shape[1])], axis=-1)
    sum_b = np.stack([correlate(ma, b[:, d]) for d in range(y.shape[1])], axis=-1)
    squares = sum(correlate(a[:, d] ** 2, mb) + correlate(ma, b[:, d] ** 2)
                  for d in range(y.shape[1]))
    cross = sum(correlate(a[:, d], b[:, d]) for d in range(y.shape[1]))
    return _delta(sum_a, sum_b, squares, cross, np.round(pairs), length)


def structure_parts(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray, inner: float, *,
                    slack: float = SLACK, max_tested: int = MAX_TESTED
                    ) -> tuple[float, float, float]:
    """For the instances (``starts``, ``lengths``) of a scale over a shorter one of period
    ``inner`` (module docstring): the median delta with the samples one period earlier, the
    largest median delta at the lags whole inner periods shorter, and the smaller median
    delta at one inner period shorter or longer; (inf, -inf, -inf) when no instance has its
    samples."""
    y, valid = _prepared(x)
    w = max(1, round(slack * inner))
    order = np.argsort(starts)
    chosen = order[np.unique(np.linspace(0, order.size - 1, min(order.size, max_tested))
                             .round().astype(np.int64))] if order.size else order
    own: list[float] = []
    shorter: list[np.ndarray] = []
    longer: list[float] = []
    for i in chosen:
        s, length = int(starts[i]), int(lengths[i])
        steps = np.arange(1, int((length - 0.5 * inner) // inner) + 1)
        if steps.size == 0:
            continue
        lo = max(1, int(np.floor(length - steps[-1] * inner)) - w
                 - ceil(PRECISION * steps[-1] * inner))
        hi = round(length + inner) + 2 * w
        if s - hi < 0 or s + length > y.shape[0]:
            continue
        delta = _lag_deltas(y, valid, s, length, lo, hi)

        def least(lag: float, wide: int, delta: np.ndarray = delta, lo: int = lo,
                  hi: int = hi) -> float:
            a, b = max(lo, round(lag) - wide), min(hi, round(lag) + wide)
            return float(delta[a - lo:b - lo + 1].min()) if b >= a else np.inf

        mine = least(length, w)
        if not np.isfinite(mine):
            continue
        own.append(mine)
        shorter.append(np.array([least(length - j * inner, w + ceil(PRECISION * j * inner))
                                 for j in steps]))
        longer.append(least(length + inner, w))
    if not own:
        return np.inf, -np.inf, -np.inf
    depth = min(o.size for o in shorter)
    rows = np.stack([o[:depth] for o in shorter])
    medians = np.array([np.median(c[np.isfinite(c)]) if np.isfinite(c).any() else np.nan
                        for c in rows.T])
    finite_longer = np.array(longer)[np.isfinite(longer)]
    after = float(np.median(finite_longer)) if finite_longer.size else np.inf
    before = float(medians[0]) if np.isfinite(medians[0]) else np.inf
    return (float(np.median(own)), float(np.nanmax(medians)) if np.isfinite(medians).any()
            else -np.inf, min(before, after))


def outer_structure(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray, inner: float,
                    **keywords: Any) -> float:
    """The structure of a scale over a shorter one of period ``inner`` (module docstring):
    the largest median delta at lags whole inner periods shorter than its period minus the
    median delta at its period (:func:`structure_parts`)."""
    own, off, _ = structure_parts(x, starts, lengths, inner, **keywords)
    return off - own


def repeat_delta(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *,
                 max_tested: int = MAX_TESTED) -> float:
    """How well a scale's instances repeat: the median delta between each instance that
    follows another one (the copy that opens a run is left out) and the samples of its
    length before it (at most ``max_tested``, evenly spread); inf when none."""
    y, valid = _prepared(x)
    order = np.argsort(starts)
    s, n = starts[order], lengths[order]
    follows = np.flatnonzero(np.abs(s[1:] - (s[:-1] + n[:-1])) <= np.maximum(1, SLACK * n[1:])) + 1
    follows = follows[s[follows] - n[follows] >= 0]
    if follows.size == 0:
        return np.inf
    picks = follows[np.unique(np.linspace(0, follows.size - 1, min(follows.size, max_tested))
                              .round().astype(np.int64))]
    deltas = []
    for i in picks:
        a, b = y[s[i]:s[i] + n[i]], y[s[i] - n[i]:s[i]]
        both = (valid[s[i]:s[i] + n[i]] & valid[s[i] - n[i]:s[i]]).astype(np.float64)[:, None]
        a, b = a * both, b * both
        delta = _delta(a.sum(axis=0), b.sum(axis=0), float((a ** 2 + b ** 2).sum()),
                       float((a * b).sum()), np.asarray(both.sum()), int(n[i]))
        if np.isfinite(delta):
            deltas.append(float(delta))
    return float(np.median(deltas)) if deltas else np.inf


def nested_share(outer_starts: np.ndarray, outer_lengths: np.ndarray,
                 inner_starts: np.ndarray, inner_lengths: np.ndarray) -> float:
    """Share of the samples of the inner instances that lie inside the outer instances."""
    if outer_starts.size == 0 or inner_starts.size == 0:
        return 0.0
    end = int(max((outer_starts + outer_lengths).max(), (inner_starts + inner_lengths).max()))

    def marks(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        edges = np.zeros(end + 1, np.int64)
        np.add.at(edges, starts, 1)
        np.add.at(edges, starts + lengths, -1)
        return np.cumsum(edges)[:-1] > 0

    inner = marks(inner_starts, inner_lengths)
    return float((inner & marks(outer_starts, outer_lengths)).sum() / max(1, inner.sum()))


def instances_at(x: np.ndarray, period: float, *, near_zero: float = detect.NEAR_ZERO,
                 refine: float = detect.REFINE_TOLERANCE, opens_at: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The instances of a known ``period`` along ``x`` (n x d, NaN where missing): delta
    between every block of ``period`` samples and the one before it, at the lag within
    ``refine`` of the period that fits best (9 lags); a run opens where delta <=
    ``opens_at`` (default ``near_zero``; at its best alignment within half a period), the
    block before it its first instance, and goes on block after block while delta <=
    ``detect.INSTANCE_FACTOR`` x near_zero (the detector's tests without its window, module
    docstring). Starts and lengths, in time order."""
    y, valid = _prepared(x)
    n = y.shape[0]
    empty = np.empty(0, np.int64)
    if 2 * period + 2 > n:
        return empty, empty
    spread = max(1, round(refine * period))
    lags = np.unique(np.round(np.linspace(period - spread, period + spread, 9)).astype(np.int64))
    lags = lags[(lags >= 2) & (2 * lags <= n)]
    best = np.full(n + 1, np.inf)
    best_lag = np.zeros(n + 1, np.int64)
    mask = valid.astype(np.float64)
    for c in lags:
        t = np.arange(c, n - c + 1)
        both = mask[c:] * mask[:-c]  # pair (u, u - c) for u >= c

        def window(v: np.ndarray, c: int = c, t: np.ndarray = t) -> np.ndarray:
            """sum of v over the pairs of the block [t, t + c), v indexed by u - c."""
            sums = np.concatenate([np.zeros((1, *v.shape[1:])), np.cumsum(v, axis=0)])
            return sums[t] - sums[t - c]

        a, b = y[c:] * both[:, None], y[:-c] * both[:, None]
        delta = _delta(window(a), window(b), window((a ** 2 + b ** 2).sum(axis=1)),
                       window((a * b).sum(axis=1)), window(both), int(c))
        better = delta < best[t]
        best[t[better]] = delta[better]
        best_lag[t[better]] = c
    opens = np.flatnonzero(best <= (near_zero if opens_at is None else opens_at))
    keep_going = detect.INSTANCE_FACTOR * near_zero
    half = max(1, int(period // 2))
    starts: list[int] = []
    lengths: list[int] = []
    end = at = 0
    while (k := int(np.searchsorted(opens, at))) < opens.size:
        t = int(opens[k])
        t += int(np.argmin(best[t:t + half + 1]))
        c = int(best_lag[t])
        if t - c >= end:
            starts.append(t - c)
            lengths.append(c)
        while t <= n and best[t] <= keep_going:
            c = int(best_lag[t])
            starts.append(t)
            lengths.append(c)
            t += c
        end = at = t
    return np.asarray(starts, np.int64), np.asarray(lengths, np.int64)


def _block_means(x: np.ndarray, block: int) -> np.ndarray:
    """Means of ``block`` consecutive samples (NaN where more than ``MAX_MISSING`` of them
    are missing; the last partial block dropped)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    m = x.shape[0] // block
    blocks = x[:m * block].reshape(m, block, -1)
    finite = np.isfinite(blocks).all(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(finite[:, :, None], blocks, 0.0).sum(axis=1) / finite.sum(axis=1)[:, None]
    means[finite.mean(axis=1) < 1.0 - MAX_MISSING] = np.nan
    return means


def inside_curve(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *,
                 max_tested: int = INSIDE_TESTED, resolution: int = INSIDE_RESOLUTION
                 ) -> tuple[np.ndarray, int, int]:
    """How well the instances (``starts``, ``lengths``) of a scale repeat inside at each lag:
    delta for lags 0..two thirds of their length (in blocks of ``block`` samples), the block,
    and how many instances were averaged (0: too few with all their samples).

    The instances (at most ``max_tested``, evenly spread, each with the samples after it
    that the comparisons need, none missing) are averaged sample by sample, each moved by up
    to ``SLACK`` of its length to fit the others best: a cycle inside repeats at the same
    phase of every instance, the noise does not. For each lag c: the least over the phases t
    of delta between the n samples from t and the n samples c earlier (n = c, at least a
    quarter of the instance: shorter blocks match somewhere by chance). Instances longer than
    ``resolution`` samples are read as means of ``block`` consecutive samples."""
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    length = int(np.median(lengths)) if lengths.size else 0
    block = max(1, -(-length // resolution))
    size = length // block
    max_lag = (2 * size) // 3
    span = (size + max_lag + max(max_lag, size // 4)) * block
    shift = max(1, round(SLACK * length))
    usable = [int(s) - shift for s in np.sort(starts) if int(s) - shift >= 0
              and int(s) + span + shift <= x.shape[0]
              and np.isfinite(x[int(s) - shift:int(s) + span + shift]).all()]
    if len(usable) < 2 or max_lag < 2:
        return np.zeros(1), block, 0
    picks = np.unique(np.linspace(0, len(usable) - 1, min(len(usable), max_tested)).round())
    windows = np.stack([x[usable[int(k)]:usable[int(k)] + span + 2 * shift] for k in picks])
    m = windows.shape[1] // block
    windows = windows[:, :m * block].reshape(windows.shape[0], m, block, -1).mean(axis=2)
    y = _aligned_mean(windows, shift // block, span // block)
    y = y - y.mean(axis=0)
    zeros = np.zeros((1, y.shape[1]))
    cs1 = np.concatenate([zeros, np.cumsum(y, axis=0)])
    cs2 = np.concatenate([[0.0], np.cumsum((y * y).sum(axis=1))])
    curve = np.full(max_lag + 1, 2.0)
    curve[0] = 0.0
    for c in range(1, max_lag + 1):
        n = max(c, size // 4)
        t = np.arange(c, c + size)  # every phase of the instance
        products = np.concatenate([[0.0], np.cumsum((y[c:] * y[:-c]).sum(axis=1))])
        delta = _delta(cs1[t + n] - cs1[t], cs1[t - c + n] - cs1[t - c],
                       cs2[t + n] - cs2[t] + cs2[t - c + n] - cs2[t - c],
                       products[t + n - c] - products[t - c], np.full(t.size, float(n)), n)
        curve[c] = float(delta.min())
    return curve, block, len(picks)


def inside_period(curve: np.ndarray, block: int, *, min_period: int = detect.MIN_PERIOD,
                  near_zero: float = detect.NEAR_ZERO, rise: float = detect.RISE) -> int:
    """The period (samples) of the cycle repeated inside a scale's instances, from
    :func:`inside_curve`'s ``curve`` and ``block``, 0 if none: the detector's base-period
    rule on that curve (:func:`phasekit.periodicity.detect.base_period`: past its first rise
    above ``rise``, the least delta at most ``near_zero``, the smallest lag of which it is a
    multiple)."""
    shortest = max(2, -(-min_period // block))
    if curve.size <= shortest + 1:
        return 0
    return block * detect.base_period(curve, shortest, near_zero, rise,
                                      detect.MULTIPLE_TOLERANCE, detect.REFINE_TOLERANCE)


def _window_moments(x: np.ndarray, inner: float) -> tuple[np.ndarray, np.ndarray]:
    """Per metric the mean and the standard deviation of the ``inner`` samples centred on
    each sample (n x 2d, NaN where more than ``MAX_MISSING`` of them are missing), and the
    profile minus its mean (0 where missing)."""
    y, valid = _prepared(x)
    n, width = y.shape[0], max(2, round(inner))
    lo = np.clip(np.arange(n) - width // 2, 0, n)
    hi = np.clip(lo + width, 0, n)

    def moving(v: np.ndarray) -> np.ndarray:
        sums = np.concatenate([np.zeros((1, *v.shape[1:])), np.cumsum(v, axis=0)])
        return sums[hi] - sums[lo]

    count = moving(valid.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = moving(y) / count[:, None]
        spread = np.sqrt(np.maximum(moving(y * y) / count[:, None] - mean ** 2, 0.0))
    moments = np.concatenate([mean, spread], axis=1)
    moments[count < (1.0 - MAX_MISSING) * width] = np.nan
    y[~valid] = np.nan
    return moments, y


def outer_feature(x: np.ndarray, inner: float) -> np.ndarray:
    """The profile seen through a window of one ``inner`` period: per metric the mean and
    the standard deviation of the ``inner`` samples centred on each sample, each z-scored
    (NaN where more than ``MAX_MISSING`` of the window is missing). An inner cycle averages
    out of both, drift or not; a phase of another level or shape once per outer cycle, or an
    amplitude envelope over it, remains."""
    feature, _ = _window_moments(x, inner)
    ok = np.isfinite(feature).all(axis=1)
    if ok.any():
        center, scale = feature[ok].mean(axis=0), feature[ok].std(axis=0)
        feature = (feature - center) / np.where(scale > 0, scale, 1.0)
    return feature


def outer_share(x: np.ndarray, inner: float, starts: np.ndarray, lengths: np.ndarray) -> float:
    """The share of the profile's variance over the instances (``starts``, ``lengths``) of a
    scale that remains seen through a window of one ``inner`` period (:func:`outer_feature`
    before z-scoring): what an outer structure carries."""
    moments, y = _window_moments(x, inner)
    inside = np.zeros(y.shape[0], bool)
    for s, n in zip(starts, lengths, strict=True):
        inside[int(s):int(s + n)] = True
    ok = inside & np.isfinite(moments).all(axis=1) & np.isfinite(y).all(axis=1)
    total = float(y[ok].var(axis=0).sum()) if ok.sum() > 1 else 0.0
    return float(moments[ok].var(axis=0).sum()) / total if total > 0 else 0.0


def _aligned_mean(windows: np.ndarray, shift: int, span: int) -> np.ndarray:
    """The mean of ``windows`` (m x (span + 2 shift) x d) over their middle ``span`` samples,
    each moved by the shift within +-``shift`` that correlates best with the plain mean (the
    instances' boundaries jitter by a sample or two; averaged as they are, the jitter blurs a
    step differently where its neighbours differ)."""
    reference = windows[:, shift:shift + span].mean(axis=0)
    reference = reference - reference.mean(axis=0)
    moved = []
    for w in windows:
        scores = sum(np.correlate(w[:span + 2 * shift, d], reference[:, d], mode="valid")
                     for d in range(w.shape[1]))
        k = int(np.argmax(scores))
        moved.append(w[k:k + span])
    return np.mean(moved, axis=0)


# --- the search --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Candidate:
    length: float
    source: str
    window: int = 0
    starts: np.ndarray | None = None
    lengths: np.ndarray | None = None
    coverage: float = 0.0


def _multiple(p: float, q: float) -> bool:
    """Whether ``p`` is within ``MULTIPLE`` x q of a whole multiple of ``q``."""
    return abs(p - q * max(1, round(p / q))) <= MULTIPLE * q


def find_scales(x: np.ndarray, *, dominant: tuple[np.ndarray, np.ndarray, float],
                window: int, others: Sequence[tuple[np.ndarray, np.ndarray]],
                scan: Sequence[tuple[int, detect.Batches]],
                coverage: Callable[[np.ndarray, np.ndarray], float], n_valid: int,
                max_window: int, sampling_period: float, alpha: float,
                tolerance: float, min_instances: int, min_period: int,
                near_zero: float = detect.NEAR_ZERO,
                longer: Sequence[tuple[np.ndarray, np.ndarray, int]] = ()
                ) -> tuple[Scale, ...]:
    """The scales of the analyzed series ``x`` (n x d, NaN where missing), shortest first
    (module docstring); the dominant one alone when there is one scale.

    ``dominant``: the dominant pattern's instance starts, lengths and coverage, found at
    half-window ``window``; ``others``: the other patterns' instances; ``scan``: the
    detector's passes at the local maxima of the window scan, with their half-windows;
    ``coverage(starts, lengths)``: the share of the valid samples that instances cover;
    the rest are the analysis's settings (``max_window``: the longest period looked for);
    ``longer``: instances of a longer cycle and the half-window at which a first analysis
    led with them before it looked again below them (tested as the scan's own are).
    """
    starts, lengths, dominant_coverage = dominant
    base = float(np.mean(lengths))
    lower = [Scale(period_s=base * sampling_period, length=base, coverage=dominant_coverage,
                   window=window, source="dominant pattern", starts=starts, lengths=lengths,
                   dominant=True)]  # the dominant scale, then each one accepted below the last
    upper: list[Scale] = []

    def known(length: float) -> bool:
        return any(abs(length - s.length) <= MULTIPLE * s.length for s in (*lower, *upper))

    def slack(period: float) -> int:
        return max(1, round(SLACK * period))

    candidates: list[_Candidate] = []
    for half, batches in scan:
        if (found := _largest_group(batches, n_valid, alpha=alpha, tolerance=tolerance,
                                    min_instances=min_instances, coverage=coverage)):
            candidates.append(replace(found, source="window scan", window=half))
    candidates += [_Candidate(float(n.mean()), "pattern", window, s, n, coverage(s, n))
                   for s, n in others if s.size >= min_instances]
    candidates += [_Candidate(float(n.mean()), "first analysis", half, s, n, coverage(s, n))
                   for s, n, half in longer if s.size >= min_instances]
    max_lag = min(x.shape[0] // 3, max_window)
    r = autocorrelation(x, max_lag + slack(max_lag) + 1)

    def from_autocorrelation(rf: np.ndarray, inner: float, lo: int, hi: int
                             ) -> list[float]:
        """The candidate periods longer than ``inner`` from the autocorrelation ``rf`` of the
        profile seen through a window of one inner period, lags ``lo``..``hi`` (module
        docstring)."""
        above = [int(p) for p in _peaks(rf, lo, hi)
                 if p >= 1.5 * inner and _acf_prominence(rf, float(p), inner) >= ACF_MARGIN
                 and _acf_local_max(rf, float(p), inner)]
        tops: list[int] = []  # the highest r of each run of peaks within MULTIPLE of another
        for p in above:
            if tops and p - tops[-1] <= MULTIPLE * tops[-1]:
                tops[-1] = max(tops[-1], p, key=lambda q: rf[q])
            else:
                tops.append(p)
        picked: list[int] = []
        for p in tops:
            if len(picked) < MAX_CANDIDATES and not any(_multiple(p, q) for q in picked):
                picked.append(p)
        return [float(p) for p in picked]

    curve, block, averaged = inside_curve(x, starts, lengths)
    noise = repeat_delta(x, starts, lengths)
    good_match = INSIDE_FLOOR + QUALITY * (noise if np.isfinite(noise) else near_zero) / max(
        1, averaged)

    def inside_match(length: float) -> float:
        """The least delta of the averaged dominant instances within 3 % of ``length``."""
        lo = max(1, int(np.floor(length * (1 - detect.REFINE_TOLERANCE) / block)))
        hi = min(curve.size - 1, int(np.ceil(length * (1 + detect.REFINE_TOLERANCE) / block)))
        return float(curve[lo:hi + 1].min()) if averaged and hi >= lo else np.inf

    if inner := inside_period(curve, block, min_period=min_period, near_zero=near_zero):
        candidates.append(_Candidate(float(inner), "inside the dominant cycle"))

    def measured(c: _Candidate, series: np.ndarray = x, step: int = 1) -> _Candidate | None:
        """``c`` with its instances (:func:`instances_at` on ``series``, the profile or
        means of ``step`` samples of a view of it), None if too few."""
        if c.starts is not None:
            return c
        if 3 * c.length > x.shape[0]:
            return None
        inside = c.source == "inside the dominant cycle"  # its window test: on the average
        s, n = instances_at(series, c.length / step, near_zero=near_zero,
                            opens_at=detect.INSTANCE_FACTOR * near_zero if inside else None)
        s, n = s * step, n * step
        cover = coverage(s, n) if s.size else 0.0
        if s.size < min_instances or cover < alpha:
            return None
        return _Candidate(float(n.mean()), c.source, 0, s, n, cover)

    def refined(period: float) -> float:
        """``period`` moved to the autocorrelation's peak within ``SLACK`` of it (parabolic
        interpolation)."""
        w = slack(period)
        lo, hi = max(1, round(period) - w), min(r.size - 2, round(period) + w)
        if hi <= lo:
            return period
        k = lo + int(np.argmax(r[lo:hi + 1]))
        if not lo < k < hi:
            return period
        left, mid, right = r[k - 1], r[k], r[k + 1]
        bend = left - 2 * mid + right
        return k + (0.5 * (left - right) / bend if bend < 0 else 0.0)

    def holds(outer: _Candidate | Scale, inner: _Candidate | Scale, series: np.ndarray = x,
              step: int = 1) -> tuple[bool, float, float]:
        """Whether ``outer`` is a scale over ``inner`` (module docstring), compared on
        ``series`` (the profile, or means of ``step`` samples of a view of it); its structure
        and nesting."""
        assert outer.starts is not None and inner.starts is not None
        period = refined(inner.length)
        own, off, near = structure_parts(
            series, np.round(outer.starts / step).astype(np.int64),
            np.maximum(1, np.round(outer.lengths / step)).astype(np.int64), period / step)
        nested = nested_share(outer.starts, outer.lengths, inner.starts, inner.lengths)
        good = (off - own >= STRUCTURE and near > own and nested >= NESTED
                and (series is x or outer_share(x, period, outer.starts, outer.lengths)
                     >= OUTER_SHARE))
        return good, off - own, nested

    smaller = _best_of_near([m for c in candidates if c.length < base / 1.5
                             and inside_match(c.length) <= good_match and (m := measured(c))])

    def plain_multiple(c: _Candidate) -> bool:
        """Whether ``c`` only repeats a shorter candidate nested in it."""
        return any(_multiple(c.length, d.length) and d.length < c.length / 1.5
                   and nested_share(c.starts, c.lengths, d.starts, d.lengths) >= NESTED
                   and outer_structure(x, c.starts, c.lengths, refined(d.length)) < STRUCTURE
                   for d in smaller)

    for c in sorted(smaller, key=lambda c: -c.length):
        outer = lower[-1]
        if c.length > outer.length / 1.5 or known(c.length) or plain_multiple(c):
            continue
        good, structure, nested = holds(outer, c)
        if good:
            lower[-1] = replace(outer, structure=structure, nested=nested)
            lower.append(_scale(c, sampling_period))
    upper.append(lower[0])
    above = [c for c in candidates if c.length > 1.5 * base]
    while True:  # each longer scale over the last one, seen through a window of it
        inner_scale = upper[-1]
        inner = refined(inner_scale.length)
        step = max(1, round(inner / FEATURE_BLOCKS))  # the view varies slowly
        view = _block_means(outer_feature(x, inner), step)
        rf = autocorrelation(view, (max_lag + slack(max_lag)) // step + 1)
        found = [_Candidate(p * step, "autocorrelation") for p in from_autocorrelation(
            rf, inner / step, max(2, min_period // step), max_lag // step)]
        options = sorted((c for c in [*above, *found]
                          if c.length >= 1.5 * inner_scale.length and not known(c.length)),
                         key=lambda c: c.length)
        accepted = None
        for c in options:
            if accepted is not None and c.length > (1 + MULTIPLE) * accepted[0].length:
                break  # the next scale up, once the candidates near this one are tried
            m = measured(c, view, step)
            if m is None or known(m.length):
                continue
            good, structure, nested = holds(m, inner_scale, view, step)
            if good and (accepted is None or m.coverage > accepted[0].coverage):
                accepted = (m, structure, nested)
        if accepted is None:
            break
        m, structure, nested = accepted
        upper.append(_scale(m, sampling_period, structure=structure, nested=nested))
    scales = sorted(lower[1:] + upper, key=lambda s: s.length)
    return tuple(replace(s, ratio=s.length / scales[i - 1].length if i else 0.0)
                 for i, s in enumerate(scales))


def _best_of_near(candidates: list[_Candidate]) -> list[_Candidate]:
    """Of candidates within ``MULTIPLE`` of one another, the one covering most."""
    kept: list[_Candidate] = []
    for c in sorted(candidates, key=lambda c: -c.coverage):
        if not any(abs(c.length - k.length) <= MULTIPLE * k.length for k in kept):
            kept.append(c)
    return kept


def _scale(c: _Candidate, sampling_period: float, **relation: float) -> Scale:
    assert c.starts is not None and c.lengths is not None
    return Scale(period_s=c.length * sampling_period, length=c.length, coverage=c.coverage,
                 window=c.window, source=c.source, starts=c.starts, lengths=c.lengths,
                 **relation)


def _largest_group(batches: detect.Batches, n_valid: int, *, alpha: float, tolerance: float,
                   min_instances: int,
                   coverage: Callable[[np.ndarray, np.ndarray], float]) -> _Candidate | None:
    """The kept length group of one detector pass that covers most, as a candidate."""
    groups, covered = tune.kept_groups(batches, n_valid, alpha=alpha, tolerance=tolerance,
                                       min_instances=min_instances)
    if covered.size == 0:
        return None
    s, n, batch = batches.instances()
    members = groups[batch] == int(np.argmax(covered))
    s, n = s[members], n[members]
    return _Candidate(float(n.mean()), "window scan", 0, s, n, coverage(s, n))
