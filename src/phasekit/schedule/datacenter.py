"""The simulated data center (Salinas Hilburg 2020, section 5.3.1): :class:`DataCenter` (identical
servers, their static power split and the PUE; the power model is described in
:mod:`phasekit.schedule.simulate`), the :class:`Plan` a policy hands the simulator, the
:class:`Execution` the simulator makes of it, and a makespan no schedule beats
(:func:`lower_bound`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.errors import UsageError

__all__ = [
    "BOUND_MAX_K",
    "DISK_W",
    "FANS",
    "FAN_W",
    "IDLE_W",
    "PUE",
    "RULES",
    "DataCenter",
    "Execution",
    "Plan",
    "dual_feasible",
    "lower_bound",
]

#: Salinas Hilburg 2020 section 4.2.1 and Table 4.4: P_idle, disks, and the server's 5 fans
#: at 6000 rpm (eq. 4.17 gives one fan's power, 2.79 W; section 4.3.2: total = one fan x
#: number of fans).
IDLE_W = 50.0
DISK_W = 16.75
FANS = 5
FAN_W = FANS * (4.21e-4 * 6000 - 6.11e-8 * 6000**2 + 1.14e-11 * 6000**3)  # 13.95 W
PUE = 1.5
RULES = {"first_fit": 0, "least_energy": 1}


@dataclass(frozen=True)
class DataCenter:
    """Identical servers: ``servers`` x ``cores``, their static power split, and the PUE."""

    servers: int
    cores: int
    idle_w: float = IDLE_W
    disk_w: float = DISK_W
    fan_w: float = FAN_W
    pue: float = PUE

    def __post_init__(self) -> None:
        if int(self.servers) < 1:
            raise UsageError("the data center needs at least one server",
                             parameter="servers", value=self.servers)
        if int(self.cores) < 1:
            raise UsageError("a server needs at least one core", parameter="cores",
                             value=self.cores)
        for name in ("idle_w", "disk_w", "fan_w"):
            value = float(getattr(self, name))
            if not (math.isfinite(value) and value >= 0):
                raise UsageError("expected a finite number >= 0", parameter=name, value=value)
        if not (math.isfinite(self.pue) and self.pue >= 1):
            raise UsageError("expected a number >= 1", parameter="pue", value=self.pue)
        object.__setattr__(self, "servers", int(self.servers))
        object.__setattr__(self, "cores", int(self.cores))

    @property
    def static_w(self) -> float:
        """Power of a server running nothing: P_idle + P_disk + P_fan."""
        return float(self.idle_w + self.disk_w + self.fan_w)

    def to_dict(self) -> dict[str, Any]:
        return {"servers": self.servers, "cores": self.cores, "idle_w": self.idle_w,
                "disk_w": self.disk_w, "fan_w": self.fan_w, "pue": self.pue}


@dataclass(frozen=True, eq=False)
class Plan:
    """What a policy decided: a dispatch order, and for ``per_server`` plans the servers.

    ``kind`` is ``"list"`` (``rule`` first_fit or least_energy) or ``"per_server"``;
    ``planned_start`` the start times the policy itself computed (the MILP's tau), if any;
    ``info`` the policy's own figures (annealing statistics, MILP status and gap).
    """

    policy: str
    kind: str
    order: np.ndarray
    rule: str = "first_fit"
    server: np.ndarray | None = None
    planned_start: np.ndarray | None = None
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Execution:
    """A plan run to completion: per-task start, end, server and cores; makespan; energy.

    ``energy_it_j`` is the servers' energy (all on from 0 to the makespan), ``energy_j`` the
    data center's (x PUE). ``profile_t`` / ``profile_w`` is the data-center power, piecewise
    constant from each time to the next; ``profile_cores`` the cores in use.
    """

    start_s: np.ndarray
    end_s: np.ndarray
    server: np.ndarray
    cores: tuple[tuple[int, ...], ...]
    makespan_s: float
    energy_it_j: float
    energy_j: float
    profile_t: np.ndarray
    profile_w: np.ndarray
    profile_cores: np.ndarray


#: Largest k of the bounds in :func:`lower_bound` (our choice: k beyond 64 adds almost
#: nothing over the work bound, k <= cores anyway).
BOUND_MAX_K = 64


def dual_feasible(width: np.ndarray, cores: int, k: int) -> np.ndarray:
    """Fekete and Schepers's dual feasible function u^(k) of ``width / cores``.

    u^(k)(x) = x when (k + 1) x is an integer, else floor((k + 1) x) / k. Any tasks that fit
    on one server together (sum of widths <= cores) have sum u^(k) <= 1 (S. P. Fekete,
    J. Schepers, "New classes of fast lower bounds for bin packing problems", Math.
    Program. 91, 2001). Exact integer arithmetic on the widths.
    """
    width = np.asarray(width, dtype=np.int64)
    scaled = (k + 1) * width
    return np.where(scaled % cores == 0, width / cores, (scaled // cores) / k)


def lower_bound(threads: np.ndarray, times: np.ndarray, dc: DataCenter) -> float:
    """A makespan no non-preemptive schedule on ``dc`` beats: the largest of

    - the longest task, and the total work over all cores;
    - for each k <= min(cores, :data:`BOUND_MAX_K`), sum_i u^(k)(c_i / cores) t_i / servers
      (:func:`dual_feasible`): at any instant the tasks on one server fit, so their u^(k)
      sum to at most 1 per server; k = 1 counts the tasks wider than half a server, which
      never share one, u^(k) -> c / cores is the work bound;
    - tasks wider than cores / (k + 1) run at most k at a time per server, so at most
      M = k x servers at a time: intervals with at most M overlapping fit on M machines,
      so the classic bounds of M identical machines hold for them: for j >= 1 one machine
      runs j + 1 of the j M + 1 longest, at least the j + 1 shortest of those.

    Our choice over the thesis (which gives none; the MILP's gap needs one): all are
    valid for every schedule and cheap (n log n per k); with thread counts up to a whole
    server the work bound alone leaves the policies 10-20 % above it.
    """
    threads = np.asarray(threads, dtype=np.int64)
    times = np.asarray(times, dtype=np.float64)
    if times.size == 0:
        return 0.0
    cores, servers = dc.cores, dc.servers
    # np.sum, not np.dot: the same bound whatever order the CPU's BLAS sums in
    best = max(float(times.max()), float(np.sum(threads * times)) / (servers * cores))
    for k in range(1, min(cores, BOUND_MAX_K) + 1):
        best = max(best, float(np.sum(dual_feasible(threads, cores, k) * times)) / servers)
        wide = np.sort(times[threads * (k + 1) > cores])[::-1]
        machines = k * servers
        if wide.size <= machines:
            continue
        prefix = np.concatenate([[0.0], np.cumsum(wide)])
        j = np.arange(1, (wide.size - 1) // machines + 1)
        best = max(best, float(np.max(prefix[j * machines + 1] - prefix[j * machines - j])))
    return best

