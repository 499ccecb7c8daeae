"""Discrete-event data-center simulator (seed 004, section 5.3.1) and policy comparison.

The data center is ``servers`` identical servers of ``cores`` cores each (the thesis: the
Decathlete, 2 x 6 SandyBridge-EP cores, so 12). A task runs on one server, on as many cores
as it has threads, without preemption. Events are task completions; at each one the
dispatcher of the policy's plan starts whatever it can.

Server power (our reading of the thesis's eq. 4.15 with its simulation settings, section
5.3.1.1): every server is on from 0 to the makespan and draws

    P_server = P_idle + P_disk + P_fan + sum of the dynamic power of its running tasks

with P_idle = 50.0 W (section 4.2.1: "power consumption when no workload is running ...
50.0 W"), P_disk = 16.75 W (section 4.2.1, constant), P_fan = 5 x 2.79 W = 13.95 W (eq. 4.17
with Table 4.4's beta at the simulations' fixed 6000 rpm is the power of one fan; the server
has 5 fans and "the total fan power can be obtained by multiplying the measured fan power by
the number of fans", section 4.3.2) and a task's dynamic power the ``power_w`` of the batch
(its mean CPU + memory dynamic power, what the signature estimates). The
temperature-dependent leakage (eq. 4.16) is left out: it needs a thermal model the thesis
does not give, and is a few watts (Table 4.4's alpha gives 1.5-5 W at 50-70 degC). The data
center draws P_DC = PUE x P_IT with PUE = 1.5 (eq. 5.2); its energy over the batch is

    E_DC = PUE (servers x P_static x makespan + sum_i power_i time_i),

so with identical servers a schedule saves energy by finishing sooner (the thesis: "the
overall energy savings ... comes from the makespan optimization"). Savings are
(E_RR - E) / E_RR x 100 (eq. 5.3).

Dispatchers (the plan of a policy, :class:`Plan`):

- ``list`` with rule ``first_fit`` (round robin, annealing; Algorithm 5): tasks wait in a
  queue in the plan's order; whenever cores free up the queue is scanned in order and every
  task that fits starts on the first server (lowest index) with enough free cores. A task
  that fits nowhere waits; later tasks that fit may start before it (as Algorithm 5's scan
  does).
- ``list`` with rule ``least_energy`` (the heuristic; Algorithm 6): the same queue, but a task
  goes to the server whose energy grows least, estimated as (P_static + the server's current
  dynamic power + the task's power) x the task's time with the planning values: the server
  with the least running dynamic power, ties to the lowest index.
- ``per_server`` (the MILP): each task has a server and the plan's start order; each server
  starts its tasks in that order as soon as enough of its cores are free. With the planning
  times this never starts a task later than planned.

The annealing judges an order by the first-fit makespan alone, with kernels of their own
(:func:`_ff_makespan`, and :func:`_ff_trace` / :func:`_ff_resume`, which re-simulate a
swapped order only from the first pick the swap can change): the same dispatch, checked
against a plain-Python scheduler in the tests.

Oracle vs estimated (section 5.1): a policy plans with the times and powers it is given
(the truth, or estimates with the signature's errors), and the plan is then executed on the
true times and powers: completions happen when the tasks really end.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from phasekit.errors import InputError, UsageError
from phasekit.results import check_version, plain
from phasekit.schedule.batch import Batch

__all__ = [
    "BOUND_MAX_K",
    "RESULT_VERSION",
    "DataCenter",
    "Execution",
    "Plan",
    "PolicyResult",
    "ScheduleResult",
    "dual_feasible",
    "execute",
    "list_schedule",
    "lower_bound",
    "plan_schedule",
    "schedule_batch",
]

RESULT_VERSION = 1
#: Seed 004 section 4.2.1 and Table 4.4: P_idle, disks, and the server's 5 fans at 6000 rpm
#: (eq. 4.17 gives one fan's power, 2.79 W; section 4.3.2: total = one fan x number of fans).
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
            raise UsageError(f"the data center needs at least one server, not {self.servers}")
        if int(self.cores) < 1:
            raise UsageError(f"a server needs at least one core, not {self.cores}")
        for name in ("idle_w", "disk_w", "fan_w"):
            value = float(getattr(self, name))
            if not (math.isfinite(value) and value >= 0):
                raise UsageError(f"{name} must be a finite number >= 0, not {value}")
        if not (math.isfinite(self.pue) and self.pue >= 1):
            raise UsageError(f"the PUE must be >= 1, not {self.pue}")
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


# --- kernels ---------------------------------------------------------------------------------
@njit(cache=True)
def _heap_push(keys: np.ndarray, vals: np.ndarray, size: int, key: float, val: int) -> int:
    """Add (key, val) to the binary min-heap of ``size`` entries; returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent] <= key:
            break
        keys[i] = keys[parent]
        vals[i] = vals[parent]
        i = parent
    keys[i] = key
    vals[i] = val
    return size + 1


@njit(cache=True)
def _heap_pop(keys: np.ndarray, vals: np.ndarray, size: int) -> int:
    """Remove the root (read keys[0], vals[0] before calling); returns the new size."""
    size -= 1
    key = keys[size]
    val = vals[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if key <= keys[child]:
            break
        keys[i] = keys[child]
        vals[i] = vals[child]
        i = child
    keys[i] = key
    vals[i] = val
    return size


@njit(cache=True)
def _tree_set(tree: np.ndarray, leaves: int, s: int, value: int) -> None:
    i = leaves + s
    tree[i] = value
    i //= 2
    while i >= 1:
        a = tree[2 * i]
        b = tree[2 * i + 1]
        tree[i] = a if a >= b else b
        i //= 2


@njit(cache=True)
def _tree_first(tree: np.ndarray, leaves: int, need: int) -> int:
    """Lowest server index with at least ``need`` free cores (-1 if none)."""
    if tree[1] < need:
        return -1
    i = 1
    while i < leaves:
        i = 2 * i if tree[2 * i] >= need else 2 * i + 1
    return i - leaves


@njit(cache=True)
def _next_width(position: np.ndarray, bucket: np.ndarray, head: np.ndarray,
                stop: np.ndarray, maxfree: int) -> tuple[int, int]:
    """The next task to start: the earliest in the order among the heads of the buckets of
    widths 1..``maxfree`` (see :func:`_ff_layout`); (its width, its queue position), width
    -1 when none waits."""
    best_w = -1
    best_pos = position.size
    for w in range(1, maxfree + 1):
        if head[w] < stop[w]:
            p = position[bucket[head[w]]]
            if p < best_pos:
                best_pos = p
                best_w = w
    return best_w, best_pos


@njit(cache=True)
def _list_schedule(order: np.ndarray, threads: np.ndarray, times: np.ndarray,
                   power: np.ndarray, n_servers: int, cores: int, rule: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Start time and server of every task under the list dispatcher (module docstring).

    The queue is kept as one FIFO bucket per thread count: the first task in the order
    that fits the largest free block is the earliest among the heads of the buckets of the
    fitting widths, so a start costs O(cores + log servers) (free cores per server in a
    max segment tree), not a scan of the queue and of the servers.
    """
    n = order.size
    start = np.full(n, -1.0)
    server = np.full(n, -1, np.int64)
    position = np.empty(n, np.int64)
    bucket = np.empty(n, np.int64)
    head = np.zeros(cores + 2, np.int64)
    stop = np.zeros(cores + 2, np.int64)
    _ff_layout(order, threads, cores, position, bucket, head, stop)
    leaves = 1
    while leaves < n_servers:
        leaves *= 2
    tree = np.full(2 * leaves, -1, np.int64)
    for s in range(n_servers):
        _tree_set(tree, leaves, s, cores)
    free = np.full(n_servers, cores, np.int64)
    load = np.zeros(n_servers)
    heap_t = np.empty(n)
    heap_i = np.empty(n, np.int64)
    size = 0
    now = 0.0
    while True:
        while tree[1] > 0:
            best_b, _ = _next_width(position, bucket, head, stop, tree[1])
            if best_b < 0:
                break
            task = bucket[head[best_b]]
            head[best_b] += 1
            if rule == 0:
                chosen = _tree_first(tree, leaves, best_b)
            else:
                chosen = -1
                least = np.inf
                for s in range(n_servers):
                    if free[s] >= best_b and load[s] < least:
                        least = load[s]
                        chosen = s
            start[task] = now
            server[task] = chosen
            free[chosen] -= best_b
            _tree_set(tree, leaves, chosen, free[chosen])
            load[chosen] += power[task]
            size = _heap_push(heap_t, heap_i, size, now + times[task], task)
        if size == 0:
            break
        now = heap_t[0]
        while size > 0 and heap_t[0] == now:
            task = heap_i[0]
            size = _heap_pop(heap_t, heap_i, size)
            s = server[task]
            free[s] += threads[task]
            _tree_set(tree, leaves, s, free[s])
            load[s] -= power[task]
            if free[s] == cores:
                load[s] = 0.0
    return start, server


@njit(cache=True)
def _list_makespan(order: np.ndarray, threads: np.ndarray, times: np.ndarray,
                   power: np.ndarray, n_servers: int, cores: int, rule: int) -> float:
    start, _ = _list_schedule(order, threads, times, power, n_servers, cores, rule)
    best = 0.0
    for i in range(start.size):
        if start[i] + times[i] > best:
            best = start[i] + times[i]
    return best


@njit(cache=True)
def _ff_layout(order: np.ndarray, threads: np.ndarray, cores: int, position: np.ndarray,
               bucket: np.ndarray, head: np.ndarray, stop: np.ndarray) -> None:
    """The queue of ``order`` as one FIFO bucket per thread count (see _list_schedule):
    ``position`` of each task, ``bucket`` the tasks grouped by width in order,
    ``head[w]:stop[w]`` the slice of width ``w``."""
    n = order.size
    head[:] = 0
    for k in range(n):
        position[order[k]] = k
        head[threads[order[k]] + 1] += 1
    for w in range(1, cores + 2):
        head[w] += head[w - 1]
    stop[:cores + 1] = head[1:cores + 2]
    for k in range(n):
        task = order[k]
        bucket[head[threads[task]]] = task
        head[threads[task]] += 1
    for w in range(cores, 0, -1):
        head[w] = head[w - 1]
    head[0] = 0


@njit(cache=True)
def _ff_run(position: np.ndarray, bucket: np.ndarray, head: np.ndarray, stop: np.ndarray,
            threads: np.ndarray, times: np.ndarray, n_servers: int, cores: int,
            free: np.ndarray, server: np.ndarray, heap_t: np.ndarray, heap_i: np.ndarray,
            size: int, now: float, idle: float, span: float, limit: float, work: float,
            record: bool, trace: tuple[np.ndarray, ...], rounds: tuple[np.ndarray, ...],
            round0: int, pick0: int) -> tuple[float, int, int]:
    """The first-fit list dispatcher from a given state (Algorithm 5 without its 1 s steps).

    State: the queue (``_ff_layout``, ``head`` advanced past started tasks), free cores
    per server, the server of each started task, the heap of running tasks' ends, the
    time, the idle core time and the latest end so far. Stops with +inf as soon as the
    makespan is sure to be >= ``limit`` (a task ending there, or (``work`` + idle) / all
    cores there). With ``record``, writes each pick (``trace``: queue position, largest
    free block before it, task, round, start, server) and the time and idle time at the
    start of each round (``rounds``), which :func:`_ff_resume` restarts from. Returns the
    makespan, picks and rounds recorded.
    """
    tr_pos, tr_free, tr_task, tr_round, tr_start, tr_server = trace
    ck_now, ck_idle = rounds
    total = n_servers * cores
    leaves = 1
    while leaves < n_servers:
        leaves *= 2
    tree = np.full(2 * leaves, -1, np.int64)
    free_total = 0
    for s in range(n_servers):
        tree[leaves + s] = free[s]
        free_total += free[s]
    for i in range(leaves - 1, 0, -1):
        tree[i] = max(tree[2 * i], tree[2 * i + 1])
    r = round0
    j = pick0
    while True:
        if record:
            ck_now[r] = now
            ck_idle[r] = idle
        while tree[1] > 0:
            maxfree = tree[1]
            best_b, best_pos = _next_width(position, bucket, head, stop, maxfree)
            if best_b < 0:
                break
            task = bucket[head[best_b]]
            head[best_b] += 1
            end = now + times[task]
            if end >= limit:
                return np.inf, j, r
            if end > span:
                span = end
            chosen = _tree_first(tree, leaves, best_b)
            if record:
                tr_pos[j] = best_pos
                tr_free[j] = maxfree
                tr_task[j] = task
                tr_round[j] = r
                tr_start[j] = now
                tr_server[j] = chosen
            j += 1
            server[task] = chosen
            free[chosen] -= best_b
            free_total -= best_b
            _tree_set(tree, leaves, chosen, free[chosen])
            size = _heap_push(heap_t, heap_i, size, end, task)
        if size == 0:
            break
        following = heap_t[0]
        idle += free_total * (following - now)
        if (work + idle) / total >= limit * (1.0 + 1e-9):  # margin for rounding
            return np.inf, j, r
        now = following
        r += 1
        while size > 0 and heap_t[0] == now:
            task = heap_i[0]
            size = _heap_pop(heap_t, heap_i, size)
            s = server[task]
            free[s] += threads[task]
            free_total += threads[task]
            _tree_set(tree, leaves, s, free[s])
    return span, j, r + 1


def _ff_buffers(n: int, trace: bool = False
                ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Trace and round arrays for :func:`_ff_run` (length 0 unless ``trace``)."""
    k = n + 1 if trace else 0
    return ((np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64),
             np.zeros(k, np.int64), np.zeros(k), np.zeros(k, np.int64)),
            (np.zeros(k), np.zeros(k)))


@njit(cache=True)
def _ff_from_start(order: np.ndarray, threads: np.ndarray, times: np.ndarray,
                   n_servers: int, cores: int, limit: float, work: float, record: bool,
                   trace: tuple[np.ndarray, ...], rounds: tuple[np.ndarray, ...]
                   ) -> tuple[float, int, int]:
    n = order.size
    position = np.empty(n, np.int64)
    bucket = np.empty(n, np.int64)
    head = np.zeros(cores + 2, np.int64)
    stop = np.zeros(cores + 2, np.int64)
    _ff_layout(order, threads, cores, position, bucket, head, stop)
    return _ff_run(position, bucket, head, stop, threads, times, n_servers, cores,
                   np.full(n_servers, cores, np.int64), np.empty(n, np.int64), np.empty(n),
                   np.empty(n, np.int64), 0, 0.0, 0.0, 0.0, limit, work, record, trace,
                   rounds, 0, 0)


@njit(cache=True)
def _ff_makespan(order: np.ndarray, threads: np.ndarray, times: np.ndarray, n_servers: int,
                 cores: int, limit: float, work: float) -> float:
    """Makespan of the first-fit list schedule, or +inf as soon as it is sure to be >= limit.

    The annealing's evaluation (Algorithm 5): the dispatch of :func:`_list_schedule` with
    ``rule`` first_fit, without the per-task outputs; ``work`` = sum of threads x times.
    With ``limit`` = inf it is the exact makespan.
    """
    empty = np.zeros(0, np.int64)
    trace = (empty, empty, empty, empty, np.zeros(0), empty)
    rounds = (np.zeros(0), np.zeros(0))
    return _ff_from_start(order, threads, times, n_servers, cores, limit, work, False, trace,
                          rounds)[0]


@njit(cache=True)
def _ff_trace(order: np.ndarray, threads: np.ndarray, times: np.ndarray, n_servers: int,
              cores: int, work: float, trace: tuple[np.ndarray, ...],
              rounds: tuple[np.ndarray, ...]) -> float:
    """The exact first-fit makespan of ``order``, recording the run for _ff_resume."""
    return _ff_from_start(order, threads, times, n_servers, cores, np.inf, work, True, trace,
                          rounds)[0]


@njit(cache=True)
def _ff_resume(cand: np.ndarray, r1: int, r2: int, threads: np.ndarray, times: np.ndarray,
               n_servers: int, cores: int, limit: float, work: float,
               trace: tuple[np.ndarray, ...], rounds: tuple[np.ndarray, ...]) -> float:
    """:func:`_ff_makespan` of ``cand``, the traced order with positions r1 < r2 swapped,
    simulated only from the first pick the swap can change.

    Until then both runs pick the same tasks: at each pick the traced run took the
    earliest waiting task that fitted, and the swap changes that only where it took a task
    at position >= r1 while the task moved to r1 fitted too, or took the task moved away
    from r1 (both were waiting; the other picks are unchanged, as are the rounds where
    nothing fitted). The state there follows from the trace: time and idle time of the
    round (recorded), free cores, running tasks, queue heads and latest end from the picks
    before it.
    """
    tr_pos, tr_free, tr_task, tr_round, tr_start, tr_server = trace
    ck_now, ck_idle = rounds
    n = cand.size
    moved_up = cand[r1]       # now at r1, was at r2
    moved_down = cand[r2]     # was at r1
    need = threads[moved_up]
    j = 0
    while j < n and not (tr_pos[j] >= r1 and (need <= tr_free[j]
                                              or tr_task[j] == moved_down)):
        j += 1
    if j == n:  # cannot happen (every task is picked once); safe: recompute
        return _ff_makespan(cand, threads, times, n_servers, cores, limit, work)
    r = tr_round[j]
    now = ck_now[r]
    position = np.empty(n, np.int64)
    bucket = np.empty(n, np.int64)
    head = np.zeros(cores + 2, np.int64)
    stop = np.zeros(cores + 2, np.int64)
    _ff_layout(cand, threads, cores, position, bucket, head, stop)
    free = np.full(n_servers, cores, np.int64)
    server = np.empty(n, np.int64)
    heap_t = np.empty(n)
    heap_i = np.empty(n, np.int64)
    size = 0
    span = 0.0
    for q in range(j):  # the picks before j: started tasks are a prefix of each bucket
        task = tr_task[q]
        head[threads[task]] += 1
        end = tr_start[q] + times[task]
        if end > span:
            span = end
        if end > now:
            s = tr_server[q]
            server[task] = s
            free[s] -= threads[task]
            size = _heap_push(heap_t, heap_i, size, end, task)
    if span >= limit:
        return np.inf
    return _ff_run(position, bucket, head, stop, threads, times, n_servers, cores, free,
                   server, heap_t, heap_i, size, now, ck_idle[r], span, limit, work,
                   False, trace, rounds, r, j)[0]


@njit(cache=True)
def _plan_schedule(order: np.ndarray, server: np.ndarray, threads: np.ndarray,
                   times: np.ndarray, n_servers: int, cores: int) -> np.ndarray:
    """Start times when each server starts its tasks in ``order`` as soon as they fit."""
    n = order.size
    start = np.full(n, -1.0)
    counts = np.zeros(n_servers + 1, np.int64)
    for k in range(n):
        counts[server[order[k]] + 1] += 1
    for s in range(1, n_servers + 1):
        counts[s] += counts[s - 1]
    head = counts[:n_servers].copy()
    stop = counts[1:].copy()
    queue = np.empty(n, np.int64)
    fill = head.copy()
    for k in range(n):
        task = order[k]
        queue[fill[server[task]]] = task
        fill[server[task]] += 1
    free = np.full(n_servers, cores, np.int64)
    heap_t = np.empty(n)
    heap_i = np.empty(n, np.int64)
    size = 0
    now = 0.0
    while True:
        for s in range(n_servers):
            while head[s] < stop[s] and threads[queue[head[s]]] <= free[s]:
                task = queue[head[s]]
                head[s] += 1
                start[task] = now
                free[s] -= threads[task]
                size = _heap_push(heap_t, heap_i, size, now + times[task], task)
        if size == 0:
            break
        now = heap_t[0]
        while size > 0 and heap_t[0] == now:
            task = heap_i[0]
            size = _heap_pop(heap_t, heap_i, size)
            free[server[task]] += threads[task]
    return start


def _as_arrays(threads: Sequence[int] | np.ndarray, times: Sequence[float] | np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    return (np.ascontiguousarray(threads, dtype=np.int64),
            np.ascontiguousarray(times, dtype=np.float64))


def list_schedule(order: Sequence[int] | np.ndarray, threads: Sequence[int] | np.ndarray,
                  times: Sequence[float] | np.ndarray, dc: DataCenter, *,
                  rule: str = "first_fit",
                  power: Sequence[float] | np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Start times and servers of the list dispatcher (see the module docstring)."""
    thr, t = _as_arrays(threads, times)
    p = np.zeros(t.size) if power is None else np.ascontiguousarray(power, dtype=np.float64)
    if rule not in RULES:
        raise UsageError(f"unknown dispatch rule {rule!r}; expected one of {sorted(RULES)}")
    if thr.size and thr.max() > dc.cores:
        raise UsageError(f"a task needs {int(thr.max())} cores; a server has {dc.cores}")
    return _list_schedule(np.ascontiguousarray(order, dtype=np.int64), thr, t, p, dc.servers,
                          dc.cores, RULES[rule])


def plan_schedule(order: Sequence[int] | np.ndarray, server: Sequence[int] | np.ndarray,
                  threads: Sequence[int] | np.ndarray, times: Sequence[float] | np.ndarray,
                  dc: DataCenter) -> np.ndarray:
    """Start times of a per-server plan executed as soon as cores are free, in its order."""
    thr, t = _as_arrays(threads, times)
    srv = np.ascontiguousarray(server, dtype=np.int64)
    if srv.size and (srv.min() < 0 or srv.max() >= dc.servers):
        raise UsageError(f"plan uses a server outside 0..{dc.servers - 1}")
    return _plan_schedule(np.ascontiguousarray(order, dtype=np.int64), srv, thr, t,
                          dc.servers, dc.cores)


def execute_arrays(plan: Plan, threads: np.ndarray, times: np.ndarray, power: np.ndarray,
                   dc: DataCenter) -> tuple[np.ndarray, np.ndarray]:
    """Start times and servers of ``plan`` run with these times (``power``: what the
    least-energy rule decides with)."""
    if plan.kind == "list":
        return list_schedule(plan.order, threads, times, dc, rule=plan.rule, power=power)
    if plan.kind == "per_server":
        if plan.server is None:
            raise UsageError("a per_server plan needs its servers")
        server = np.asarray(plan.server, dtype=np.int64)
        return plan_schedule(plan.order, server, threads, times, dc), server
    raise UsageError(f"unknown plan kind {plan.kind!r}")


def _assign_cores(start: np.ndarray, end: np.ndarray, server: np.ndarray,
                  threads: np.ndarray, dc: DataCenter) -> tuple[tuple[int, ...], ...]:
    """The core numbers of each task: the lowest free ones of its server when it starts."""
    events = sorted([(float(end[i]), 0, i) for i in range(start.size)]
                    + [(float(start[i]), 1, i) for i in range(start.size)])
    free = [list(range(dc.cores)) for _ in range(dc.servers)]
    cores: list[tuple[int, ...]] = [()] * start.size
    for _, kind, i in events:
        s = int(server[i])
        if kind == 0:
            for c in cores[i]:
                heapq.heappush(free[s], c)
        else:
            got = tuple(heapq.heappop(free[s]) for _ in range(int(threads[i])))
            cores[i] = got
    return tuple(cores)


# --- execution -------------------------------------------------------------------------------
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


def _profile(start: np.ndarray, end: np.ndarray, power: np.ndarray, threads: np.ndarray,
             dc: DataCenter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DC power and used cores as step functions over the event times."""
    times = np.unique(np.concatenate([[0.0], start, end]))
    dp = np.zeros(times.size)
    dc_ = np.zeros(times.size)
    np.add.at(dp, np.searchsorted(times, start), power)
    np.add.at(dp, np.searchsorted(times, end), -power)
    np.add.at(dc_, np.searchsorted(times, start), threads)
    np.add.at(dc_, np.searchsorted(times, end), -threads)
    p_it = dc.servers * dc.static_w + np.cumsum(dp)
    p_it[-1] = 0.0  # after the makespan: off
    used = np.rint(np.cumsum(dc_)).astype(np.int64)
    return times, dc.pue * np.maximum(p_it, 0.0), used


def execute(plan: Plan, batch: Batch, dc: DataCenter, *,
            time_s: np.ndarray | None = None, power_w: np.ndarray | None = None,
            plan_power_w: np.ndarray | None = None, cores: bool = True) -> Execution:
    """Run ``plan`` on ``batch`` in ``dc`` with the given (default: the batch's true) times
    and powers; ``plan_power_w`` are the powers the least-energy rule decides with (default
    ``power_w``)."""
    times = np.ascontiguousarray(batch.time_s if time_s is None else time_s, dtype=np.float64)
    power = np.ascontiguousarray(batch.power_w if power_w is None else power_w,
                                 dtype=np.float64)
    decide = power if plan_power_w is None else np.ascontiguousarray(plan_power_w, np.float64)
    threads = np.ascontiguousarray(batch.threads, dtype=np.int64)
    start, server = execute_arrays(plan, threads, times, decide, dc)
    end = start + times
    makespan = float(end.max()) if end.size else 0.0
    energy_it = dc.servers * dc.static_w * makespan + float(np.dot(power, times))
    t, w, used = _profile(start, end, power, threads, dc)
    core_lists = _assign_cores(start, end, server, threads, dc) if cores else ()
    return Execution(start_s=start, end_s=end, server=server, cores=core_lists,
                     makespan_s=makespan, energy_it_j=energy_it, energy_j=dc.pue * energy_it,
                     profile_t=t, profile_w=w, profile_cores=used)


# --- comparison of policies ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PolicyResult:
    """One policy on one batch: planned on ``planned_with`` times, executed on the truth."""

    policy: str
    makespan_s: float
    energy_j: float
    energy_it_j: float
    saving_vs_rr: float
    planned_makespan_s: float
    runtime_s: float
    info: Mapping[str, Any]
    order: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    server: np.ndarray
    cores: tuple[tuple[int, ...], ...]
    profile_t: np.ndarray
    profile_w: np.ndarray
    profile_cores: np.ndarray

    def summary(self) -> dict[str, Any]:
        """The JSON contract's fields and the policy's own figures (no per-task data)."""
        return plain({"policy": self.policy, "makespan_s": self.makespan_s,
                      "energy_j": self.energy_j, "saving_vs_rr": self.saving_vs_rr,
                      "energy_it_j": self.energy_it_j,
                      "planned_makespan_s": self.planned_makespan_s,
                      "runtime_s": self.runtime_s, "info": dict(self.info)})

    def to_dict(self) -> dict[str, Any]:
        return plain({**self.summary(), "order": self.order, "start_s": self.start_s, "end_s": self.end_s,
                      "server": self.server, "cores": [list(c) for c in self.cores],
                      "profile": {"t_s": self.profile_t, "power_w": self.profile_w,
                                  "cores": self.profile_cores}})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PolicyResult:
        prof = d["profile"]
        return cls(policy=str(d["policy"]), makespan_s=float(d["makespan_s"]),
                   energy_j=float(d["energy_j"]), energy_it_j=float(d["energy_it_j"]),
                   saving_vs_rr=float(d["saving_vs_rr"]),
                   planned_makespan_s=float(d["planned_makespan_s"]),
                   runtime_s=float(d["runtime_s"]), info=dict(d.get("info") or {}),
                   order=np.asarray(d["order"], dtype=np.int64),
                   start_s=np.asarray(d["start_s"], dtype=float),
                   end_s=np.asarray(d["end_s"], dtype=float),
                   server=np.asarray(d["server"], dtype=np.int64),
                   cores=tuple(tuple(int(c) for c in row) for row in d["cores"]),
                   profile_t=np.asarray(prof["t_s"], dtype=float),
                   profile_w=np.asarray(prof["power_w"], dtype=float),
                   profile_cores=np.asarray(prof["cores"], dtype=np.int64))


@dataclass(frozen=True, eq=False)
class ScheduleResult:
    """Policies compared on one batch in one data center (seed 004, Table 5.1).

    ``planned_with`` is ``"oracle"`` or the estimated columns the policies planned with;
    every policy is executed on the true times and powers. ``baseline`` is round robin
    (arrival order, first fit), the reference of ``saving_vs_rr``; ``notes`` say what was
    skipped or approximated.
    """

    datacenter: DataCenter
    n_tasks: int
    planned_with: str
    policies: tuple[PolicyResult, ...]
    baseline: PolicyResult
    lower_bound_s: float
    notes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def get(self, policy: str) -> PolicyResult:
        for p in self.policies:
            if p.policy == policy:
                return p
        if policy == "rr":
            return self.baseline
        raise KeyError(policy)

    def summaries(self) -> list[dict[str, Any]]:
        return [{**p.summary(), "planned_with": self.planned_with, "n_tasks": self.n_tasks,
                 "servers": self.datacenter.servers, "cores": self.datacenter.cores,
                 "pue": self.datacenter.pue, "lower_bound_s": self.lower_bound_s}
                for p in self.policies]

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "schedule", "version": RESULT_VERSION,
                      "datacenter": self.datacenter.to_dict(), "n_tasks": self.n_tasks,
                      "planned_with": self.planned_with, "lower_bound_s": self.lower_bound_s,
                      "notes": list(self.notes), "names": list(self.names),
                      "baseline": self.baseline.to_dict(),
                      "policies": [p.to_dict() for p in self.policies]})

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> ScheduleResult:
        check_version(data, "schedule", RESULT_VERSION, source)
        try:
            return cls(datacenter=DataCenter(**data["datacenter"]),
                       n_tasks=int(data["n_tasks"]), planned_with=str(data["planned_with"]),
                       policies=tuple(PolicyResult.from_dict(p) for p in data["policies"]),
                       baseline=PolicyResult.from_dict(data["baseline"]),
                       lower_bound_s=float(data["lower_bound_s"]),
                       notes=tuple(data.get("notes") or ()),
                       names=tuple(data.get("names") or ()))
        except (KeyError, TypeError, ValueError, UsageError) as exc:
            raise InputError(f"malformed schedule result: {exc}", path=source) from None


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
    best = max(float(times.max()), float(np.dot(threads, times)) / (servers * cores))
    for k in range(1, min(cores, BOUND_MAX_K) + 1):
        best = max(best, float(np.dot(dual_feasible(threads, cores, k), times)) / servers)
        wide = np.sort(times[threads * (k + 1) > cores])[::-1]
        machines = k * servers
        if wide.size <= machines:
            continue
        prefix = np.concatenate([[0.0], np.cumsum(wide)])
        j = np.arange(1, (wide.size - 1) // machines + 1)
        best = max(best, float(np.max(prefix[j * machines + 1] - prefix[j * machines - j])))
    return best


POLICIES = ("rr", "heuristic", "sa", "milp")
#: The largest fraction :func:`schedule_batch` reports before it returns.
PROGRESS_CAP = 0.99


def _share_of_bar(progress: Callable[[str, float], None] | None, long_running: Sequence[str],
                  policy: str) -> Callable[[str, float], None] | None:
    """``policy``'s progress as its share of one bar over the long-running policies.

    Each of the annealing and the MILP gets an equal share (each has the same time budget,
    ``time_limit_s``; the annealing usually ends well within it and the bar then jumps to
    the MILP's share). The fraction stays below :data:`PROGRESS_CAP` until the whole
    comparison ends: a bar at 100 % reads as finished (rich then stops its elapsed time)
    while the next policy is still running.
    """
    if progress is None or policy not in long_running:
        return None
    index, count = long_running.index(policy), len(long_running)

    def report(stage: str, fraction: float) -> None:
        share = (index + min(max(fraction, 0.0), 1.0)) / count
        progress(stage, min(share, PROGRESS_CAP))

    return report




def schedule_batch(batch: Batch, dc: DataCenter, policies: Sequence[str] | str = "all", *,
                   estimated: tuple[str, str | None] | None = None, seed: int = 0,
                   time_limit_s: float = 60.0, sa_iterations: int | None = None,
                   progress: Callable[[str, float], None] | None = None) -> ScheduleResult:
    """Plan ``batch`` with each policy, execute the plans on the true times, compare energy.

    ``policies``: names from ``rr``, ``heuristic``, ``sa``, ``milp`` or ``"all"`` (the MILP
    is then left out, with a note, when its model would be too large: the thesis's "MILP
    does not scale"). ``estimated``: ``(time column, power column or None)`` of the batch to
    plan with instead of the truth (the power column defaults to the true power).
    ``time_limit_s`` bounds the MILP solver and the annealing each; ``seed`` makes the
    annealing reproducible. ``progress(stage, fraction)`` is called during long policies
    (see :func:`_share_of_bar`).
    """
    from phasekit.schedule import policies as pol

    report = progress  # the caller's bar; each long policy gets a share (_share_of_bar)

    batch.check_fits(dc.cores)
    notes: list[str] = []
    all_requested = isinstance(policies, str) and policies == "all"
    if isinstance(policies, str):
        policies = POLICIES if all_requested else (policies,)
    names = list(dict.fromkeys(policies))
    for name in names:
        if name not in POLICIES:
            raise UsageError(f"unknown policy {name!r}; expected one of {', '.join(POLICIES)}"
                             " or all")
    if all_requested and "milp" in names and not pol.milp_fits(len(batch), dc):
        names.remove("milp")
        notes.append(f"MILP left out: {pol.milp_size_text(len(batch), dc)} (seed 004 "
                     "Table 5.1: the MILP does not scale to the large scenario)")
    plan_time = batch.time_s
    plan_power = batch.power_w
    planned_with = "oracle"
    if estimated is not None:
        time_col, power_col = estimated
        plan_time = batch.column(time_col)
        planned_with = time_col
        if power_col is not None:
            plan_power = batch.column(power_col)
            planned_with += f", {power_col}"
    threads = np.ascontiguousarray(batch.threads, dtype=np.int64)
    plan_time = np.ascontiguousarray(plan_time, dtype=np.float64)
    plan_power = np.ascontiguousarray(plan_power, dtype=np.float64)

    long_running = [n for n in POLICIES if n in names and n in ("sa", "milp")]

    def run(policy: str, upper: float | None,
            start: tuple[np.ndarray, np.ndarray] | None) -> tuple[Plan, float]:
        started = time.perf_counter()
        bar = _share_of_bar(report, long_running, policy)
        if policy == "rr":
            plan = pol.round_robin(len(batch))
        elif policy == "heuristic":
            plan = pol.ltf_heuristic(plan_time)
        elif policy == "sa":
            kw = {} if sa_iterations is None else {"iterations": sa_iterations}
            plan = pol.simulated_annealing(threads, plan_time, dc, seed=seed,
                                           time_limit_s=time_limit_s, progress=bar, **kw)
        else:
            plan = pol.milp_schedule(threads, plan_time, dc, time_limit_s=time_limit_s,
                                     upper_bound_s=upper, start_schedule=start,
                                     progress=bar)
        return plan, time.perf_counter() - started

    results: dict[str, PolicyResult] = {}
    planned: dict[str, Execution] = {}

    def evaluate(policy: str, plan: Plan, runtime: float, baseline_j: float | None
                 ) -> PolicyResult:
        on_plan = execute(plan, batch, dc, time_s=plan_time, power_w=plan_power, cores=False)
        real = execute(plan, batch, dc, plan_power_w=plan_power)
        planned[policy] = on_plan
        base = real.energy_j if baseline_j is None else baseline_j
        saving = 100.0 * (base - real.energy_j) / base if base > 0 else 0.0
        return PolicyResult(policy=policy, makespan_s=real.makespan_s, energy_j=real.energy_j,
                            energy_it_j=real.energy_it_j, saving_vs_rr=saving,
                            planned_makespan_s=on_plan.makespan_s, runtime_s=runtime,
                            info=dict(plan.info), order=np.asarray(plan.order),
                            start_s=real.start_s, end_s=real.end_s, server=real.server,
                            cores=real.cores, profile_t=real.profile_t,
                            profile_w=real.profile_w, profile_cores=real.profile_cores)

    rr_plan, rr_time = run("rr", None, None)
    baseline = evaluate("rr", rr_plan, rr_time, None)
    for name in [n for n in POLICIES if n in names]:
        if name == "rr":
            results[name] = baseline
            continue
        upper = start = None
        if name == "milp":
            # start from the best schedule known on the planning times; it also bounds C
            ltf = Plan(policy="ltf", kind="list", rule="first_fit",
                       order=np.argsort(-plan_time, kind="stable").astype(np.int64))
            known = [*planned.values(), execute(ltf, batch, dc, time_s=plan_time,
                                                power_w=plan_power, cores=False)]
            best = min(known, key=lambda e: e.makespan_s)
            upper, start = best.makespan_s, (best.start_s, best.server)
        plan, runtime = run(name, upper, start)
        results[name] = evaluate(name, plan, runtime, baseline.energy_j)
        if name == "milp" and plan.info.get("fallback"):
            notes.append(str(plan.info["fallback"]))
    return ScheduleResult(datacenter=dc, n_tasks=len(batch), planned_with=planned_with,
                          policies=tuple(results[n] for n in POLICIES if n in results),
                          baseline=baseline,
                          lower_bound_s=lower_bound(threads, batch.time_s, dc),
                          notes=tuple(notes), names=batch.names)
