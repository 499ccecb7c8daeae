"""Per-rank timelines of the main loop's iterations, for the figure of ``phasekit structure``.

A loop's anchor calls (:mod:`phasekit.structure.loops`) cut each rank's time into its
iterations: iteration k runs from the k-th anchor call to the next, shifted back by as much
as the loop's first call on that rank precedes its first anchor call (an anchor late in its
iteration, such as a closing barrier, would otherwise cut every iteration in two); the last
ends at the loop's last call on the rank, or one median iteration after its start. The time
in MPI of an iteration is the summed duration of the rank's MPI calls that start in it (a
call the trace ends inside counts nothing). Kept for the main loop
and the loops directly in it, on at most :data:`MAX_RANKS` ranks (evenly spread) and at
most :data:`MAX_BLOCKS` blocks per rank (consecutive iterations grouped beyond), so that
the JSON stays small whatever the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from phasekit.structure.loops import InferredLoop
from phasekit.structure.mainloop import extents
from phasekit.structure.reduce import Reduction

__all__ = ["MAX_BLOCKS", "MAX_RANKS", "loop_timeline", "rank_calls", "timelines"]

#: Ranks a timeline keeps at most (evenly spread over the loop's ranks; a figure of more
#: rows is unreadable).
MAX_RANKS = 16
#: Blocks per rank at most: beyond, consecutive iterations are grouped into one block.
MAX_BLOCKS = 400


def _spread(ranks: tuple[int, ...], most: int) -> list[int]:
    if len(ranks) <= most:
        return list(ranks)
    picks = np.unique(np.round(np.linspace(0, len(ranks) - 1, most)).astype(int))
    return [ranks[int(i)] for i in picks]


def loop_timeline(red: Reduction, loop: InferredLoop, calls: Mapping[int, tuple[np.ndarray,
                  np.ndarray]], *, max_ranks: int = MAX_RANKS, max_blocks: int = MAX_BLOCKS
                  ) -> dict[str, Any]:
    """``loop``'s iterations per rank (module docstring): ``{"id", "ranks", "group"
    (iterations per block), "starts", "ends", "mpi_share"}``, the last three one list per
    rank, times in seconds of the trace. ``calls``: per rank, its calls' entry times and
    durations (:func:`rank_calls`)."""
    spans = extents(red, loop)
    ranks = [r for r in _spread(loop.ranks, max_ranks) if r in spans]
    anchors = {r: np.sort(loop.anchor_on(r)) for r in ranks}
    longest = max((a.size for a in anchors.values()), default=0)
    group = max(1, -(-longest // max_blocks))
    starts, ends, shares = [], [], []
    for r in ranks:
        anchor = anchors[r]
        if anchor.size == 0:
            starts.append([]), ends.append([]), shares.append([])
            continue
        typical = float(np.median(np.diff(anchor))) if anchor.size > 1 else 0.0
        # the anchor call may come late in an iteration (a barrier at its end): iterations
        # start as far before their anchor as the loop's first call lies before the first
        lead = min(max(float(anchor[0]) - spans[r][0], 0.0), typical)
        begin = anchor - lead
        finish = np.append(begin[1:], max(spans[r][1], begin[-1] + typical))
        time, duration = calls.get(r, (np.zeros(0), np.zeros(0)))
        k = np.searchsorted(begin, time, side="right") - 1
        inside = (k >= 0) & (time < finish[np.clip(k, 0, None)])
        mpi = np.bincount(k[inside], weights=duration[inside], minlength=begin.size)
        cut = np.arange(0, begin.size, group)
        block_start = begin[cut]
        block_end = finish[np.minimum(cut + group, begin.size) - 1]
        block_mpi = np.add.reduceat(mpi[:begin.size], cut)
        length = np.maximum(block_end - block_start, 1e-12)
        starts.append(np.round(block_start, 9).tolist())
        ends.append(np.round(block_end, 9).tolist())
        shares.append(np.round(np.clip(block_mpi / length, 0.0, 1.0), 3).tolist())
    return {"id": loop.id, "ranks": ranks, "group": int(group), "starts": starts,
            "ends": ends, "mpi_share": shares}


def rank_calls(rank: np.ndarray, time: np.ndarray, duration: np.ndarray,
               ranks: Sequence[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per rank of ``ranks``, the entry times and durations of its calls (the trace's
    ``rank``, ``time_s`` and ``duration_s`` columns; a call the trace ends inside, NaN,
    lasts 0 here). A trace's calls are sorted by rank,
    so each rank's are one slice (found by bisection, not a pass over every call); other
    orders are masked."""
    out = {}
    ordered = bool(np.all(rank[1:] >= rank[:-1]))
    for r in ranks:
        if ordered:
            mine: slice | np.ndarray = slice(int(np.searchsorted(rank, r, side="left")),
                                             int(np.searchsorted(rank, r, side="right")))
        else:
            mine = rank == r
        out[int(r)] = (time[mine], np.nan_to_num(duration[mine], nan=0.0))
    return out


def timelines(red: Reduction, loops: list[InferredLoop], main_id: int | None,
              rank: np.ndarray, time: np.ndarray, duration: np.ndarray
              ) -> tuple[dict[str, Any], ...]:
    """The timelines of the main loop (id ``main_id``) and of the loops directly in it;
    ``rank``, ``time``, ``duration``: the trace's calls (its columns)."""
    main = next((loop for loop in loops if loop.id == main_id), None)
    if main is None:
        return ()
    shown = sorted({r for loop in [main, *main.children]
                    for r in _spread(loop.ranks, MAX_RANKS)})
    calls = rank_calls(rank, time, duration, shown)
    return tuple(loop_timeline(red, loop, calls) for loop in [main, *main.children])
