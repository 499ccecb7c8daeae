"""``pk.periodicity``: the verb of ``phasekit analyze`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, as_names, as_profile

if TYPE_CHECKING:
    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.profile import Profile

__all__ = ["periodicity"]


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
