"""Phase alignment of the extracted instances (beyond the paper).

The detector cuts instances wherever RSW happens to start, so two periodic regions of the
same periodicity (for example the compute phases between two checkpoints) are cut at
different phases of the iteration, and a long region drifts in phase when its period is not
a whole number of samples. DTW tolerates small shifts but not a cyclic rotation, so such
instances would look like different periodicities to the clustering.

For every length group we take a reference cycle (the mean cycle of the batch with the most
instances) and measure phases from its calmest point (least local variation). Every batch's
mean cycle is then rotated onto the reference by circular cross-correlation and its
instances are cut at one phase of the reference, inside the range the detector verified as
periodic, then extended instance by instance into the rest of the periodic region. Instances
that overlap an earlier kept instance by more than a quarter of their length are dropped.

The phase (ours): the one whose instances tile the periodic regions best. A cut at the
calmest point does not go through a sharp feature, but a region whose edges fall elsewhere
in the cycle (an iteration loop that starts and ends with a compute step, between
checkpoints) then loses a whole instance at each end: the demo's workload lost 4 of its 40
iterations, and an exactly periodic signal one of its 19 periods. So 32 phases evenly
spaced over the cycle, then every phase around the best, are scored by the samples their
instances cover, each instance passing the detector's instance test at the strict level
delta <= 0.25 (at 0.5, the level of the extension itself, a phase that drags the last
instance of each region a few samples into the aperiodic part scores best, and the
clustering then rejects those instances). Phases within half a cycle of the best count as
ties, won by the calmest, the calmest point itself first, so that a profile whose regions
gain nothing keeps the calm cut.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from phasekit.periodicity import _kernels
from phasekit.periodicity.detect import Batches, prefix_sums

SAME_CYCLE = 0.8
PHASES = 32
SCORE_THRESHOLD = 0.25


def mean_cycle(x: np.ndarray, start: int, length: int, count: int) -> np.ndarray:
    """Mean of ``count`` consecutive instances of ``length`` samples from ``start``."""
    return x[start:start + length * count].reshape(count, length, x.shape[1]).mean(axis=0)


def calmest_point(cycle: np.ndarray) -> int:
    """Index of the least local variation of a cycle (circular, smoothed over 5 % of it)."""
    return int(np.argmin(_local_variation(cycle)))


def resample_cycle(cycle: np.ndarray, length: int) -> np.ndarray:
    """Linear resampling of a cycle to ``length`` points (circular)."""
    source = cycle.shape[0]
    positions = np.arange(length) * source / length
    extended = np.concatenate([cycle, cycle[:1]])
    base = np.floor(positions).astype(int)
    frac = (positions - base)[:, None]
    return extended[base] * (1 - frac) + extended[base + 1] * frac


def rotate_to(reference: np.ndarray, cycle: np.ndarray) -> np.ndarray:
    """``cycle`` (length x metrics) turned to the phase of ``reference`` (any length, the same
    metrics): a periodicity has no intrinsic start (:func:`best_rotation` on the reference
    resampled to the cycle's length)."""
    rotation, _ = best_rotation(resample_cycle(reference, cycle.shape[0]), cycle)
    return np.roll(cycle, -rotation, axis=0)


def best_rotation(reference: np.ndarray, cycle: np.ndarray) -> tuple[int, float]:
    """The rotation s maximizing sum_t reference[t] . cycle[(t + s) mod n] (both n x d) and
    the correlation coefficient of the two cycles at that rotation."""
    return _rotation_to(_spectrum(reference), cycle)


Spectrum = tuple[int, np.ndarray, float]


def _spectrum(reference: np.ndarray) -> Spectrum:
    """What ``best_rotation`` needs of a reference: its length, the conjugate spectrum and the
    energy of its deviations from its mean (computed once per reference)."""
    ref = reference - reference.mean(axis=0)
    return ref.shape[0], np.conj(np.fft.rfft(ref, axis=0)), float((ref * ref).sum())


def _rotation_to(reference: Spectrum, cycle: np.ndarray) -> tuple[int, float]:
    length, conj_spectrum, energy = reference
    cyc = cycle - cycle.mean(axis=0)
    spectrum = (conj_spectrum * np.fft.rfft(cyc, axis=0)).sum(axis=1)
    correlation = np.fft.irfft(spectrum, n=length)
    best = int(np.argmax(correlation))
    scale = np.sqrt(energy * (cyc * cyc).sum())
    return best, float(correlation[best] / scale) if scale > 0 else 0.0


def align_instances(x: np.ndarray, batches: Batches, group: np.ndarray, *,
                    same_cycle: float = SAME_CYCLE, extend_threshold: float = 0.5,
                    score_threshold: float = SCORE_THRESHOLD, phases: int = PHASES
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Phase-aligned instances of the batches with ``group >= 0``: start, length, group.

    Consecutive batches that continue one another form a chain (a periodic region). Within a
    length group, chains are taken by decreasing number of instances; a chain whose widest
    batch's mean cycle correlates with an earlier reference by at least ``same_cycle`` (after
    the best rotation) is cut at that reference's phase, otherwise it becomes a new reference
    (two periodicities of similar lengths keep their own phases). Every batch of the chain is
    then rotated onto the chain's reference. Each batch is extended instance by
    instance on both sides, into samples no batch verified, while an instance passes the
    detector's per-instance test (delta <= ``extend_threshold`` against its neighbour) within
    the valid samples: this wins back the partial instances the cut loses at region edges.

    A batch's cuts are anchors; anchors of batches aligned on one reference that fall within a
    quarter period of each other are merged into one (their mean), so that the instances of a
    region tile it exactly, their lengths absorbing the phase drift between batches.
    """
    first, end = batches.verified()
    finite = np.isfinite(x).all(axis=1)
    clean = np.where(finite[:, None], x - x[finite].mean(axis=0), 0.0) if finite.any() else 0 * x
    cs1, cs2 = prefix_sums(clean)
    bad = np.concatenate([[0], np.cumsum(~finite)])

    marks = np.zeros(x.shape[0] + 1, np.int64)
    np.add.at(marks, first, 1)
    np.add.at(marks, end, -1)
    covered = np.concatenate([[0], np.cumsum(np.cumsum(marks)[:-1] > 0)])

    chain = chains(batches)
    starts, lengths, groups = [], [], []
    for g in np.unique(group[group >= 0]):
        members = np.flatnonzero(group == g)
        references: list[Spectrum] = []
        cycles: list[np.ndarray] = []  # the references' cycles, rolled to their calmest point
        chain_ids = np.unique(chain[members])
        chain_size = np.array([batches.count[members[chain[members] == c]].sum() for c in chain_ids])
        ordered: list[tuple[np.ndarray, int]] = []  # per chain in turn: its batches, its reference
        for c in chain_ids[np.argsort(-chain_size, kind="stable")]:
            in_chain = members[chain[members] == c]
            widest = in_chain[int(np.argmax(batches.count[in_chain]))]
            cycle = _verified_cycle(x, batches, first, end, widest)
            which = -1
            for r, reference in enumerate(references):
                _, corr = _rotation_to(reference, resample_cycle(cycle, reference[0]))
                if corr >= same_cycle:
                    which = r
                    break
            if which < 0:
                cycles.append(np.roll(cycle, -calmest_point(cycle), axis=0))
                references.append(_spectrum(cycles[-1]))
                which = len(references) - 1
            ordered.append((in_chain, which))
        # every batch's rotation onto its chain's reference, all batches of a reference at once
        rotation = np.zeros(batches.count.size, np.int64)
        for r, reference in enumerate(references):
            rotated = np.concatenate([b for b, which in ordered if which == r])
            rotation[rotated] = _rotations(reference, _cycles(
                x, first[rotated], batches.length[rotated], end[rotated], reference[0]))
        cuts: list[list[np.ndarray]] = []  # per reference, each batch's anchors
        for r, reference in enumerate(references):
            members_r = [b for in_chain, which in ordered if which == r for b in in_chain]

            anchors = functools.partial(
                _phase_anchors, members=members_r, reference_length=reference[0],
                rotation=rotation, batches=batches, first=first, end=end,
                state=(covered, bad, clean, cs1, cs2))
            members_array = np.asarray(members_r, np.int64)
            phase = _best_phase(functools.partial(
                _phase_cover, members=members_array, reference_length=reference[0],
                rotation=rotation, length=batches.length.astype(np.int64), first=first,
                end=end, covered=covered, bad=bad, clean=clean, cs1=cs1, cs2=cs2,
                threshold=score_threshold), cycles[r], phases)
            cuts.append(anchors(phase, threshold=extend_threshold))
        for batch_cuts in cuts:
            begin, finish = _instances_from_anchors(batch_cuts)
            starts.append(begin)
            lengths.append(finish - begin)
            groups.append(np.full(begin.size, g))
    if not starts:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    start = np.concatenate(starts).astype(np.int64)
    length = np.concatenate(lengths).astype(np.int64)
    grp = np.concatenate(groups).astype(np.int64)
    order = np.argsort(start, kind="stable")
    keep = _without_overlaps(start[order], length[order])
    return start[order][keep], length[order][keep], grp[order][keep]


def _best_phase(cover: Callable[[int], int], cycle: np.ndarray, phases: int) -> int:
    """The cut phase (in samples of ``cycle``, from its calmest point) whose instances cover
    the most samples (``cover(phase)``): ``phases`` evenly spaced phases, then every phase
    around the best of them; phases within half a cycle of the best count as ties, won by
    the calmest (0 first)."""
    length = cycle.shape[0]
    covered: dict[int, int] = {}

    def score(candidates: list[int]) -> None:
        for phase in candidates:
            if phase not in covered:
                covered[phase] = cover(phase)

    step = max(1, length // max(1, phases))
    score(list(range(0, length, step)))
    best = max(covered, key=lambda phase: (covered[phase], -phase))
    score([(best + d) % length for d in range(1 - step, step)])
    top = max(covered.values())
    tied = [phase for phase in sorted(covered) if covered[phase] >= top - length / 2]
    if 0 in tied:
        return 0
    calm = _local_variation(cycle)
    return min(tied, key=lambda phase: (calm[phase], phase))


def _phase_anchors(phase: int, *, members: list[int], reference_length: int,
                   rotation: np.ndarray, batches: Batches, first: np.ndarray, end: np.ndarray,
                   state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                   threshold: float) -> list[np.ndarray]:
    """Each batch's anchors when its instances are cut ``phase`` samples (of the reference)
    after the reference's calmest point, extended as far as they pass the per-instance test
    (delta <= ``threshold``)."""
    out = []
    for b in members:
        k = int(batches.length[b])
        f, e = int(first[b]), int(end[b])
        lo = f + round((int(rotation[b]) + phase) * k / reference_length) % k
        lo, count = _extend(lo, (e - lo) // k, k, f, e, *state, threshold)
        if count > 0:
            out.append(lo + k * np.arange(count + 1))
    return out


def _phase_cover(phase: int, members: np.ndarray, reference_length: int, rotation: np.ndarray,
                 length: np.ndarray, first: np.ndarray, end: np.ndarray, covered: np.ndarray,
                 bad: np.ndarray, clean: np.ndarray, cs1: np.ndarray, cs2: np.ndarray,
                 threshold: float) -> int:
    """Samples covered by the union of the batches' instances cut at ``phase`` and extended
    (``_phase_anchors``'s instances, before the anchors of neighbouring batches are merged;
    in C)."""
    return _kernels.phase_cover(int(phase), _i64(members), int(reference_length),
                                _i64(rotation), _i64(length), _i64(first), _i64(end),
                                _i64(covered), _i64(bad), _f64(clean), _f64(cs1), _f64(cs2),
                                float(threshold))


def _local_variation(cycle: np.ndarray) -> np.ndarray:
    """The smoothed local variation of a cycle at each of its samples (``calmest_point``'s
    measure)."""
    length = cycle.shape[0]
    variation = np.abs(np.diff(cycle, axis=0, append=cycle[:1])).sum(axis=1)
    width = max(1, length // 20)
    kernel = np.ones(width) / width
    padded = np.concatenate([variation[-width:], variation, variation[:width]])
    return np.convolve(padded, kernel, mode="same")[width:width + length]


def chains(batches: Batches) -> np.ndarray:
    """Chain id per batch: consecutive batches that continue one another (a periodic region)."""
    order = np.argsort(batches.start, kind="stable")
    start, length, count = batches.start[order], batches.length[order], batches.count[order]
    continues = np.zeros(order.size, bool)
    continues[1:] = (~batches.leading[order][1:]) & (start[1:] == start[:-1] + length[:-1] * count[:-1])
    chain = np.empty(order.size, np.int64)
    chain[order] = np.cumsum(~continues) - 1
    return chain


def _verified_cycle(x: np.ndarray, batches: Batches, first: np.ndarray, end: np.ndarray,
                    b: int) -> np.ndarray:
    k = int(batches.length[b])
    return mean_cycle(x, int(first[b]), k, int(end[b] - first[b]) // k)


def _cycles(x: np.ndarray, first: np.ndarray, length: np.ndarray, end: np.ndarray,
            points: int) -> np.ndarray:
    """Per batch, ``resample_cycle(mean_cycle(...), points)`` of its verified range, with
    NumPy's arithmetic: the mean adds the instances in order, then divides by their number
    (in C)."""
    x = _f64(x)
    out = np.empty((len(first), points, x.shape[1]))
    _kernels.cycles(x, _i64(first), _i64(length), _i64(end), out)
    return out


def _rotations(reference: Spectrum, cycles: np.ndarray) -> np.ndarray:
    """``_rotation_to(reference, cycle)[0]`` for every cycle of ``cycles`` (n x points x d) at
    once: the same NumPy operations along one more axis."""
    centered = cycles - cycles.mean(axis=1)[:, None, :]
    spectrum = (reference[1][None] * np.fft.rfft(centered, axis=1)).sum(axis=2)
    return np.argmax(np.fft.irfft(spectrum, n=reference[0], axis=1), axis=1)


def _extend(lo: int, count: int, k: int, first: int, end: int, covered: np.ndarray,
            bad: np.ndarray, clean: np.ndarray, cs1: np.ndarray, cs2: np.ndarray,
            threshold: float) -> tuple[int, int]:
    """A batch's ``count`` instances from ``lo`` extended instance by instance on both sides,
    into samples no batch verified (``covered``, cumulative counts of verified samples, does not
    change), while each instance is valid (``bad``, cumulative counts of invalid samples) and
    resembles the k samples before it (delta <= ``threshold``; in C)."""
    return _kernels.extend(int(lo), int(count), int(k), int(first), int(end), _i64(covered),
                           _i64(bad), _f64(clean), _f64(cs1), _f64(cs2), float(threshold))


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _instances_from_anchors(batch_cuts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Instances [start, end) between consecutive anchors of each batch, after merging the
    anchors of all batches that lie within a quarter period of each other."""
    if not batch_cuts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    anchors = np.concatenate(batch_cuts)
    periods = np.concatenate([np.full(c.size, c[1] - c[0]) for c in batch_cuts])
    owner = np.concatenate([np.full(c.size, i) for i, c in enumerate(batch_cuts)])
    order = np.argsort(anchors, kind="stable")
    sorted_anchors = anchors[order]
    new_cluster = np.diff(sorted_anchors) > periods[order][1:] // 4
    cluster_id = np.concatenate([[0], np.cumsum(new_cluster)])
    merged = np.round(np.bincount(cluster_id, weights=sorted_anchors)
                      / np.bincount(cluster_id)).astype(np.int64)
    position = np.empty_like(cluster_id)
    position[order] = cluster_id
    same_batch = owner[1:] == owner[:-1]
    first_anchor, next_anchor = position[:-1][same_batch], position[1:][same_batch]
    pairs = np.unique(np.stack([first_anchor, next_anchor], axis=1), axis=0)
    pairs = pairs[pairs[:, 1] > pairs[:, 0]]
    return merged[pairs[:, 0]], merged[pairs[:, 1]]


def _without_overlaps(start: np.ndarray, length: np.ndarray, share: float = 0.25) -> np.ndarray:
    """Mask keeping instances (sorted by start) that overlap the previously kept one by at most
    ``share`` of their length."""
    keep = np.zeros(start.size, bool)
    last_end = -1
    for i in range(start.size):  # one step per instance, not per sample
        if last_end - start[i] <= share * length[i]:
            keep[i] = True
            last_end = max(last_end, start[i] + length[i])
    return keep
