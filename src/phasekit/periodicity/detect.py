"""Sliding-window detection and extraction of periodic instances (Phase-TA, section III-A).

The window SW of 2L samples is split into LSW and RSW. For every sliding factor k in
1..L-1, RSW is compared with RSW_k, the right half of SW shifted right by k, that is the L
samples that start k samples before RSW. The comparison is the paper's Euclidean distance,
made level- and scale-free so that one threshold means the same on every profile (our
choice, documented here because the paper leaves "close to zero" open):

    delta(k) = || (R - mean R) - (R_k - mean R_k) ||^2 / ( ||R - mean R||^2 + ||R_k - mean R_k||^2 )

delta is 0 when R_k repeats R exactly (up to a constant offset, which absorbs slow drifts),
about 1 when they are unrelated (white noise) and 2 when they are opposite.

"Close to zero" is ``delta(k) <= near_zero`` (default 0.25: the shifted copy explains at
least 75 % of the window's variance). Before any k counts, delta must first have risen
above ``rise`` (default 0.5) for some smaller shift: a smooth or trending signal resembles
itself at small shifts without being periodic, and a random walk never comes back down
after rising. Among shifts past that first rise, the global minimum k* must be close to
zero. The family is every local minimum of which k* is a multiple (within 2 %) and whose
delta is at most 2 x near_zero: with noise and warping, the distance at one period is often
a little higher than at two or three periods (the multiple constraint keeps this looser
test safe). The base periodicity k_bp is the smallest member of the family, refined to the
lowest delta within 3 % around it. Windows holding a constant signal are not periodic.

A periodic window yields floor(L / k_bp) instances taken from RSW and slides by
k_bp * floor(L / k_bp) (the paper). Beyond the paper, each of those instances must itself resemble
the k_bp samples before it (delta <= 2 x near_zero on that instance alone): the window-level
distance is an average, and a long window would otherwise accept an aperiodic burst (a
checkpoint, say) among its instances. Extraction stops at the first instance that fails and
the window slides to it. When a window that follows a periodic one is not periodic (it
reaches past the end of the region), the region is extended instance by instance with the
last base periodicity for as long as each instance passes that same test, so a region loses
less than one period at its end instead of up to a window. A window with no periodicity slides by
``aperiodic_step * L`` (default L/4; our choice, the paper does not say): small enough that
a periodic region is entered at most L/4 samples late, large enough to keep the pass linear.
When a periodic window follows a non-periodic one, the copy matched in LSW (the k_bp samples
just before RSW) is an instance too: the distance verified it, and the paper's definition of a
periodic region counts the first occurrence.

Distances are computed from prefix sums of the segment and the cross products of RSW with
its shifts, directly for small windows and by FFT correlation for large ones, in O(L log L)
per window. The pass runs in C (``_kernels.c``, the GIL released: the tuning runs passes on
threads); the functions below are its thin wrappers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phasekit.periodicity import _kernels

NEAR_ZERO = 0.25
RISE = 0.5
MIN_PERIOD = 4
APERIODIC_STEP = 0.25
MULTIPLE_TOLERANCE = 0.02
REFINE_TOLERANCE = 0.03
FFT_ABOVE = 40
INSTANCE_FACTOR = 2.0


@dataclass(frozen=True)
class Batches:
    """Instances found by one pass: batch ``b`` holds ``count[b]`` consecutive instances of
    ``length[b]`` samples from ``start[b]`` (indices into the analyzed series). ``leading[b]``
    says the first instance is the copy in LSW that opens a periodic region; otherwise that
    copy, verified too, belongs to the previous batch."""

    start: np.ndarray
    length: np.ndarray
    count: np.ndarray
    leading: np.ndarray

    def verified(self) -> tuple[np.ndarray, np.ndarray]:
        """Per batch the sample range [first, end) the distance showed to be periodic."""
        first = np.where(self.leading, self.start, self.start - self.length)
        return first, self.start + self.length * self.count

    @property
    def n_instances(self) -> int:
        return int(self.count.sum())

    def covered(self) -> int:
        return int((self.length * self.count).sum())

    def instances(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per instance: start, length, and the batch it came from."""
        batch = np.repeat(np.arange(self.count.size), self.count)
        offset = np.arange(batch.size) - np.repeat(np.cumsum(self.count) - self.count, self.count)
        length = self.length[batch]
        return self.start[batch] + offset * length, length, batch

    def shifted(self, offset: int) -> Batches:
        return Batches(self.start + offset, self.length, self.count, self.leading)

    @staticmethod
    def concat(parts: list[Batches]) -> Batches:
        if not parts:
            empty = np.empty(0, np.int64)
            return Batches(empty, empty, empty, np.empty(0, bool))
        ints = (np.concatenate([getattr(p, f) for p in parts]).astype(np.int64)
                for f in ("start", "length", "count"))
        return Batches(*ints, np.concatenate([p.leading for p in parts]).astype(bool))


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def base_period(delta: np.ndarray, min_period: int, near_zero: float, rise: float,
                multiple_tolerance: float, refine_tolerance: float) -> int:
    """k_bp from the distance curve ``delta[k]`` (k = 1..L-1; index 0 unused); 0 if none."""
    return _kernels.base_period(_f64(delta), int(min_period), float(near_zero), float(rise),
                                float(multiple_tolerance), float(refine_tolerance))


def pair_delta(cs1: np.ndarray, cs2: np.ndarray, a: int, b: int, length: int,
               cross: float) -> float:
    """delta between x[a:a+length] and x[b:b+length] from prefix sums and their cross product:
    the squared distance over the sum of squares about the pooled mean of both blocks."""
    return _kernels.pair_delta(_f64(cs1), _f64(cs2), int(a), int(b), int(length), float(cross))


def verified_count(x: np.ndarray, cs1: np.ndarray, cs2: np.ndarray, first: int, k: int,
                   count: int, threshold: float) -> int:
    """How many of the ``count`` instances of ``k`` samples from ``first`` each resemble the
    k samples before them (delta <= threshold), counted until the first that does not."""
    return _kernels.verified_count(_f64(x), _f64(cs1), _f64(cs2), int(first), int(k),
                                   int(count), float(threshold))


def _delta_from_cross(cross: np.ndarray, cs1: np.ndarray, cs2: np.ndarray, rsw: int,
                      half: int, out: np.ndarray) -> None:
    """delta[k] from the raw cross products ``cross[k] = sum R * R_k`` (all dimensions) into
    ``out`` (float64); with one dimension, pair_delta's arithmetic operation for operation on
    flat prefix sums, the terms of RSW hoisted out of the loop over k."""
    _kernels.delta_from_cross(_f64(cross), _f64(cs1), _f64(cs2), int(rsw), int(half), out)


def _cross_direct(x: np.ndarray, rsw: int, half: int, cross: np.ndarray) -> None:
    """cross[k] = sum_i R[i] x[rsw - k + i] for k = 1..L-1 directly into ``cross`` (float64);
    with one dimension four shifts at a time, each sum in the same order."""
    _kernels.cross_direct(_f64(x), int(rsw), int(half), cross)


def _cross_fft(x: np.ndarray, rsw: int, half: int, cross: np.ndarray) -> None:
    """cross[k] = sum_i R[i] x[rsw - k + i] for k = 1..L-1 by FFT correlation of RSW with the
    window's 2 L samples, through real FFTs of the power of two at least 2 L (lags up to L - 1
    of 2 L samples: 2 L - 1 points or more do not wrap around)."""
    _kernels.cross_fft(_f64(x), int(rsw), int(half), cross)


def prefix_sums(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    zeros = np.zeros((1, x.shape[1]))
    return (np.concatenate([zeros, np.cumsum(x, axis=0)]),
            np.concatenate([zeros, np.cumsum(x * x, axis=0)]))


def distance_curve(x: np.ndarray, window_start: int, half: int) -> np.ndarray:
    """delta(k) for k = 0..L-1 of the window starting at ``window_start`` (index 0 is 0)."""
    x = _as_2d(x)
    cs1, cs2 = prefix_sums(x)
    cross = np.zeros(half)
    rsw = window_start + half
    if half > FFT_ABOVE:
        _cross_fft(x, rsw, half, cross)
    else:
        _cross_direct(x, rsw, half, cross)
    delta = np.zeros(half)
    _delta_from_cross(cross, cs1, cs2, rsw, half, delta)
    return delta


def _as_2d(x: np.ndarray) -> np.ndarray:
    """2-D float copy centered on its mean: delta ignores offsets, and centering keeps the
    prefix sums small so that their differences stay exact for a constant signal."""
    x = np.array(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    finite = np.isfinite(x).all(axis=1)
    if finite.any():
        x -= x[finite].mean(axis=0)
    return np.ascontiguousarray(x)


Prepared = tuple[np.ndarray, np.ndarray, np.ndarray]


def prepare(x: np.ndarray) -> Prepared:
    """The centered 2-D copy of a series and its prefix sums: what every pass of ``detect``
    over it needs (compute it once when several window sizes are tried)."""
    x = _as_2d(x)
    cs1, cs2 = prefix_sums(x)
    return x, cs1, cs2


def detect(x: np.ndarray | Prepared, half: int, *, min_period: int = MIN_PERIOD,
           near_zero: float = NEAR_ZERO, rise: float = RISE,
           aperiodic_step: float = APERIODIC_STEP, lagged_copy: bool = True,
           multiple_tolerance: float = MULTIPLE_TOLERANCE,
           refine_tolerance: float = REFINE_TOLERANCE) -> Batches:
    """One pass of the sliding-window detector over a gap-free series (n x d), or over what
    ``prepare`` made of it.

    ``half`` is L, the length of LSW and RSW (Phase-TA, section III-A).
    """
    x, cs1, cs2 = (_f64(a) for a in x) if isinstance(x, tuple) else prepare(x)
    n = x.shape[0]
    step = max(1, int(aperiodic_step * half))
    if half < 2 or 2 * half > n:
        return Batches.concat([])
    capacity = n // max(1, min(step, min_period)) + 2  # a batch spans min_period samples or more
    starts = np.empty(capacity, np.int64)
    lengths = np.empty(capacity, np.int64)
    counts = np.empty(capacity, np.int64)
    leading = np.empty(capacity, np.bool_)
    found = _kernels.scan(x, cs1, cs2, int(half), int(min_period), near_zero, rise,
                          multiple_tolerance, refine_tolerance, step, lagged_copy,
                          half > FFT_ABOVE, INSTANCE_FACTOR * near_zero, starts, lengths,
                          counts, leading)
    return Batches(starts[:found].copy(), lengths[:found].copy(), counts[:found].copy(),
                   leading[:found].copy())


def whole_segment(x: np.ndarray, *, min_period: int = MIN_PERIOD, near_zero: float = NEAR_ZERO,
                  rise: float = RISE, min_overlap: float = 0.5, min_samples: int = 16,
                  multiple_tolerance: float = MULTIPLE_TOLERANCE,
                  refine_tolerance: float = REFINE_TOLERANCE) -> Batches:
    """Short-profile detection (beyond the paper): the whole segment against itself shifted by k.

    The sliding window needs 2L > 2k samples to see a period k, so a profile holding fewer
    than about two and a half periods (a short trace, the real LULESH profile of two
    iterations) shows nothing. Here delta(k) compares x[k:] with x[:n-k] for every k whose
    overlap n - k covers at least ``min_overlap`` of a period and ``min_period`` samples, and
    the base period is chosen as for a window, with safeguards against chance that the caller
    sets (``analyze`` asks for delta <= near_zero / 2 and a first rise to 2 x rise, the shifted
    copy opposing the original as an oscillation does: only part of a period is verified, and
    a random walk's large-scale shape matches itself at some shift more often than one would
    think), and an overlap of at least ``min_samples`` samples. The instances are the whole periods from the start of the segment.
    """
    x = _as_2d(x)
    n = x.shape[0]
    cs1, cs2 = prefix_sums(x)
    delta = np.full(n, np.inf)
    delta[0] = 0.0
    for k in range(1, n - min_period + 1):
        overlap = n - k
        if overlap < max(min_overlap * k, min_samples):
            break
        cross = float(np.einsum("ij,ij->", x[k:], x[:overlap]))
        delta[k] = pair_delta(cs1, cs2, k, 0, overlap, cross)
    usable = int(np.isfinite(delta).sum())
    k = base_period(delta[:usable], min_period, near_zero, rise, multiple_tolerance,
                    refine_tolerance) if usable > min_period else 0
    if k == 0 or n // k < 1:
        return Batches.concat([])
    one = np.ones(1, np.int64)
    return Batches(0 * one, k * one, (n // k) * one, np.ones(1, bool))
