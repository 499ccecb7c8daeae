"""Energy-aware batch scheduling (Salinas Hilburg 2020, chapter 5): batches, policies, simulator."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from phasekit.verbmodule import make_callable

#: Each name exported here and its module, imported on first use: the command line lists
#: the policies (:mod:`phasekit.schedule.registry`) without importing the planners and their
#: compiled kernels.
_EXPORTS = {
    **dict.fromkeys(("Batch", "Task", "read_batch", "write_batch"), "batch"),
    **dict.fromkeys(("ltf_heuristic", "milp_schedule", "round_robin", "simulated_annealing"),
                    "policies"),
    **dict.fromkeys(("POLICIES", "PlanRequest", "Policy", "register_policy"), "registry"),
    **dict.fromkeys(("DataCenter", "Execution", "Plan", "PolicyResult", "ScheduleOptions",
                     "ScheduleResult", "execute", "schedule_batch"), "simulate"),
}

__all__ = [
    "POLICIES",
    "Batch",
    "DataCenter",
    "Execution",
    "Plan",
    "PlanRequest",
    "Policy",
    "PolicyResult",
    "ScheduleOptions",
    "ScheduleResult",
    "Task",
    "execute",
    "ltf_heuristic",
    "milp_schedule",
    "read_batch",
    "register_policy",
    "round_robin",
    "schedule_batch",
    "simulated_annealing",
    "write_batch",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


make_callable(__name__, "phasekit.schedule.api:schedule")  # pk.schedule(...) runs it
