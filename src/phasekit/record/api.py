"""``pk.record``: the verb of ``phasekit record`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.record.recorder import RecordingSummary

__all__ = ["record"]


def record(command: Sequence[str] | None, *, output: PathLike, interval: float = 0.005,
           duration: float | None = None, metrics: Sequence[str] | None = None,
           sources: Sequence[str] | None = None, scope: str | None = None) -> RecordingSummary:
    """Record a profile of this machine while ``command`` runs (or for ``duration``
    seconds) into ``output`` (``phasekit record``): :class:`phasekit.record.Recorder`.

    Parameters
    ----------
    command
        The program and its arguments (None: record for ``duration`` seconds).
    output
        The recording's file; read it with :func:`phasekit.read`.
    interval, duration
        Seconds between samples; how long to record without a command.
    metrics
        Names to keep (default: all).
    sources
        Names of built-in sources (default: every one that can run here).
    scope
        "both" (default with a command: the node and the command's own process tree,
        ``cmd_...``), "node" or "process".

    Returns
    -------
    RecordingSummary
        The recording's summary; the command's exit code is ``summary.exit_code``.
    """
    from phasekit.record import Recorder, builtin_sources, select_sources

    chosen = select_sources(None if sources is None else list(sources), builtin_sources())
    recorder = Recorder(chosen, interval=interval, metrics=metrics, scope=scope)  # type: ignore[arg-type]
    return recorder.run(output, command=None if not command else list(command),
                        duration=duration)
