"""Phase alignment of the extracted instances (beyond the seed).

The detector cuts instances wherever RSW happens to start, so two periodic regions of the
same periodicity (for example the compute phases between two checkpoints) are cut at
different phases of the iteration, and a long region drifts in phase when its period is not
a whole number of samples. DTW tolerates small shifts but not a cyclic rotation, so such
instances would look like different periodicities to the clustering.

For every length group we take a reference cycle (the mean cycle of the batch with the most
instances) and put its boundary at its calmest point (least local variation), so that
boundaries do not cut through a sharp feature. Every batch's mean cycle is then rotated onto
the reference by circular cross-correlation and its instances are cut at that phase, inside
the range the detector verified as periodic; the cut loses part of an instance at the ends
of a region, which the extension of ``align_instances`` wins back. Instances that overlap an
earlier kept instance by more than half their length are dropped.
"""

from __future__ import annotations

import numpy as np

from phasekit.periodicity.detect import Batches, prefix_sums, verified_count

SAME_CYCLE = 0.8


def mean_cycle(x: np.ndarray, start: int, length: int, count: int) -> np.ndarray:
    """Mean of ``count`` consecutive instances of ``length`` samples from ``start``."""
    return x[start:start + length * count].reshape(count, length, x.shape[1]).mean(axis=0)


def calmest_point(cycle: np.ndarray) -> int:
    """Index of the least local variation of a cycle (circular, smoothed over 5 % of it)."""
    length = cycle.shape[0]
    variation = np.abs(np.diff(cycle, axis=0, append=cycle[:1])).sum(axis=1)
    width = max(1, length // 20)
    kernel = np.ones(width) / width
    padded = np.concatenate([variation[-width:], variation, variation[:width]])
    smooth = np.convolve(padded, kernel, mode="same")[width:width + length]
    return int(np.argmin(smooth))


def resample_cycle(cycle: np.ndarray, length: int) -> np.ndarray:
    """Linear resampling of a cycle to ``length`` points (circular)."""
    source = cycle.shape[0]
    positions = np.arange(length) * source / length
    extended = np.concatenate([cycle, cycle[:1]])
    base = np.floor(positions).astype(int)
    frac = (positions - base)[:, None]
    return extended[base] * (1 - frac) + extended[base + 1] * frac


def best_rotation(reference: np.ndarray, cycle: np.ndarray) -> tuple[int, float]:
    """The rotation s maximizing sum_t reference[t] . cycle[(t + s) mod n] (both n x d) and
    the correlation coefficient of the two cycles at that rotation."""
    ref = reference - reference.mean(axis=0)
    cyc = cycle - cycle.mean(axis=0)
    spectrum = (np.conj(np.fft.rfft(ref, axis=0)) * np.fft.rfft(cyc, axis=0)).sum(axis=1)
    correlation = np.fft.irfft(spectrum, n=ref.shape[0])
    best = int(np.argmax(correlation))
    scale = np.sqrt((ref * ref).sum() * (cyc * cyc).sum())
    return best, float(correlation[best] / scale) if scale > 0 else 0.0


def align_instances(x: np.ndarray, batches: Batches, group: np.ndarray, *,
                    same_cycle: float = SAME_CYCLE, extend_threshold: float = 0.5
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

    def free(a: int, b: int) -> bool:
        """No batch verified any sample of [a, b)."""
        return a >= b or covered[min(b, x.shape[0])] == covered[max(a, 0)]

    def periodic(a: int, k: int) -> bool:
        """The k samples from ``a`` resemble the k samples before them."""
        return (a - k >= 0 and a + k <= x.shape[0] and bad[a + k] == bad[a - k]
                and verified_count(clean, cs1, cs2, a, k, 1, extend_threshold) == 1)

    chain = chains(batches)
    starts, lengths, groups = [], [], []
    for g in np.unique(group[group >= 0]):
        members = np.flatnonzero(group == g)
        references: list[np.ndarray] = []
        cuts: list[list[np.ndarray]] = []  # per reference, the anchors of each batch
        chain_ids = np.unique(chain[members])
        chain_size = np.array([batches.count[members[chain[members] == c]].sum() for c in chain_ids])
        for c in chain_ids[np.argsort(-chain_size, kind="stable")]:
            in_chain = members[chain[members] == c]
            widest = in_chain[int(np.argmax(batches.count[in_chain]))]
            cycle = _verified_cycle(x, batches, first, end, widest)
            which = -1
            for r, reference in enumerate(references):
                _, corr = best_rotation(reference, resample_cycle(cycle, reference.shape[0]))
                if corr >= same_cycle:
                    which = r
                    break
            if which < 0:
                references.append(np.roll(cycle, -calmest_point(cycle), axis=0))
                cuts.append([])
            reference = references[which]
            for b in in_chain:
                k = int(batches.length[b])
                f, e = int(first[b]), int(end[b])
                rotation, _ = best_rotation(reference, resample_cycle(
                    _verified_cycle(x, batches, first, end, b), reference.shape[0]))
                lo = f + round(rotation * k / reference.shape[0]) % k
                count = (e - lo) // k
                while free(lo - k, f) and periodic(lo, k):
                    lo -= k
                    count += 1
                while (free(max(lo + count * k, e), lo + (count + 1) * k)
                       and periodic(lo + count * k, k)):
                    count += 1
                if count > 0:
                    cuts[which].append(lo + k * np.arange(count + 1))
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
