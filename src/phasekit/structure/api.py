"""``pk.structure``: the verb of ``phasekit structure`` (the Python front door)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_trace

if TYPE_CHECKING:
    from phasekit.periodicity import PeriodicityResult
    from phasekit.present import Presentation
    from phasekit.structure import StructureOptions, StructureResult
    from phasekit.structure.link import LinkOptions, PatternLoop
    from phasekit.trace import Trace

__all__ = ["figure", "fit_width", "link", "structure"]


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


def figure(result: StructureResult, path: PathLike, *, detail: bool = False) -> Path:
    """Write the figure of a structure (what ``phasekit structure --plot`` writes): the
    main loop's iterations per rank over time with their time in MPI
    (:func:`phasekit.plot.structure.timeline_figure`); with ``detail``, the clustering
    scatter (every repeated call per rank, repetitions against mean time between them,
    coloured by loop).

    Parameters
    ----------
    result
        What :func:`structure` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    detail
        The clustering scatter instead of the timeline.

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.common import save

    return save(result.plot(detail=detail), path)


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


def link(periodicity: PeriodicityResult, structure: StructureResult,
         trace: Trace | PathLike | None = None, *, options: LinkOptions | None = None,
         **keywords: Any) -> list[PatternLoop]:
    """Link each periodic pattern to the loop that makes it, with the loop's call sites
    (:func:`phasekit.structure.link.link_patterns`): the pattern's period is a whole number
    of the loop's iterations (or a whole fraction of one) within a tolerance, and its
    instances lie inside the loop's iterations.

    Parameters
    ----------
    periodicity
        A periodicity analysis of the trace's profile (``pk.periodicity(trace)``).
    structure
        The structure of the same trace (:func:`structure`, or one read from JSON).
    trace
        The trace (or its file): needed to time the loops' iterations when ``structure``
        was read from JSON; without it the link is by period alone.
    options
        The tuning parameters as one :class:`~phasekit.structure.link.LinkOptions`; or give
        them as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.structure.link.LinkOptions`: ``tolerance`` (10 %),
        ``min_overlap`` (half).

    Returns
    -------
    list of PatternLoop
        One per pattern, in pattern order (``.sentence`` says it in plain words,
        ``.to_dict()`` gives the JSON).
    """
    from phasekit.structure.link import LinkOptions, link_patterns

    chosen = LinkOptions.of(options, keywords, verb="link")
    read = as_trace(trace) if trace is not None else None
    return link_patterns(periodicity, structure, read, options=chosen)
