"""The dispatchers that run a :class:`~phasekit.schedule.datacenter.Plan` (Salinas Hilburg 2020,
chapter 5), as numba kernels, and their Python entry points (:func:`list_schedule`,
:func:`plan_schedule`, :func:`execute_arrays`).

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
(:func:`ff_makespan`, and :func:`ff_trace` / :func:`ff_resume`, which re-simulate a
swapped order only from the first pick the swap can change): the same dispatch, checked
against a plain-Python scheduler in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from phasekit.errors import UsageError
from phasekit.schedule.datacenter import RULES, DataCenter, Plan

__all__ = [
    "execute_arrays",
    "ff_buffers",
    "ff_makespan",
    "ff_resume",
    "ff_trace",
    "kernel_array",
    "list_makespan",
    "list_schedule",
    "plan_schedule",
]


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
def list_makespan(order: np.ndarray, threads: np.ndarray, times: np.ndarray,
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
    start of each round (``rounds``), which :func:`ff_resume` restarts from. Returns the
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


def ff_buffers(n: int, trace: bool = False
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
def ff_makespan(order: np.ndarray, threads: np.ndarray, times: np.ndarray, n_servers: int,
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
def ff_trace(order: np.ndarray, threads: np.ndarray, times: np.ndarray, n_servers: int,
             cores: int, work: float, trace: tuple[np.ndarray, ...],
             rounds: tuple[np.ndarray, ...]) -> float:
    """The exact first-fit makespan of ``order``, recording the run for ff_resume."""
    return _ff_from_start(order, threads, times, n_servers, cores, np.inf, work, True, trace,
                          rounds)[0]


@njit(cache=True)
def ff_resume(cand: np.ndarray, r1: int, r2: int, threads: np.ndarray, times: np.ndarray,
              n_servers: int, cores: int, limit: float, work: float,
              trace: tuple[np.ndarray, ...], rounds: tuple[np.ndarray, ...]) -> float:
    """:func:`ff_makespan` of ``cand``, the traced order with positions r1 < r2 swapped,
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
        return ff_makespan(cand, threads, times, n_servers, cores, limit, work)
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



def kernel_array(values: Sequence[float] | np.ndarray, dtype: type) -> np.ndarray:
    """``values`` as the kernels take them: C-contiguous and writable, copied only when not.

    numba compiles a kernel once per argument types, and a read-only array (a batch's
    columns are) is another type than a writable one: passing always writable arrays
    keeps one compiled version per kernel, the one the install's warm-up compiles
    (:mod:`phasekit.warmup`).
    """
    return np.require(values, dtype=dtype, requirements=["C", "W"])


def _as_arrays(threads: Sequence[int] | np.ndarray, times: Sequence[float] | np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    return kernel_array(threads, np.int64), kernel_array(times, np.float64)


def list_schedule(order: Sequence[int] | np.ndarray, threads: Sequence[int] | np.ndarray,
                  times: Sequence[float] | np.ndarray, dc: DataCenter, *,
                  rule: str = "first_fit",
                  power: Sequence[float] | np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Start times and servers of the list dispatcher (see the module docstring)."""
    thr, t = _as_arrays(threads, times)
    p = np.zeros(t.size) if power is None else kernel_array(power, np.float64)
    if rule not in RULES:
        raise UsageError(f"unknown dispatch rule; expected one of {', '.join(RULES)}",
                         parameter="rule", value=rule)
    if thr.size and thr.max() > dc.cores:
        raise UsageError(f"a task needs {int(thr.max())} cores; a server has {dc.cores}")
    return _list_schedule(kernel_array(order, np.int64), thr, t, p, dc.servers, dc.cores,
                          RULES[rule])


def plan_schedule(order: Sequence[int] | np.ndarray, server: Sequence[int] | np.ndarray,
                  threads: Sequence[int] | np.ndarray, times: Sequence[float] | np.ndarray,
                  dc: DataCenter) -> np.ndarray:
    """Start times of a per-server plan executed as soon as cores are free, in its order."""
    thr, t = _as_arrays(threads, times)
    srv = kernel_array(server, np.int64)
    if srv.size and (srv.min() < 0 or srv.max() >= dc.servers):
        raise UsageError(f"plan uses a server outside 0..{dc.servers - 1}")
    return _plan_schedule(kernel_array(order, np.int64), srv, thr, t, dc.servers, dc.cores)


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

