"""Loops from clusters, and their nesting (Martínez Vera, "Loops merge").

A cluster of reduced calls is a loop: its calls' repetitions are its iterations and their
mean time between repetitions its iteration time. Loops are nested from the most iterations
down (Martínez Vera's algorithm: sort by iterations, merge from high to low counts), and before
every merge we check that the relation really holds (Martínez Vera: "Not all loops that fulfil the
nested loop conditions are nested loops. Extra check is needed."):

1. the inner loop has more iterations and a shorter time between them than the outer;
2. explained time: on every rank, the inner loop's calls lie inside the outer loop's extent
   (its anchor call's first to last time, widened by one outer iteration on each side);
3. timestamps: the inner loop's calls fall in (nearly) every outer iteration: the outer
   anchor's timestamps cut time into iterations, and the inner calls must touch at least
   all but one of them.

Martínez Vera first classifies loops by δ ("how much of execution represents") and merges inside
each class; check 2 is that classification made exact per rank, so we do not keep a separate
δ tolerance. An inner loop goes into the first outer loop (fewest extra iterations) that
passes, which makes it the immediate parent.

The *anchor* of a loop on a rank is its earliest call among those repeating as often as the
loop iterates there: its timestamps mark the iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from phasekit.structure.reduce import Reduction

__all__ = ["InferredLoop", "build_loops", "nest"]

#: An inner loop must touch all outer iterations but this many (boundary effects).
_MISSED_ITERATIONS = 1
#: Possible cluster split when the gaps across outer iterations are within this factor of
#: the gaps inside one (the outer loop adds no time of its own).
_SPLIT_GAP_RATIO = 1.25


@dataclass(eq=False)
class InferredLoop:
    """A loop found in the trace: its own calls (entries of the reduction), iterations
    (median repetitions of its calls: total over the run), ranks, and nesting."""

    label: int
    entries: np.ndarray
    it: int
    imt: float
    ranks: tuple[int, ...]
    anchor: dict[int, np.ndarray]
    parent: InferredLoop | None = None
    children: list[InferredLoop] = field(default_factory=list)
    id: int = -1
    _trips: tuple[InferredLoop, np.ndarray] | None = field(default=None, repr=False)

    def subtree(self) -> list[InferredLoop]:
        out = [self]
        for child in self.children:
            out.extend(child.subtree())
        return out

    def all_entries(self) -> np.ndarray:
        return np.concatenate([loop.entries for loop in self.subtree()])

    def all_ranks(self) -> tuple[int, ...]:
        return tuple(sorted({r for loop in self.subtree() for r in loop.ranks}))

    def anchor_on(self, rank: int) -> np.ndarray:
        """The anchor timestamps on ``rank`` (another rank's when the loop has no call there:
        timestamps are global)."""
        return self.anchor.get(rank, self.anchor[self.ranks[0]])

    @property
    def iterations_per_outer(self) -> float:
        return self.it / self.parent.it if self.parent is not None else float(self.it)

    def trip_counts(self) -> np.ndarray:
        """Iterations in each iteration of the parent, on every rank (the parent's anchor
        calls cut this loop's anchor calls; the partial bins before the parent's first anchor
        call and after its last are kept only when not empty); ``[it]`` at the top level."""
        if self.parent is None:
            return np.array([self.it])
        if self._trips is not None and self._trips[0] is self.parent:
            return self._trips[1]
        counts = []
        for rank, times in self.anchor.items():
            cuts = self.parent.anchor_on(rank)
            per = np.bincount(np.searchsorted(cuts, times, side="right"),
                              minlength=cuts.size + 1)
            edges = [k for k in (0, cuts.size) if per[k] == 0]
            counts.append(np.delete(per, edges))
        every = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        trips = every if every.size else np.array([round(self.iterations_per_outer)])
        self._trips = (self.parent, trips)
        return trips

    def iteration_time_s(self) -> float:
        """Mean time between consecutive iterations inside one iteration of the parent (the
        whole run for a top-level loop), averaged over ranks; NaN with one iteration."""
        gaps = []
        for rank, times in self.anchor.items():
            diffs = np.diff(times)
            if self.parent is not None:
                cut = np.searchsorted(self.parent.anchor_on(rank), times, side="right")
                diffs = diffs[cut[1:] == cut[:-1]]
            gaps.append(diffs)
        every = np.concatenate(gaps) if gaps else np.zeros(0)
        return float(every.mean()) if every.size else float("nan")


def build_loops(reduction: Reduction, entries: np.ndarray, labels: np.ndarray
                ) -> list[InferredLoop]:
    """One :class:`InferredLoop` per cluster label (noise, -1, is skipped)."""
    loops = []
    for label in np.unique(labels[labels >= 0]):
        members = entries[labels == label]
        it = int(np.median(reduction.it[members]))
        imt = float(np.median(reduction.imt[members]))
        ranks = np.unique(reduction.rank[members])
        anchor: dict[int, np.ndarray] = {}
        for r in ranks:
            on_rank = members[reduction.rank[members] == r]
            closest = np.abs(reduction.it[on_rank] - it)
            candidates = on_rank[closest == closest.min()]
            chosen = candidates[np.argmin(reduction.first[candidates])]
            anchor[int(r)] = reduction.timestamps(int(chosen))
        loops.append(InferredLoop(int(label), members, it, imt,
                                  tuple(int(r) for r in ranks), anchor))
    return loops


def _times_on(reduction: Reduction, loop: InferredLoop, rank: int) -> np.ndarray:
    own = loop.entries[reduction.rank[loop.entries] == rank]
    return np.concatenate([reduction.timestamps(int(e)) for e in own]) if own.size \
        else np.zeros(0)


def is_subloop(reduction: Reduction, inner: InferredLoop, outer: InferredLoop) -> bool:
    """Whether ``inner`` runs inside every iteration of ``outer`` (module docstring)."""
    if not (inner.it > outer.it and inner.imt < outer.imt):
        return False
    for rank in inner.ranks:
        anchor = outer.anchor_on(rank)
        if anchor.size < 2:
            return False
        slack = float(np.diff(anchor).max())
        times = _times_on(reduction, inner, rank)
        if times.min() < anchor[0] - slack or times.max() > anchor[-1] + slack:
            return False
        touched = np.unique(np.searchsorted(anchor, times, side="right")).size
        if touched < anchor.size - _MISSED_ITERATIONS:
            return False
    return True


def nest(reduction: Reduction, loops: list[InferredLoop]) -> list[InferredLoop]:
    """Nest ``loops`` (Martínez Vera: from high to low iteration counts, checked); returns the
    top-level loops, unordered."""
    order = sorted(loops, key=lambda loop: (-loop.it, loop.imt))
    for i, inner in enumerate(order):
        for outer in order[i + 1:]:
            if outer.it < inner.it and is_subloop(reduction, inner, outer):
                inner.parent = outer
                outer.children.append(inner)
                break
    return [loop for loop in loops if loop.parent is None]


def split_suspect(loop: InferredLoop) -> bool:
    """Whether nested ``loop`` repeats as evenly across its parent's iterations as inside
    one: then the parent's own calls may be conditional calls of one loop (cluster split,
    Martínez Vera, "Further considerations"), and the nest is one reading of the trace, not the only."""
    if loop.parent is None:
        return False
    inside, across = [], []
    for rank, times in loop.anchor.items():
        cut = np.searchsorted(loop.parent.anchor_on(rank), times, side="right")
        diffs = np.diff(times)
        same = cut[1:] == cut[:-1]
        inside.append(diffs[same])
        across.append(diffs[~same & (cut[1:] > 0)])
    inside_all, across_all = np.concatenate(inside), np.concatenate(across)
    if not (inside_all.size and across_all.size):
        return False
    return float(np.median(across_all)) <= _SPLIT_GAP_RATIO * float(np.median(inside_all))
