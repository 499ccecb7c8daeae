"""Recording sources: one small plug-in per kind of sensor (see ``base`` for the interface)."""

from phasekit.record.sources.base import Availability, Metric, Scope, Source
from phasekit.record.sources.command import CommandSource
from phasekit.record.sources.perf_event import PerfHardwareSource, PerfSoftwareSource
from phasekit.record.sources.procfs import ProcSource
from phasekit.record.sources.rapl import RaplSource

__all__ = [
    "Availability",
    "CommandSource",
    "Metric",
    "PerfHardwareSource",
    "PerfSoftwareSource",
    "ProcSource",
    "RaplSource",
    "Scope",
    "Source",
]
