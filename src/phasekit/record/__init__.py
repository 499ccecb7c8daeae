"""Recording profiles on this machine: sources (perf_event, /proc, RAPL, commands) and the
recorder that samples them into a crash-safe profile file.

:func:`builtin_sources` gives one instance of every built-in source, in the order their
metrics appear in a recording; :func:`probe_all` says which of them can run here and why not;
:func:`command_sources` gives, for each, the source measuring a recorded command's own
process tree (``cmd_...`` metrics), when it has one.
"""

from __future__ import annotations

from collections.abc import Sequence

from phasekit.errors import UsageError
from phasekit.record.recorder import (
    MIN_INTERVAL,
    Recorder,
    RecordingFailed,
    RecordingSummary,
    RecordScope,
    partial_path,
)
from phasekit.record.sources.base import Availability, Metric, Source
from phasekit.verbmodule import make_callable

__all__ = [
    "MIN_INTERVAL",
    "Availability",
    "Metric",
    "RecordScope",
    "Recorder",
    "RecordingFailed",
    "RecordingSummary",
    "Source",
    "builtin_sources",
    "command_sources",
    "partial_path",
    "probe_all",
    "select_sources",
]

def builtin_sources() -> list[Source]:
    """One instance of every built-in source (opening nothing yet)."""
    from phasekit.record.sources.perf_event import PerfHardwareSource, PerfSoftwareSource
    from phasekit.record.sources.procfs import ProcSource
    from phasekit.record.sources.rapl import RaplSource

    return [PerfHardwareSource(), PerfSoftwareSource(), ProcSource(), RaplSource()]


def command_sources(sources: Sequence[Source], interval: float = 0.01
                    ) -> dict[str, Source | None]:
    """For each source's name, the source that measures a recorded command's process tree
    in its stead (its ``for_command``; None for a source that measures the node only)."""
    out: dict[str, Source | None] = {}
    for source in sources:
        make = getattr(source, "for_command", None)
        out[source.name] = make(interval) if make is not None else None
    return out


def probe_all(sources: Sequence[Source]) -> list[Availability]:
    """What each source can measure here; a source whose probe fails says why."""
    results = []
    for source in sources:
        try:
            results.append(source.probe())
        except Exception as exc:  # a probe must explain, never crash the listing
            results.append(Availability(source.name, False, f"probe failed: {exc}"))
    return results


def select_sources(names: Sequence[str] | None, sources: Sequence[Source]) -> list[Source]:
    """The sources named in ``names`` (all available ones when None), in their order.

    A named source that cannot run here is a UsageError with its reason; unnamed sources
    that cannot run are left out silently (``phasekit sources`` lists why).
    """
    by_name = {s.name: s for s in sources}
    if names is None:
        return [s for s, a in zip(sources, probe_all(sources), strict=True) if a.available]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise UsageError(f"unknown source {', '.join(unknown)}; expected some of "
                         + ", ".join(by_name), parameter="sources")
    chosen = [by_name[n] for n in names]
    for source, availability in zip(chosen, probe_all(chosen), strict=True):
        if not availability.available:
            raise UsageError(f"{source.name} cannot run here: {availability.reason}",
                             parameter="sources")
    return chosen


make_callable(__name__, "phasekit.record.api:record")  # pk.record(...) runs it
