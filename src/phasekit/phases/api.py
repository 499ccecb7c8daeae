"""``pk.phases``: the verb of ``phasekit phases`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_names, as_profile

if TYPE_CHECKING:
    from phasekit.phases.analyze import PhaseOptions, PhaseResult
    from phasekit.profile import Profile

__all__ = ["detectors", "figure", "phases"]


def phases(profile: Profile | PathLike, *, metrics: Sequence[str] | str | None = None,
           sensors: Sequence[str] | str | None = None, options: PhaseOptions | None = None,
           progress: Callable[[str, float], None] | None = None,
           **keywords: Any) -> PhaseResult:
    """Phase changes and recurring phases of a profile (``phasekit phases``; Tsafack Chetsa
    et al.): :func:`phasekit.phases.analyze.phases`.

    Parameters
    ----------
    profile
        A :class:`~phasekit.profile.Profile` or its file.
    metrics
        The metrics forming the execution vectors (the CLI's ``--metric``); ``sensors`` is
        its former name.
    options
        The tuning parameters as one :class:`~phasekit.phases.analyze.PhaseOptions`; or
        give them as keywords, not both.
    **keywords
        The fields of :class:`~phasekit.phases.analyze.PhaseOptions`: ``method`` (the
        detector, default "auto"), ``threshold`` (default: the detector's own), ``smooth``
        (the sliding-average window in vectors), ``id_threshold``, ``detector`` (the
        detector's own options). Checked before the profile is read.
    progress
        Told ``(stage, fraction)`` as the analysis goes (the command line's progress).
    """
    from phasekit.phases.analyze import PhaseOptions
    from phasekit.phases.analyze import phases as run_phases

    chosen = PhaseOptions.of(options, keywords, verb="phases")
    return run_phases(as_profile(profile), metrics=as_names(metrics), sensors=as_names(sensors),
                      options=chosen, progress=progress)


def detectors(*, online: bool = False) -> list[str]:
    """The names of the registered phase detectors, the values of ``method``
    (:data:`phasekit.phases.DETECTORS`, in their order of registration).

    Parameters
    ----------
    online
        Only the detectors that can run on a stream (``phasekit watch``).
    """
    from phasekit.phases import DETECTORS

    return [name for name, found in DETECTORS.items() if found.online or not online]


def figure(profile: Profile, result: PhaseResult, path: PathLike) -> Path:
    """Write the figure of a phase analysis with its profile (what ``phasekit phases --plot``
    writes): the phases, the sensors, the distance and its threshold, the identified phases
    (:func:`phasekit.plot.phases.plot_phases`).

    Parameters
    ----------
    profile
        The profile ``result`` was computed on.
    result
        What :func:`phases` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.phases import plot_phases

    return plot_phases(profile, result, path)
