"""``pk.periodicity``: the verb of ``phasekit analyze`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_names, as_profile

if TYPE_CHECKING:
    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.profile import Profile
    from phasekit.trace import Trace

__all__ = ["figure", "periodicity", "with_loops"]


def periodicity(profile: Profile | PathLike, *, metrics: Sequence[str] | str | None = None,
                window: tuple[float | None, float | None] | None = None,
                loops: bool = True, **options: Any) -> PeriodicityResult:
    """Periodicities and representative patterns of a profile (``phasekit analyze``;
    Phase-TA): :func:`phasekit.periodicity.analyze`.

    Parameters
    ----------
    profile
        A :class:`~phasekit.profile.Profile` or its file; or a :class:`~phasekit.trace.Trace`
        or its file, analyzed as the profile of its counters (:meth:`Trace.profile`).
    metrics
        A name or names (default: ipc when present or computable, else the most periodic
        metric).
    window
        (start, end) seconds from the profile start; either may be None.
    **options
        The other keywords of :func:`~phasekit.periodicity.analyze` (``half_window``,
        ``band``, ``cut_ratio``, ``progress``, ...).
    loops
        For a trace: link each pattern to the loop that makes it (:func:`with_loops`).
    """
    from phasekit.io.api import is_trace
    from phasekit.periodicity.analyze import analyze
    from phasekit.trace import Trace

    trace = None
    if isinstance(profile, Trace) or (not hasattr(profile, "values") and is_trace(profile)):
        from phasekit.arguments import as_trace

        trace = as_trace(profile)  # type: ignore[arg-type]
    result = analyze(as_profile(trace if trace is not None else profile),
                     metrics=as_names(metrics), window=window, **options)
    return with_loops(result, trace) if trace is not None and loops else result


def figure(profile: Profile, result: PeriodicityResult, path: PathLike, *,
           n_instances: int = 10, seed: int = 0) -> Path:
    """Write the figure of a periodicity analysis with its profile (what ``phasekit analyze
    --plot`` writes): the profile with its periodic regions, and the patterns with some of
    their instances (:func:`phasekit.plot.plot_analysis`).

    Parameters
    ----------
    profile
        The profile ``result`` was computed on.
    result
        What :func:`periodicity` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    n_instances, seed
        How many instances of each pattern are drawn, chosen at random with this seed.

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot import plot_analysis

    return plot_analysis(profile, result, path, n_instances=n_instances, seed=seed)


def with_loops(result: PeriodicityResult, trace: Trace | PathLike) -> PeriodicityResult:
    """``result`` (an analysis of ``trace``'s binned counters) with the loop behind each of
    its patterns: the loop structure of the same trace (:func:`phasekit.structure.structure`,
    Martínez Vera) linked to the patterns by iteration time and time span
    (:func:`phasekit.structure.link.link_patterns`), kept as ``params["loops"]`` (one entry
    per pattern, ``sentence`` in plain words) and printed among its notes.

    Parameters
    ----------
    result
        ``periodicity(trace)``, or an analysis of ``trace.profile(...)``.
    trace
        The trace, or its file (Paraver, OTF2).
    """
    import dataclasses

    from phasekit.arguments import as_trace
    from phasekit.structure import structure
    from phasekit.structure.link import link_patterns

    if not result.patterns:
        return result
    read = as_trace(trace)
    links = link_patterns(result, structure(read), read)
    params = {**result.params, "loops": [link.to_dict() for link in links]}
    return dataclasses.replace(result, params=params)
