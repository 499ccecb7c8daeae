"""``phasekit watch``: phase changes of a recording in progress (the public door to
:mod:`phasekit.live`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.live.watch import Watch

__all__ = ["watch"]


def watch(source: PathLike = "-", *, method: str = "ev", threshold: float | None = None,
          smooth: int = 1, metrics: Sequence[str] | None = None, wait: float = 60.0,
          poll: float = 0.1, idle: float = 30.0, period: float | None = None) -> Watch:
    """The phase changes of a recording as they are detected (``phasekit watch``; Tsafack
    Chetsa et al.'s online detectors): iterate the :class:`~phasekit.live.watch.Watch` for
    each change, then the summary.

    Waits for ``source`` and reads its header now, and checks the options against it; the
    samples are read as the iteration asks for them. ``watch.serve("[HOST]:PORT")`` also
    exposes the current phase and the period of the last 10 minutes (Phase-TA) as
    Prometheus metrics.

    Parameters
    ----------
    source
        The recorder's output (followed through ``FILE.partial.arrows`` while it records),
        any profile file (replayed), or ``"-"`` for CSV lines on standard input.
    method, threshold, smooth, metrics
        The online detector (``ev``, ``ev-literal``), its threshold, the smoothing window
        (samples) and the metrics of its execution vectors, as for
        :func:`phasekit.phases.api.phases`.
    wait
        Seconds to wait for ``source`` to appear.
    poll
        Seconds between two looks for new samples.
    idle
        Seconds without new samples after which a recording followed live, without its
        end-of-stream marker, counts as cut short (its recorder was killed): at least twice
        its flush interval; sooner when its recorder's process is gone.
    period
        Seconds between two rows of a replayed CSV file without a time column.

    Returns
    -------
    Watch
        Yields ``{phase, start_s, detected_at_s, latency_s}`` per change (and
        ``wall_latency_s`` when followed live), then ``{phases, starts_s}``; a recording cut
        short raises InputError after that.
    """
    from phasekit.live.follow import follow
    from phasekit.live.watch import Watch

    rows = follow(source, wait, poll, period, idle)
    return Watch(rows, source, method=method, threshold=threshold, smooth=smooth,
                 metrics=metrics)
