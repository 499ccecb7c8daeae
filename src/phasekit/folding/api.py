"""The Python doors of folding: :func:`fold`, :func:`fold_loop`, :func:`fold_pattern`
(no command yet)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_trace

if TYPE_CHECKING:
    from phasekit.folding import FoldedResult, FoldOptions
    from phasekit.periodicity import PeriodicityResult
    from phasekit.profile import Profile
    from phasekit.structure import StructureResult
    from phasekit.trace import Trace

__all__ = ["figure", "fold", "fold_loop", "fold_pattern"]


def _source(data: Trace | Profile | PathLike) -> Trace | Profile:
    from phasekit.profile import Profile
    from phasekit.trace import Trace

    if isinstance(data, Trace | Profile):
        return data
    from phasekit.io.formats import read_any

    read = read_any(data)
    if not isinstance(read, Trace | Profile):
        from phasekit.errors import UsageError

        raise UsageError(f"expected a trace or a profile, the file holds a "
                         f"{type(read).__name__}", parameter="source", value=str(data))
    return read


def fold(source: Trace | Profile | PathLike, iterations: Sequence[Sequence[float]], *,
         metrics: Sequence[str] | None = None, ranks: Sequence[int] | int | None = None,
         options: FoldOptions | None = None, **keywords: Any) -> FoldedResult:
    """Fold the counters of a trace or profile over given spans: each span mapped to 0..1
    of an instance, each counter's cumulative count read at evenly spaced positions, and
    the instances averaged position by position (mean, median, quartiles;
    :func:`phasekit.folding.fold`, after the BSC Folding tool).

    Parameters
    ----------
    source
        A :class:`~phasekit.trace.Trace` (folded at burst resolution), a
        :class:`~phasekit.profile.Profile` (at bin resolution) or the file of either.
    iterations
        The instances: ``(start, end)`` seconds from the start of the source (a trace's
        selected ranks summed), or ``(start, end, rank)`` (that rank's counters).
    metrics
        The metrics to fold (default all; ``ipc`` and ``mpi_share`` from their parts).
    ranks
        The ranks of a trace that ``(start, end)`` spans sum (default all).
    options
        The tuning parameters as one :class:`~phasekit.folding.FoldOptions`; or give them
        as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.folding.FoldOptions`: ``points`` (positions per
        instance, 100).

    Returns
    -------
    FoldedResult
        The folded curves (``present()``, ``summary()``, ``plot()``, ``save()``).
    """
    from phasekit.folding import fold as run_fold

    return run_fold(_source(source), iterations, metrics=metrics, ranks=ranks,
                    options=options, **keywords)


def fold_loop(trace: Trace | PathLike, structure: StructureResult | None = None,
              loop_id: int | None = None, *, metrics: Sequence[str] | None = None,
              options: FoldOptions | None = None, **keywords: Any) -> FoldedResult:
    """Fold a trace's counters over the iterations of one of its loops (Martínez Vera's
    loops: :func:`phasekit.folding.fold_loop`): per rank, each iteration from an entry of
    the loop's first MPI call to the next.

    Parameters
    ----------
    trace
        The trace or its file.
    structure
        Its structure (:func:`phasekit.structure.api.structure`, or one read from JSON);
        default: inferred now with the default parameters.
    loop_id
        The loop (default the top-level loop taking the most time).
    metrics
        The metrics to fold (default all).
    options
        The tuning parameters as one :class:`~phasekit.folding.FoldOptions`; or give them
        as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.folding.FoldOptions`: ``points``.
    """
    from phasekit.folding import FoldOptions
    from phasekit.folding import fold_loop as run_fold_loop
    from phasekit.structure import structure as run_structure

    chosen = FoldOptions.of(options, keywords, verb="fold_loop")
    read = as_trace(trace)
    found = structure if structure is not None else run_structure(read)
    return run_fold_loop(read, found, loop_id, metrics=metrics, options=chosen)


def fold_pattern(source: Trace | Profile | PathLike, result: PeriodicityResult,
                 pattern: int = 0, *, metrics: Sequence[str] | None = None,
                 options: FoldOptions | None = None, **keywords: Any) -> FoldedResult:
    """Fold a profile's (or its trace's) counters over the instances of one periodic
    pattern (Phase-TA: :func:`phasekit.folding.fold_pattern`).

    Parameters
    ----------
    source
        The profile the analysis ran on, or the trace it was binned from (folded then at
        burst resolution), or the file of either.
    result
        The periodicity analysis (``pk.periodicity(...)``, or one read from JSON).
    pattern
        The pattern, 0-based (the tables number them from 1).
    metrics
        The metrics to fold (default all, the analysis's first).
    options
        The tuning parameters as one :class:`~phasekit.folding.FoldOptions`; or give them
        as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.folding.FoldOptions`: ``points``.
    """
    from phasekit.folding import fold_pattern as run_fold_pattern

    return run_fold_pattern(_source(source), result, pattern, metrics=metrics,
                            options=options, **keywords)


def figure(result: FoldedResult, path: PathLike, metrics: Sequence[str] | None = None
           ) -> Path:
    """Write the figure of a folded result (:func:`phasekit.plot.folding.folded_figure`):
    each count's mean share over 0..100 % of the instance with its quartile band, its pace,
    and the ratios.

    Parameters
    ----------
    result
        What :func:`fold`, :func:`fold_loop` or :func:`fold_pattern` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    metrics
        The metrics to draw (default the first counts and the ratios).

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.folding import plot_folded

    return plot_folded(result, path, metrics)
