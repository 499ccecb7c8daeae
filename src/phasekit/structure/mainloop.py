"""Where a loop is and what it costs: the facts the headline of a structure names.

The **main loop** is the top-level loop whose calls span the most time (first to last call
of its subtree, on the rank where that span is longest): the program's time-step loop in an
iterative code, the one a performance engineer looks at first. Martínez Vera's paper orders
loops by program order only; naming one as the main loop is our choice, made from the
trace's own times (a loop that takes most of the run is where the time goes, whatever its
iteration count).

For every loop we also give the function it runs in (the deepest function all its calls go
through: the trace cannot tell whether the loop is there or one level up, as for the
pseudocode) and the line of that function where its first iteration's body starts (where it
makes its first call), and for top-level loops the share of the run they span and the share
of that span spent inside MPI calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from phasekit.structure.loops import InferredLoop
from phasekit.structure.reduce import Reduction

__all__ = ["extents", "loop_place", "loop_span_facts"]


def extents(red: Reduction, loop: InferredLoop) -> dict[int, tuple[float, float]]:
    """First and last call time of ``loop``'s subtree on each of its ranks."""
    entries = loop.all_entries()
    return {int(r): (float(red.first[on].min()), float(red.last[on].max()))
            for r in np.unique(red.rank[entries])
            for on in [entries[red.rank[entries] == r]]}


def loop_span_facts(red: Reduction, loop: InferredLoop, duration_s: float) -> dict[str, Any]:
    """A top-level loop's time span (first and last call of its subtree, the longest over
    its ranks), its share of the run, the share of its ranks' time in that span spent in
    its MPI calls, and its MPI calls per rank per iteration."""
    per_rank = extents(red, loop)
    if not per_rank:
        return {}
    entries = loop.all_entries()
    first = min(lo for lo, _ in per_rank.values())
    last = max(hi for _, hi in per_rank.values())
    longest = max(hi - lo for lo, hi in per_rank.values())
    spanned = sum(hi - lo for lo, hi in per_rank.values())
    in_mpi = float(red.sum_duration[entries].sum())
    calls = int(red.it[entries].sum())
    return {
        "first_s": first, "last_s": last, "span_s": longest,
        "run_share": longest / duration_s if duration_s > 0 else float("nan"),
        "mpi_share": min(in_mpi / spanned, 1.0) if spanned > 0 else float("nan"),
        "mpi_calls_per_iteration": calls / len(per_rank) / max(int(loop.it), 1),
    }


def loop_place(red: Reduction, loop: InferredLoop) -> dict[str, Any]:
    """Where ``loop`` is in the code: ``function``, the deepest function every call of its
    subtree that has a call path goes through ("" when they share none: the tracer kept too
    few caller levels to see it); ``site``, the line of that function where its first call in
    time is made, else of the outermost caller of that call, named in ``first_call_in``
    ("" when no call of the loop has a call path)."""
    entries = loop.all_entries()
    known = [(red.signatures[int(red.signature[e])].frames, float(red.first[e]))
             for e in entries]
    known = [(frames, first) for frames, first in known if frames]
    if not known:
        return {"function": "", "site": "", "first_call_in": ""}
    common = 0
    shortest = min(len(frames) for frames, _ in known)
    while common < shortest and all(frames[common][0] == known[0][0][common][0]
                                    for frames, _ in known):
        common += 1
    first_frames = min(known, key=lambda item: item[1])[0]
    function, site = first_frames[max(common, 1) - 1]
    return {"function": function if common else "", "site": site, "first_call_in": function}
