"""``pk.periodicity``: the verb of ``phasekit analyze`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_names, as_profile

if TYPE_CHECKING:
    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.profile import Profile

__all__ = ["figure", "periodicity"]


def periodicity(profile: Profile | PathLike, *, metrics: Sequence[str] | str | None = None,
                window: tuple[float | None, float | None] | None = None,
                **options: Any) -> PeriodicityResult:
    """Periodicities and representative patterns of a profile (``phasekit analyze``;
    Phase-TA): :func:`phasekit.periodicity.analyze`.

    Parameters
    ----------
    profile
        A :class:`~phasekit.profile.Profile` or its file.
    metrics
        A name or names (default: ipc when present or computable, else the most periodic
        metric).
    window
        (start, end) seconds from the profile start; either may be None.
    **options
        The other keywords of :func:`~phasekit.periodicity.analyze` (``half_window``,
        ``band``, ``cut_ratio``, ``progress``, ...).
    """
    from phasekit.periodicity.analyze import analyze

    return analyze(as_profile(profile), metrics=as_names(metrics), window=window, **options)


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
