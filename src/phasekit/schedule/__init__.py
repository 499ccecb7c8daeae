"""Energy-aware batch scheduling (Salinas Hilburg 2020, chapter 5): batches, policies, simulator."""

from __future__ import annotations

from phasekit.schedule.batch import Batch, Task, read_batch, write_batch
from phasekit.schedule.policies import (
    ltf_heuristic,
    milp_schedule,
    round_robin,
    simulated_annealing,
)
from phasekit.schedule.simulate import (
    POLICIES,
    DataCenter,
    Execution,
    Plan,
    PolicyResult,
    ScheduleResult,
    execute,
    schedule_batch,
)
from phasekit.verbmodule import make_callable

__all__ = [
    "POLICIES",
    "Batch",
    "DataCenter",
    "Execution",
    "Plan",
    "PolicyResult",
    "ScheduleResult",
    "Task",
    "execute",
    "ltf_heuristic",
    "milp_schedule",
    "read_batch",
    "round_robin",
    "schedule_batch",
    "simulated_annealing",
    "write_batch",
]


make_callable(__name__, "phasekit.schedule.api:schedule")  # pk.schedule(...) runs it
