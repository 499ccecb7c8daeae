"""``pk.structure``: the verb of ``phasekit structure`` (the Python front door)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_trace

if TYPE_CHECKING:
    from phasekit.structure import StructureResult
    from phasekit.trace import Trace

__all__ = ["structure"]


def structure(trace: Trace | PathLike, *, rank: int | None = None,
              **options: Any) -> StructureResult:
    """The loop structure of an MPI trace (``phasekit structure``; Martínez Vera):
    :func:`phasekit.structure.structure`.

    Parameters
    ----------
    trace
        A :class:`~phasekit.trace.Trace` or its file (Paraver, OTF2).
    rank
        Analyse this rank only (default: every rank, merged).
    **options
        ``eps``, ``min_pts``, ``min_explained``.
    """
    from phasekit.structure import structure as run_structure

    return run_structure(as_trace(trace), rank=rank, **options)
