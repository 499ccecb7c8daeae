"""``pk.structure``: the verb of ``phasekit structure`` (the Python front door)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_trace

if TYPE_CHECKING:
    from phasekit.present import Presentation
    from phasekit.structure import StructureOptions, StructureResult
    from phasekit.trace import Trace

__all__ = ["figure", "fit_width", "structure"]


def structure(trace: Trace | PathLike, *, rank: int | None = None,
              options: StructureOptions | None = None, **keywords: Any) -> StructureResult:
    """The loop structure of an MPI trace (``phasekit structure``; Martínez Vera):
    :func:`phasekit.structure.structure`.

    Parameters
    ----------
    trace
        A :class:`~phasekit.trace.Trace` or its file (Paraver, OTF2).
    rank
        Analyse this rank only (default: every rank, merged).
    options
        The tuning parameters as one :class:`~phasekit.structure.StructureOptions`; or give
        them as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.structure.StructureOptions`: ``eps``, ``min_pts``
        (DBSCAN's), ``min_explained``. Checked before the trace is read.
    """
    from phasekit.structure import StructureOptions
    from phasekit.structure import structure as run_structure

    chosen = StructureOptions.of(options, keywords, verb="structure")
    return run_structure(as_trace(trace), rank=rank, options=chosen)


def figure(result: StructureResult, path: PathLike) -> Path:
    """Write the clustering scatter of a structure (what ``phasekit structure --plot``
    writes): every repeated call per rank, repetitions against mean time between them,
    coloured by loop (:func:`phasekit.plot.structure.plot_clusters`).

    Parameters
    ----------
    result
        What :func:`structure` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.structure import plot_clusters

    return plot_clusters(result, path)


def fit_width(shown: Presentation, width: int) -> Presentation:
    """A structure's presentation with the file names and pseudocode lines of its pseudocode
    table cut short (…) to fit a terminal of ``width`` columns; the numbers are never cut
    (:func:`phasekit.structure.table.fit_width`).

    Parameters
    ----------
    shown
        ``result.present(name)`` of a :class:`~phasekit.structure.StructureResult`.
    width
        The columns to fit in.
    """
    from phasekit.structure.table import fit_width as fitted

    return fitted(shown, width)
