"""Scheduling policies of Salinas Hilburg 2020, chapter 5: round robin, LTF energy-aware heuristic,
simulated annealing and a MILP minimizing the makespan.

Each policy returns a :class:`~phasekit.schedule.datacenter.Plan`, which the simulator executes
(on the planning times, or on the true ones when the policy planned with estimates):

- :func:`round_robin` (section 5.1, Fig. 5.1a): arrival order, first fit, wait queue.
- :func:`ltf_heuristic` (section 5.2.3, Algorithm 6, after Beloglazov et al.): Longest Task
  First order; each task goes, when cores are free, to the server whose energy grows least
  with the planning power values (the ``least_energy`` dispatch rule).
- :func:`simulated_annealing` (section 5.2.2, Algorithms 3-5): reorders the batch; a move
  swaps random pairs of positions, as many as the temperature says (Algorithm 4); the
  objective is the makespan of the first-fit list dispatcher (Algorithm 5); a worse order is
  accepted with P = 1 / (1 + exp(delta / T)); T = T0 x 0.95^k after each level of n moves
  (Algorithm 3). The thesis leaves T0, the number of levels and the swap scale open; our
  choices are in the function's docstring. Each trial is simulated by an exact numba
  kernel that starts at the first pick the swap can change and stops once the trial is
  sure to be rejected (:func:`~phasekit.schedule.dispatch.ff_resume`).
- :func:`milp_schedule` (section 5.2.1, after Goldman & Ngoko): start times tau, server
  assignment z, "j is running when k ends" x and its side y, capacity at every task's end,
  makespan C; the thesis's constraints as printed or (default) an equivalent compact form;
  solved with HiGHS within a time limit from a MIP start, its MIP gap reported.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import math
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
from numba import njit

from phasekit.errors import UsageError
from phasekit.schedule._highs_worker import binding as highs_binding
from phasekit.schedule._highs_worker import highs_started
from phasekit.schedule.budget import Deadline
from phasekit.schedule.datacenter import RULES, DataCenter, Plan, lower_bound
from phasekit.schedule.dispatch import (
    execute_arrays,
    ff_buffers,
    ff_makespan,
    ff_resume,
    ff_trace,
    kernel_array,
    list_makespan,
)

__all__ = [
    "MILP_MAX_ROWS",
    "SA_COOLING",
    "SA_EVALUATIONS",
    "SA_ITERATIONS",
    "SA_MAX_LEVELS",
    "SA_RESTART",
    "SA_SWAPS0",
    "SA_T0_SHARE",
    "SA_TASK_S",
    "SA_TRIAL_S",
    "ltf_heuristic",
    "milp_fits",
    "milp_schedule",
    "milp_size_text",
    "round_robin",
    "sa_levels_within",
    "simulated_annealing",
]

Progress = Callable[[str, float], None] | None
_log = logging.getLogger(__name__)


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (what a solver printf-ed but has not written)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def solver_output_to_log() -> Iterator[None]:
    """Send whatever is written to file descriptor 1 meanwhile to the debug log.

    HiGHS prints its banner when a ``Highs`` object is made, from C++ straight to fd 1,
    before any option can silence it (``output_flag`` only governs what follows), which
    broke ``--json`` output. Python's ``sys.stdout`` is flushed first and fd 1 points to a
    temporary file until the block ends; its text is then logged at DEBUG (``phasekit -v``
    shows it). The redirection is process-wide: output of other threads during the solve
    lands in the log too. Without a usable fd 1 (closed, or no ``fileno``) nothing is
    redirected.
    """
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield
        finally:
            _flush_c_stdio()
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace").strip()
            if text:
                _log.debug("solver output:\n%s", text)


# --- round robin and the heuristic -----------------------------------------------------------
def round_robin(n_tasks: int) -> Plan:
    """Arrival order, first-fit server, a wait queue when no server has the cores."""
    return Plan(policy="rr", kind="list", order=np.arange(n_tasks, dtype=np.int64),
                rule="first_fit")


def ltf_heuristic(times: np.ndarray) -> Plan:
    """Algorithm 6: Longest Task First (ties in arrival order), least-energy server."""
    order = np.argsort(-np.asarray(times, dtype=np.float64), kind="stable").astype(np.int64)
    return Plan(policy="heuristic", kind="list", order=order, rule="least_energy")


# --- simulated annealing ---------------------------------------------------------------------
#: Our choices where Algorithm 3 is silent (see simulated_annealing).
SA_ITERATIONS = 60
SA_MAX_LEVELS = 1000
SA_EVALUATIONS = 50_000
SA_COOLING = 0.95
SA_T0_SHARE = 1e-3
SA_SWAPS0 = 2.0
SA_RESTART = 10
#: The speed a time limit is counted at (see :func:`sa_levels_within`): a trial of an
#: n-task batch is assumed to take SA_TRIAL_S + n x SA_TASK_S seconds. Measured on one
#: core of a shared machine (full cooling, per trial): 45-150 ns per task on thesis-like
#: batches (``generate_batch``) and mixed ones (``realistic_batch`` of
#: benchmarks/schedule.py) of 30-2000 tasks, 220 ns on 900 tasks of up to 128 threads on
#: 128-core servers; the assumption is 2-12 times slower, so that the clock, only a safety
#: net, does not stop the annealing on a machine of about that speed.
SA_TRIAL_S = 2e-6
SA_TASK_S = 0.5e-6


def sa_levels_within(seconds: float, n_tasks: int, moves_per_level: int) -> int:
    """The temperature levels whose work fits in ``seconds`` at the assumed speed
    (``moves_per_level`` trials of SA_TRIAL_S + n_tasks x SA_TASK_S seconds each).

    The count depends on the batch's size and the limit only, never on this machine's
    clock, so that a limit cuts the annealing at the same level on every machine and at
    any load: the same seed and limit give the same plan.
    """
    if math.isinf(seconds):
        return sys.maxsize
    level_s = max(int(moves_per_level), 1) * (SA_TRIAL_S + max(int(n_tasks), 1) * SA_TASK_S)
    return max(0, math.floor(float(seconds) / level_s + 1e-9))


@njit(cache=True)
def _anneal_level(order: np.ndarray, current: float, best_order: np.ndarray, best: float,
                  temp: float, swaps: int, n_moves: int, threads: np.ndarray,
                  times: np.ndarray, kind: np.ndarray, n_servers: int, cores: int,
                  work: float, trace: tuple[np.ndarray, ...], rounds: tuple[np.ndarray, ...],
                  seed: int) -> tuple[float, float, int, int]:
    """One temperature level of Algorithm 3: ``n_moves`` trial orders of ``swaps`` random
    swaps each (Algorithm 4), judged by their first-fit makespan (Algorithm 5).

    The acceptance draw comes first: a trial is taken iff its makespan is below
    ``current + slack``, slack = T ln(1/u - 1) for u < 1/2, else 0, which is
    P = 1 / (1 + exp(delta / T)) for delta >= 0 (and always for delta < 0), so the
    evaluation can stop as soon as the makespan reaches that limit. A trial that only
    swaps identical tasks (same ``kind``: threads and time) has the current makespan and
    is not simulated; a single swap is simulated from the first pick it can change
    (``trace`` and ``rounds`` hold the run of ``order``, kept up to date). Returns the
    current and best makespans, accepted trials and simulations run.
    """
    np.random.seed(seed)
    n = order.size
    cand = order.copy()
    accepted = 0
    evaluations = 0
    for _ in range(n_moves):
        cand[:] = order
        same = True
        lo = n
        hi = -1
        for _s in range(swaps):
            r1 = np.random.randint(0, n)
            r2 = np.random.randint(0, n)
            a = cand[r1]
            b = cand[r2]
            if kind[a] != kind[b]:
                same = False
            cand[r1] = b
            cand[r2] = a
            lo = min(lo, r1, r2)
            hi = max(hi, r1, r2)
        u = np.random.random()
        slack = temp * math.log(1.0 / u - 1.0) if 0.0 < u < 0.5 else 0.0
        if same:
            c = current
        elif swaps == 1:
            evaluations += 1
            c = ff_resume(cand, lo, hi, threads, times, n_servers, cores, current + slack,
                          work, trace, rounds)
        else:
            evaluations += 1
            c = ff_makespan(cand, threads, times, n_servers, cores, current + slack, work)
        if c < current + slack or (same and slack > 0.0):
            order[:] = cand
            current = ff_trace(order, threads, times, n_servers, cores, work, trace, rounds)
            accepted += 1
            if current < best:
                best = current
                best_order[:] = order
    return current, best, accepted, evaluations


def _kinds(threads: np.ndarray, times: np.ndarray) -> np.ndarray:
    """A label per task, equal for tasks with the same threads and time (interchangeable)."""
    if times.size == 0:
        return np.zeros(0, np.int64)
    return np.unique(np.stack([threads.astype(np.float64), times]), axis=1,
                     return_inverse=True)[1].reshape(-1).astype(np.int64)


def simulated_annealing(threads: np.ndarray, times: np.ndarray, dc: DataCenter, *,
                        seed: int = 0, iterations: int | None = None,
                        cooling: float = SA_COOLING, t0: float | None = None,
                        swaps0: float = SA_SWAPS0, init: str = "ltf",
                        moves_per_level: int | None = None, time_limit_s: float | None = None,
                        deadline: Deadline | None = None, restart_every: int = SA_RESTART,
                        progress: Progress = None) -> Plan:
    """Algorithms 3-5: anneal the batch order against the first-fit list makespan.

    As the thesis (section 5.2.2): the objective is the makespan of the order run by the
    first-fit dispatcher (Algorithm 5; the energy follows from it); a trial swaps random
    pairs of positions, as many as the temperature says (Algorithm 4); a worse trial is
    taken with P = 1 / (1 + exp(delta / T)), an equal one with 1/2; n trials per
    temperature; T = T0 x 0.95^k. These are MATLAB simulannealbnd's ``acceptancesa`` and
    ``temperatureexp`` (default T0 = 100). Our choices where the thesis gives no value:

    - ``t0`` = 0.1 % of the start's makespan (60-75 s on the thesis's scenarios), in
      seconds of makespan. It must be small: many trials change the makespan by seconds,
      which the rule takes with P ~ 1/2 while T is far above that, a random walk into
      worse orders. Our first version (T0 ~ 1900 s on the large scenario, still ~90 s after
      60 levels) never came back below its start (74 211 s -> 74 211 s);
    - swaps per trial = max(1, round(``swaps0`` x T / T0)), ``swaps0`` = 2 (Algorithm 4's
      "for i = 1:Temp" reads T as a number of swaps: 100 random swaps per early trial,
      nearly always rejected);
    - ``iterations`` (levels): as many as 50 000 trials allow, 60 to 1000 (757 x 66 trials
      on the small scenario, 60 x 900 on the large one);
    - ``init`` = ``"ltf"``: start from the Longest-Task-First order (``"arrival"``: the
      thesis's start, the batch as it came);
    - ``restart_every`` = 10 levels: go back to the best order seen if the chain is worse
      (0: never), which bounds its drift along plateaus of equal makespan (mean makespan /
      lower bound over five large-scenario batches 1.0436 -> 1.0396, twenty small ones
      unchanged);
    - the best order seen is returned.

    ``time_limit_s`` is the work the annealing may do, counted in levels at an assumed
    speed (:func:`sa_levels_within`), not on the clock: it runs the first levels of the
    same cooling, so the same seed and limit give the same plan on every machine.
    ``deadline`` (:class:`~phasekit.schedule.budget.Deadline`) is the clock's safety net:
    no level starts once it has passed, and ``info["stopped"]`` then says that the plan
    depends on the machine. ``info``: ``levels`` run of ``iterations``, ``levels_allowed``
    by the limit, ``cut_by`` (``"time limit"``, ``"clock"``, ``"lower bound"`` or None) and
    ``stopped``, a sentence saying why the cooling ended early and what that means.

    Exact shortcuts (``info``: ``evaluations`` <= ``moves``): a trial swapping only
    identical tasks is not simulated; a single swap is simulated from the first pick it
    can change; every simulation stops once the trial is sure to be rejected. The same
    ``seed`` gives the same order (one numba random stream per level).
    """
    threads = kernel_array(threads, np.int64)
    times = kernel_array(times, np.float64)
    n = times.size
    if iterations is None:
        iterations = max(SA_ITERATIONS, min(SA_MAX_LEVELS, SA_EVALUATIONS // max(n, 1)))
    if iterations < 1:
        raise UsageError("the annealing needs at least one temperature level",
                         parameter="iterations", value=iterations)
    if not 0 < cooling < 1:
        raise UsageError("expected a cooling factor in (0, 1)", parameter="cooling",
                         value=cooling)
    if init not in ("ltf", "arrival"):
        raise UsageError("expected 'ltf' or 'arrival'", parameter="init", value=init)
    if restart_every < 0:
        raise UsageError("expected a number of levels >= 0", parameter="restart_every",
                         value=restart_every)
    if not (swaps0 >= 1 and math.isfinite(swaps0)):
        raise UsageError("expected a number of swaps >= 1", parameter="swaps0", value=swaps0)
    if threads.size and threads.max() > dc.cores:
        raise UsageError(f"a task needs {int(threads.max())} cores; a server has {dc.cores}")
    if time_limit_s is not None and not time_limit_s >= 0:
        raise UsageError("expected seconds >= 0", parameter="time_limit_s",
                         value=time_limit_s)
    rng = np.random.default_rng(seed)
    level_seeds = rng.integers(0, 2**31 - 1, size=iterations)
    # tasks of the same kind (threads and time) are interchangeable in every schedule
    kind = _kinds(threads, times)
    work = float(np.dot(threads, times))
    order = (np.argsort(-times, kind="stable") if init == "ltf"
             else np.arange(n)).astype(np.int64)
    trace, rounds = ff_buffers(n, trace=True)
    current = float(ff_trace(order, threads, times, dc.servers, dc.cores, work, trace, rounds))
    initial = current
    floor = lower_bound(threads, times, dc)
    if t0 is None:
        t0 = SA_T0_SHARE * max(current, 1e-9)
    if not (t0 > 0 and math.isfinite(t0)):
        raise UsageError("expected a positive initial temperature", parameter="t0", value=t0)
    n_moves = int(n if moves_per_level is None else moves_per_level)
    allowed = None if time_limit_s is None else sa_levels_within(time_limit_s, n, n_moves)
    trial_s = SA_TRIAL_S + max(n, 1) * SA_TASK_S
    best_order = order.copy()
    best = current
    accepted = evaluations = levels = 0
    stopped = cut_by = None
    for k in range(iterations):
        if n <= 1 or best <= floor * (1 + 1e-12):
            stopped, cut_by = "reached the lower bound (optimal)", "lower bound"
            break
        if allowed is not None and k >= allowed:
            stopped, cut_by = (
                f"cut short by the time limit: {time_limit_s:.3g} s of annealing work "
                f"allows {allowed} of the {iterations} levels (counted at an assumed "
                f"{trial_s * 1e6:.3g} microseconds per trial, not on the clock, so the same "
                "seed and limit give the same plan on any machine); a longer limit searches "
                "further"), "time limit"
            break
        if deadline is not None and deadline.remaining() <= 0:
            stopped, cut_by = (
                f"stopped by the clock after {k} of "
                f"{iterations if allowed is None else min(allowed, iterations)} levels, "
                f"{deadline.spent():.3g} s into the time limit: this machine ran slower than "
                "the speed the limit is counted at, so this plan depends on the machine and "
                "its load and a rerun may differ; a longer limit avoids it"), "clock"
            break
        if restart_every and k and k % restart_every == 0 and current > best:
            order[:] = best_order
            current = float(ff_trace(order, threads, times, dc.servers, dc.cores, work, trace,
                                     rounds))
        temp = t0 * cooling ** k
        swaps = max(1, math.floor(swaps0 * temp / t0 + 0.5))
        current, best, acc, ev = _anneal_level(order, current, best_order, best, temp, swaps,
                                               n_moves, threads, times, kind, dc.servers,
                                               dc.cores, work, trace, rounds,
                                               int(level_seeds[k]))
        accepted += acc
        evaluations += ev
        levels += 1
        if progress is not None:
            planned = iterations if allowed is None else max(min(allowed, iterations), 1)
            progress(f"annealing, makespan {best:.6g} s", min((k + 1) / planned, 1.0))
    info: dict[str, Any] = {
        "seed": seed, "init": init, "t0": t0, "cooling": cooling, "levels": levels,
        "iterations": iterations, "moves_per_level": n_moves, "swaps0": swaps0,
        "restart_every": restart_every,
        "moves": levels * n_moves, "evaluations": evaluations, "accepted": accepted,
        "initial_makespan_s": initial, "best_planned_makespan_s": best,
        "final_temperature": t0 * cooling ** max(levels - 1, 0),
        "time_limit_s": time_limit_s, "levels_allowed": allowed,
        "assumed_trial_s": trial_s, "cut_by": cut_by, "stopped": stopped}
    return Plan(policy="sa", kind="list", order=best_order, rule="first_fit", info=info)


# --- MILP ------------------------------------------------------------------------------------
#: The largest MILP we build (rows of the pairwise constraints, see _milp_rows; our choice:
#: HiGHS does not improve on its start within a minute already at 66 tasks, 28 000 rows).
MILP_MAX_ROWS = 500_000
#: Below this many seconds left of a deadline, HiGHS is not started (the plan is the start):
#: the process it then runs in takes 0.2-0.4 s to start.
MILP_MIN_SOLVE_S = 0.5


MILP_FORMULATIONS = ("compact", "thesis")


def _milp_rows(n: int, dc: DataCenter, formulation: str = "compact") -> int:
    """Rows of the pairwise constraints: (5)-(8) per ordered pair, and per server in the
    thesis's form; the compact form adds the same-server links, per pair and server."""
    if formulation == "thesis":
        return 4 * n * (n - 1) * dc.servers
    return 4 * n * (n - 1) + n * (n - 1) // 2 * dc.servers


def milp_fits(n: int, dc: DataCenter, formulation: str = "compact") -> bool:
    return _milp_rows(n, dc, formulation) <= MILP_MAX_ROWS


def milp_size_text(n: int, dc: DataCenter, formulation: str = "compact") -> str:
    return (f"{n} tasks on {dc.servers} servers need {_milp_rows(n, dc, formulation):,} "
            f"overlap constraints and {2 * n * (n - 1):,} binaries (limit "
            f"{MILP_MAX_ROWS:,} rows)")


def _milp_model(threads: np.ndarray, times: np.ndarray, dc: DataCenter, upper: float,
                d: float, kind: np.ndarray, formulation: str = "compact") -> tuple[Any, ...]:
    """The MILP as sparse arrays: the thesis's literal form or our compact one.

    Returns cost, the constraint matrix and row bounds, variable bounds, integrality and
    the index layout (tau, C, z, x, y, same-server s (-1: none), variables, rows).
    """
    if formulation == "thesis":
        *model, (i_tau, i_c, i_z, i_x, i_y, nvar, nrows) = _milp_thesis(threads, times, dc,
                                                                          upper, d)
        return (*model, (i_tau, i_c, i_z, i_x, i_y, -1, nvar, nrows))
    return _milp_compact(threads, times, dc, upper, d, kind)


class _Rows:
    """The constraint rows of a sparse MILP, appended block by block."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.count = 0

    def block(self, entries: list[tuple[np.ndarray, np.ndarray, float | np.ndarray]],
              lower: np.ndarray, upper: np.ndarray) -> None:
        """``lower.size`` new rows; ``entries``: (row within the block, column, value)."""
        for r, col, val in entries:
            r = np.asarray(r, np.int64)
            self.rows.append(self.count + r)
            self.cols.append(np.broadcast_to(col, r.shape).astype(np.int64))
            self.vals.append(np.broadcast_to(np.asarray(val, dtype=float), r.shape))
        self.lo.append(lower)
        self.hi.append(upper)
        self.count += lower.size

    def add(self, entries: list[tuple[np.ndarray, float | np.ndarray]], lower: np.ndarray,
            upper: np.ndarray) -> None:
        """One row per element of ``lower``; each (column, value) entry broadcast over them."""
        r = np.arange(lower.size)
        self.block([(r, col, val) for col, val in entries], lower, upper)

    def matrix(self, nvar: int) -> Any:
        from scipy.sparse import coo_matrix

        return coo_matrix((np.concatenate(self.vals),
                           (np.concatenate(self.rows), np.concatenate(self.cols))),
                          shape=(self.count, nvar)).tocsr()


def _assignment_rows(rows: _Rows, threads: np.ndarray, times: np.ndarray, dc: DataCenter,
                     pairs_k: np.ndarray, pairs_j: np.ndarray, i_tau: int, i_c: int,
                     i_z: int, i_x: int) -> None:
    """The rows both forms share: (9) cores, (10) makespan, (4) one server per task, and the
    work bound per server."""
    n, m, cap = times.size, dc.servers, dc.cores
    # (9) sum_j c_j x_kj <= c_server - c_k
    rows.block([(pairs_k, i_x + np.arange(pairs_k.size), threads[pairs_j].astype(float))],
               np.full(n, -np.inf), (cap - threads).astype(float))
    # (10) tau_k + t_k <= C
    rows.add([(i_tau + np.arange(n), 1.0), (np.full(n, i_c), -1.0)], np.full(n, -np.inf),
             -times)
    # (4) sum_i z_ki = 1
    rows.block([(np.repeat(np.arange(n), m), i_z + np.arange(n * m), 1.0)], np.ones(n),
               np.ones(n))
    # work bound per server: cores C - sum_k c_k t_k z_ki >= 0
    rows.block([(np.tile(np.arange(m), n), i_z + np.arange(n * m),
                 -np.repeat(threads * times, m)),
                (np.arange(m), np.full(m, i_c), float(cap))], np.zeros(m), np.full(m, np.inf))


def _variables(threads: np.ndarray, times: np.ndarray, dc: DataCenter, upper: float,
               nvar: int, i_tau: int, i_c: int, i_z: int, integer_end: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cost (C), bounds and integrality (z .. ``integer_end``) of both forms; task k only on
    servers 0..k (identical servers: symmetry breaking)."""
    n, m = times.size, dc.servers
    lb = np.zeros(nvar)
    ub = np.ones(nvar)
    ub[i_tau:i_tau + n] = np.maximum(upper - times, 0.0)
    lb[i_c] = lower_bound(threads, times, dc)
    ub[i_c] = upper
    zmask = np.arange(m)[None, :] > np.arange(n)[:, None]
    ub[i_z:i_z + n * m][zmask.ravel()] = 0.0
    integrality = np.zeros(nvar)
    integrality[i_z:integer_end] = 1
    cost = np.zeros(nvar)
    cost[i_c] = 1.0
    return cost, lb, ub, integrality


def _milp_compact(threads: np.ndarray, times: np.ndarray, dc: DataCenter, upper: float,
                  d: float, kind: np.ndarray) -> tuple[Any, ...]:
    """Section 5.2.1's model with the same feasible schedules, smaller and tighter.

    - "k and j on the same server" is one variable s_kj per pair (continuous in [0, 1],
      s_kj >= z_ki + z_ji - 1 for every server i), so constraints (5)-(8) are written once
      per ordered pair with (2 - x - s), (1 - s + y + x) and (2 - s - y + x) in place of the
      thesis's (3 - x - z_ji - z_ki), (2 + y + x - ...) and (3 - y + x - ...) per server:
      4 n (n - 1) + m n (n - 1) / 2 rows instead of 4 n (n - 1) m (all rows: 86 003 ->
      28 135 for the small scenario's 66 tasks on 5 servers);
    - each big constant is the largest its left side can be given tau_k + t_k <= U (the
      upper bound): U - t_j - t_k, U - t_j, U + d and U + d - t_k instead of one X > sum t;
    - identical tasks (same threads and time) start in index order (tau_k <= tau_j), on
      top of the identical servers' symmetry breaking (task k on servers 0..k) and the work
      bound per server of the thesis form (see :func:`_milp_thesis`).
    """
    n, m = times.size, dc.servers
    pairs_k, pairs_j = np.nonzero(~np.eye(n, dtype=bool))
    npairs = pairs_k.size
    uk, uj = np.triu_indices(n, 1)
    uid = np.zeros((n, n), np.int64)
    uid[uk, uj] = np.arange(uk.size)
    uid[uj, uk] = np.arange(uk.size)
    i_tau, i_c = 0, n
    i_z = n + 1
    i_x = i_z + n * m
    i_y = i_x + npairs
    i_s = i_y + npairs
    nvar = i_s + uk.size
    big = upper
    rows = _Rows()
    add = rows.add
    tk, tj = times[pairs_k], times[pairs_j]
    tau_k, tau_j = i_tau + pairs_k, i_tau + pairs_j
    xv, yv = i_x + np.arange(npairs), i_y + np.arange(npairs)
    sv = i_s + uid[pairs_k, pairs_j]
    inf = np.full(npairs, -np.inf)
    m5 = np.maximum(big - tj - tk, 0.0)
    m6 = np.maximum(big - tj, 0.0)
    m7 = np.full(npairs, big + d)
    m8 = big + d - tk
    # (5) tau_j - tau_k - t_k <= (2 - x - s) M5
    add([(tau_j, 1.0), (tau_k, -1.0), (xv, m5), (sv, m5)], inf, tk + 2 * m5)
    # (6) tau_k + t_k - tau_j - t_j <= (2 - x - s) M6
    add([(tau_k, 1.0), (tau_j, -1.0), (xv, m6), (sv, m6)], inf, tj - tk + 2 * m6)
    # (7) tau_k + t_k + d - tau_j <= (1 - s + y + x) M7
    add([(tau_k, 1.0), (tau_j, -1.0), (yv, -m7), (xv, -m7), (sv, m7)], inf, m7 - tk - d)
    # (8) tau_j + t_j + d - tau_k - t_k <= (2 - s - y + x) M8
    add([(tau_j, 1.0), (tau_k, -1.0), (yv, m8), (xv, -m8), (sv, m8)], inf,
        2 * m8 + tk - tj - d)
    # same server: s_kj - z_ki - z_ji >= -1 for every server i
    pk_, pj_ = np.repeat(uk, m), np.repeat(uj, m)
    srv = np.tile(np.arange(m), uk.size)
    add([(i_s + np.repeat(np.arange(uk.size), m), 1.0), (i_z + pk_ * m + srv, -1.0),
         (i_z + pj_ * m + srv, -1.0)], np.full(pk_.size, -1.0), np.full(pk_.size, np.inf))
    _assignment_rows(rows, threads, times, dc, pairs_k, pairs_j, i_tau, i_c, i_z, i_x)
    # identical tasks in index order: tau_k - tau_j <= 0 for consecutive k < j of a kind
    first, second = _identical_chain(kind)
    if first.size:
        add([(i_tau + first, 1.0), (i_tau + second, -1.0)], np.full(first.size, -np.inf),
            np.zeros(first.size))
    cost, lb, ub, integrality = _variables(threads, times, dc, upper, nvar, i_tau, i_c, i_z,
                                           i_s)
    return cost, rows.matrix(nvar), np.concatenate(rows.lo), np.concatenate(rows.hi), lb, ub, \
        integrality, (i_tau, i_c, i_z, i_x, i_y, i_s, nvar, rows.count)


def _identical_chain(kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive pairs (k, j), k < j, of tasks of the same kind."""
    order = np.lexsort((np.arange(kind.size), kind))
    same = kind[order[1:]] == kind[order[:-1]]
    return order[:-1][same], order[1:][same]


def _milp_thesis(threads: np.ndarray, times: np.ndarray, dc: DataCenter, upper: float,
                 d: float) -> tuple[Any, ...]:
    """The thesis's formulation (section 5.2.1) as sparse arrays for scipy.optimize.milp.

    Variables: tau (n), C, z (n x m), x and y (one per ordered pair k != j). Our additions,
    all valid for every optimal schedule: tau_k + t_k <= C <= ``upper`` (an upper bound from
    a list schedule), which lets the big constant be X = upper + d instead of > sum t; task k
    only on servers 0..k (identical servers: symmetry breaking); and the work bound
    C >= sum_k c_k t_k z_ki / cores per server, so the reported gap means something.
    """
    n, m = times.size, dc.servers
    pairs_k, pairs_j = np.nonzero(~np.eye(n, dtype=bool))
    npairs = pairs_k.size
    i_tau, i_c = 0, n
    i_z = n + 1
    i_x = i_z + n * m
    i_y = i_x + npairs
    nvar = i_y + npairs
    big = upper + d
    rows = _Rows()
    add = rows.add
    pk = np.repeat(pairs_k, m)
    pj = np.repeat(pairs_j, m)
    srv = np.tile(np.arange(m), npairs)
    pid = np.repeat(np.arange(npairs), m)
    tk, tj = times[pk], times[pj]
    zj, zk = i_z + pj * m + srv, i_z + pk * m + srv
    xv, yv = i_x + pid, i_y + pid
    inf = np.full(pk.size, -np.inf)
    # (5) tau_j <= tau_k + t_k + (3 - x - z_ji - z_ki) X
    add([(i_tau + pj, 1.0), (i_tau + pk, -1.0), (xv, big), (zj, big), (zk, big)],
        inf, tk + 3 * big)
    # (6) tau_k + t_k <= tau_j + t_j + (3 - x - z_ji - z_ki) X
    add([(i_tau + pk, 1.0), (i_tau + pj, -1.0), (xv, big), (zj, big), (zk, big)],
        inf, tj - tk + 3 * big)
    # (7) tau_k + t_k + d <= tau_j + (2 + y + x - z_ji - z_ki) X
    add([(i_tau + pk, 1.0), (i_tau + pj, -1.0), (yv, -big), (xv, -big), (zj, big),
         (zk, big)], inf, -tk - d + 2 * big)
    # (8) tau_j + t_j + d <= tau_k + t_k + (3 - y + x - z_ji - z_ki) X
    add([(i_tau + pj, 1.0), (i_tau + pk, -1.0), (yv, big), (xv, -big), (zj, big),
         (zk, big)], inf, tk - tj - d + 3 * big)
    _assignment_rows(rows, threads, times, dc, pairs_k, pairs_j, i_tau, i_c, i_z, i_x)
    cost, lb, ub, integrality = _variables(threads, times, dc, upper, nvar, i_tau, i_c, i_z,
                                           nvar)
    return cost, rows.matrix(nvar), np.concatenate(rows.lo), np.concatenate(rows.hi), lb, ub, \
        integrality, (i_tau, i_c, i_z, i_x, i_y, nvar, rows.count)


def _mip_start(start: np.ndarray, server: np.ndarray, threads: np.ndarray, times: np.ndarray,
               dc: DataCenter, d: float, upper_model: float, idx: tuple[int, ...],
               kind: np.ndarray) -> np.ndarray | None:
    """A feasible point of the MILP from a real schedule (start times and servers), or None.

    x, y and z follow from the schedule; the start times are then re-solved as an LP with
    those binaries fixed, which opens the d gaps the formulation wants between tasks that
    touch (a task starting exactly when another ends).
    """
    from scipy.optimize import linprog

    i_tau, i_c, i_z, i_x, i_y, i_s, nvar, _ = idx
    n, m = times.size, dc.servers
    # servers renumbered by their first task, as the symmetry breaking wants (k on 0..k)
    label = np.full(m, -1, np.int64)
    for s_ in server:
        if label[s_] < 0:
            label[s_] = label.max() + 1
    server = label[server]
    end = start + times
    pairs_k, pairs_j = np.nonzero(~np.eye(n, dtype=bool))
    same = server[pairs_k] == server[pairs_j]
    k, j = pairs_k[same], pairs_j[same]
    active = (start[j] < end[k]) & (end[j] >= end[k])   # j running when k ends: x = 1
    before = ~active & (end[j] < end[k])                 # j ends before k ends: y = 1
    after = ~active & ~before                            # j starts after k ends: y = 0
    rows: list[np.ndarray] = []
    rhs: list[np.ndarray] = []

    def diff(plus: np.ndarray, minus: np.ndarray, bound: np.ndarray) -> None:
        r = np.zeros((plus.size, n + 1))
        r[np.arange(plus.size), plus] += 1.0
        r[np.arange(plus.size), minus] -= 1.0
        rows.append(r)
        rhs.append(bound)

    ka, ja = k[active], j[active]
    diff(ja, ka, times[ka])                        # tau_j <= tau_k + t_k
    diff(ka, ja, times[ja] - times[ka])            # tau_k + t_k <= tau_j + t_j
    kb, jb = k[before], j[before]
    diff(jb, kb, times[kb] - times[jb] - d)        # tau_j + t_j + d <= tau_k + t_k
    kc, jc = k[after], j[after]
    diff(kc, jc, -times[kc] - d)                   # tau_k + t_k + d <= tau_j
    if i_s >= 0:  # the compact model's identical tasks in index order
        first, second = _identical_chain(kind)
        diff(first, second, np.zeros(first.size))
    cmax = np.zeros((n, n + 1))
    cmax[np.arange(n), np.arange(n)] = 1.0
    cmax[:, n] = -1.0
    rows.append(cmax)
    rhs.append(-times)
    a_ub = np.vstack(rows)
    b_ub = np.concatenate(rhs)
    cost = np.zeros(n + 1)
    cost[n] = 1.0
    bounds = [(0.0, max(upper_model - t, 0.0)) for t in times] + [(0.0, upper_model)]
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        return None
    x = np.zeros(nvar)
    x[i_tau:i_tau + n] = res.x[:n]
    x[i_c] = res.x[n]
    x[i_z + np.arange(n) * m + server] = 1.0
    pair_index = np.flatnonzero(same)
    x[i_x + pair_index[active]] = 1.0
    x[i_y + pair_index[before]] = 1.0
    if i_s >= 0:
        uk, uj = np.triu_indices(n, 1)
        x[i_s + np.arange(uk.size)] = (server[uk] == server[uj]).astype(float)
    return x


def _relabel_identical(start: np.ndarray, server: np.ndarray, kind: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The same schedule with identical tasks exchanged so that they start in index order."""
    start, server = start.copy(), server.copy()
    for k in np.unique(kind):
        members = np.flatnonzero(kind == k)
        if members.size > 1:
            by_start = members[np.argsort(start[members], kind="stable")]
            start[members], server[members] = start[by_start], server[by_start]
    return start, server


def _highs_solve(cost: np.ndarray, a: Any, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray,
                 ub: np.ndarray, integrality: np.ndarray, time_limit_s: float,
                 start: np.ndarray | None, heuristic_effort: float = 0.05) -> dict[str, Any]:
    """Solve with HiGHS, from a MIP start.

    :func:`scipy.optimize.milp` takes no starting solution, and without one HiGHS finds no
    feasible point of this big-M formulation in minutes beyond ~15 tasks. HiGHS's own Python
    binding, ``highspy`` (PyPI, a dependency), takes one (``setSolution``); scipy bundles a
    copy of it (``scipy.optimize._highspy._core``, private), used if ``highspy`` is missing;
    without either, :func:`scipy.optimize.milp` (no start). Same solver, model and options.
    """
    if start is not None:
        h = highs_binding()
        if h is not None:
            try:
                csc = a.tocsc()
                return highs_started(h, cost, csc.indptr, csc.indices, csc.data, lo, hi, lb,
                                     ub, integrality, time_limit_s, start, heuristic_effort)
            except (AttributeError, TypeError) as exc:  # another binding layout
                _log.info("no MIP start (%s); plain milp", exc)
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(cost, integrality=integrality, bounds=Bounds(lb, ub),
               constraints=LinearConstraint(a, lo, hi),
               options={"time_limit": float(time_limit_s), "disp": False})  # no effort knob
    return {"x": res.x, "status": _STATUS.get(res.status, str(res.message)),
            "dual_bound": getattr(res, "mip_dual_bound", None),
            "gap": getattr(res, "mip_gap", None), "started": False,
            "api": "HiGHS (scipy.optimize.milp, no MIP start)"}


#: Seconds the child solving the MILP keeps to write its result before the deadline.
HIGHS_WRITE_MARGIN_S = 0.1
#: How often (s) the parent looks at the child solving the MILP (and reports progress).
HIGHS_POLL_S = 0.25


def _highs_in_child(cost: np.ndarray, a: Any, lo: np.ndarray, hi: np.ndarray,
                    lb: np.ndarray, ub: np.ndarray, integrality: np.ndarray,
                    time_limit_s: float, start: np.ndarray, heuristic_effort: float,
                    deadline: Deadline, progress: Progress) -> dict[str, Any] | None:
    """:func:`_highs_solve` from a MIP start in a child process, killed if the deadline
    comes before its result (see :mod:`phasekit.schedule._highs_worker`); None when the
    child cannot run it (no binding with MIP starts, no process), for the caller to solve
    in this process.

    HiGHS's own limit is set so that it stops before the deadline; when it does not (a step
    that does not look at the clock), its result is lost and ``x`` is ``start``, with the
    status saying so.
    """
    csc = a.tocsc()
    left = deadline.remaining()
    model = {"cost": cost, "indptr": csc.indptr, "indices": csc.indices, "values": csc.data,
             "lo": lo, "hi": hi, "lb": lb, "ub": ub, "integrality": integrality,
             "start": np.asarray(start, dtype=np.float64), "time_limit_s": float(time_limit_s),
             "heuristic_effort": float(heuristic_effort), "end_epoch": time.time() + left,
             "margin_s": HIGHS_WRITE_MARGIN_S}
    try:
        child = subprocess.Popen([sys.executable, _WORKER], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        _log.info("no process for HiGHS (%s); solving here", exc)
        return None
    # communicate() retried after a timeout never sends the rest of its input (CPython
    # 3.11), and the model is larger than a pipe: a thread sends it, communicate() reads
    sender = threading.Thread(target=_send_and_close, daemon=True, args=(
        child.stdin, pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)))
    child.stdin = None
    sender.start()
    begun = time.perf_counter()
    budget = min(float(time_limit_s), left)
    stopped = False
    try:
        while True:
            wait = max(0.0, min(HIGHS_POLL_S, deadline.remaining()))
            try:
                out, err = child.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                pass
            if deadline.remaining() <= 0:
                child.kill()
                out, err = child.communicate()
                stopped = True
                break
            if progress is not None:
                _solver_progress(progress, begun, budget)
    finally:  # an interruption: HiGHS ignores signals while it solves, so it is killed
        if child.poll() is None:
            child.kill()
            child.wait()
    if err.strip():
        _log.debug("solver output:\n%s", err.decode("utf-8", errors="replace").strip())
    if stopped:
        return {"x": np.asarray(start, dtype=np.float64),
                "status": "time limit reached (HiGHS stopped at the deadline)",
                "dual_bound": None, "gap": None, "started": True,
                "api": "HiGHS (in a child process, stopped at the deadline: it looks at its "
                       "own time limit only between steps)"}
    try:
        result = pickle.loads(out) if out else {"error": f"exit code {child.returncode}"}
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        result = {"error": f"unreadable result ({exc})"}
    if "error" in result:
        _log.info("HiGHS in a child process failed (%s); solving here", result["error"])
        return None
    return result


def _send_and_close(pipe: IO[bytes], payload: bytes) -> None:
    """Write ``payload`` to a child's input and close it; a child killed first ends it."""
    with contextlib.suppress(OSError), pipe:
        pipe.write(payload)


_WORKER = str(Path(__file__).with_name("_highs_worker.py"))


def milp_schedule(threads: np.ndarray, times: np.ndarray, dc: DataCenter, *,
                  time_limit_s: float = 60.0, upper_bound_s: float | None = None,
                  start_schedule: tuple[np.ndarray, np.ndarray] | None = None,
                  d: float | None = None, formulation: str = "compact",
                  heuristic_effort: float = 0.05, stop_at_bound: bool = True,
                  deadline: Deadline | None = None, progress: Progress = None) -> Plan:
    """Section 5.2.1: minimize the makespan C with HiGHS.

    ``formulation``: ``"compact"`` (default, :func:`_milp_compact`: the same schedules,
    a third of the rows, tighter big constants, identical tasks ordered) or ``"thesis"``
    (the constraints exactly as printed, per server: :func:`_milp_thesis`).
    ``heuristic_effort`` is HiGHS's ``mip_heuristic_effort`` (its default, 0.05).

    ``d`` is the thesis's small delay that replaces strict inequalities (d < min t / 2); our
    default 1e-4 x the upper bound, capped at min t / 4: large against the solver's
    feasibility and integrality tolerances (1e-6) times X, so no separation is faked, and
    small enough that the d gaps cost little; the simulator drops them anyway (each server
    starts its next task as soon as the cores are free). The upper bound
    (``upper_bound_s``, default and at most the Longest-Task-First list schedule's
    makespan, plus n d for the gaps) bounds C and sets X. The solver starts from
    ``start_schedule`` (start times and servers of a schedule on ``times``; default the
    Longest-Task-First first-fit list schedule), so it returns that schedule or a better
    one (see :func:`_highs_solve`). When the start already ends at the lower bound
    (:func:`~phasekit.schedule.datacenter.lower_bound`) it is optimal and HiGHS is not run
    (``stop_at_bound=False`` runs it anyway, to check the model); ``info["solver"]`` says so.
    With a ``deadline`` (:class:`~phasekit.schedule.budget.Deadline`) HiGHS gets at most
    what is left of it when it starts (``info["time_limit_s"]``) and runs in a process of
    its own, stopped at the deadline if it has not stopped itself (it looks at its own limit
    only between steps, some of which take seconds: :mod:`._highs_worker`); it is not run
    when less than :data:`MILP_MIN_SOLVE_S` is left. A solve stopped by time depends on the
    machine.

    ``info``: solver status, the makespan of the start (``start_s``), the one it proved
    (``objective_s``), its lower bound (``dual_bound_s``) and the relative MIP gap in
    percent. The plan keeps each task's server and the order of the start times; when no
    feasible schedule is known at the end (no start could be built and the solver found
    none) it is the start schedule's, said in ``info["fallback"]``.
    """
    threads = kernel_array(threads, np.int64)
    times = kernel_array(times, np.float64)
    n = times.size
    if formulation not in MILP_FORMULATIONS:
        raise UsageError(f"expected one of {', '.join(MILP_FORMULATIONS)}",
                         parameter="formulation", value=formulation)
    if not 0 <= heuristic_effort <= 1:
        raise UsageError("expected a number in [0, 1]", parameter="heuristic_effort",
                         value=heuristic_effort)
    if not milp_fits(n, dc, formulation):
        raise UsageError("the MILP is too large: " + milp_size_text(n, dc, formulation)
                         + "; plan with the annealing (sa) or the heuristic instead (the "
                         "thesis uses only those on its large scenario)")
    if not (time_limit_s > 0):
        raise UsageError("expected a positive number of seconds", parameter="time_limit_s",
                         value=time_limit_s)
    ltf = Plan(policy="ltf", kind="list", order=np.argsort(-times, kind="stable")
               .astype(np.int64), rule="first_fit")
    ltf_span = float(list_makespan(ltf.order, threads, times, np.zeros(n), dc.servers,
                                   dc.cores, RULES["first_fit"]))
    upper = ltf_span if upper_bound_s is None else min(float(upper_bound_s), ltf_span)
    if d is None:
        d = min(1e-4 * upper, float(times.min()) / 4)
    if not (0 < d < float(times.min()) / 2):
        raise UsageError(f"expected 0 < d < min t / 2 = {float(times.min()) / 2:g}",
                         parameter="d", value=d)
    started = time.perf_counter()
    if start_schedule is None:
        s0, srv0 = execute_arrays(ltf, threads, times, np.zeros(n), dc)
    else:
        s0 = np.asarray(start_schedule[0], dtype=np.float64)
        srv0 = np.asarray(start_schedule[1], dtype=np.int64)
    start_span = float((s0 + times).max())

    def unsolved(start: np.ndarray, server: np.ndarray) -> Plan:
        """The start schedule, judged against the lower bound: no time was left for HiGHS."""
        floor_ = lower_bound(threads, times, dc)
        at_bound = start_span <= floor_ * (1 + 1e-12)
        reason = "no time was left within the time limit"
        return Plan(policy="milp", kind="per_server",
                    order=np.lexsort((np.arange(n), start)).astype(np.int64), server=server,
                    planned_start=start, info={
                        "status": "optimal" if at_bound else "time limit reached",
                        "solver": f"not run: {reason}", "time_limit_s": 0.0,
                        "solve_time_s": time.perf_counter() - started, "d_s": None,
                        "upper_bound_s": upper, "start_s": start_span,
                        "formulation": formulation, "heuristic_effort": heuristic_effort,
                        "objective_s": start_span, "dual_bound_s": floor_,
                        "gap_percent": (max(0.0, 100.0 * (start_span - floor_) / start_span)
                                        if start_span > 0 else None),
                        "fallback": None if at_bound else
                        f"MILP not solved: {reason}; its plan is the start schedule's"})

    if deadline is not None and deadline.remaining() < MILP_MIN_SOLVE_S:  # not even a model
        return unsolved(s0, srv0)
    upper = max(upper, start_span)
    upper_model = upper + (n + 1) * d  # room for the d gaps of a schedule of makespan upper
    kind = _kinds(threads, times)
    if formulation == "compact":
        s0, srv0 = _relabel_identical(s0, srv0, kind)
    if progress is not None:
        progress(f"MILP, building the model ({formulation} form)", 0.0)
    cost, a, lo, hi, lb, ub, integrality, idx = _milp_model(threads, times, dc, upper_model, d,
                                                            kind, formulation)
    i_tau, i_c, i_z, _, _, _, nvar, nrows = idx
    box: dict[str, Any] = {}
    solver_limit = float(time_limit_s)

    def solve() -> None:
        try:
            box["res"] = _highs_solve(cost, a, lo, hi, lb, ub, integrality, solver_limit, x0,
                                      heuristic_effort)
        except Exception as exc:  # re-raised below, in the caller's thread
            box["error"] = exc

    floor = float(lb[i_c])
    with solver_output_to_log():  # HiGHS (the start's LP, the MILP) prints to fd 1
        x0 = _mip_start(s0, srv0, threads, times, dc, d, upper_model, idx, kind)
        if x0 is not None:
            viol = max(float(np.max(lo - a @ x0, initial=0.0)),
                       float(np.max(a @ x0 - hi, initial=0.0)))
            viol = max(viol, float(np.max(lb - x0)), float(np.max(x0 - ub)))
            if viol > 1e-6 * upper_model:
                x0 = None
        if deadline is not None:
            solver_limit = min(solver_limit, deadline.remaining())
        if stop_at_bound and x0 is not None and start_span <= floor * (1 + 1e-12):
            # the start ends at the lower bound: it is optimal, HiGHS has nothing to find
            box["res"] = {"x": None, "status": "optimal", "dual_bound": floor, "gap": 0.0,
                          "started": True,
                          "api": "none: the start schedule ends at the lower bound"}
        elif deadline is not None and solver_limit < MILP_MIN_SOLVE_S:
            box["unsolved"] = True
        elif deadline is not None and x0 is not None and (res := _highs_in_child(
                cost, a, lo, hi, lb, ub, integrality, solver_limit, x0, heuristic_effort,
                deadline, progress)) is not None:
            box["res"] = res
        elif deadline is not None and (solver_limit := min(
                solver_limit, deadline.remaining())) < MILP_MIN_SOLVE_S:
            box["unsolved"] = True  # the child failed and took what time there was
        elif progress is None:
            solve()
        else:
            _solve_with_progress(solve, solver_limit, progress)
    if "error" in box:
        raise box["error"]
    if "unsolved" in box:
        return unsolved(s0, srv0)
    res = box["res"]
    runtime = time.perf_counter() - started
    info: dict[str, Any] = {
        "status": res["status"], "solver": res["api"],
        "time_limit_s": max(solver_limit, 0.0),
        "solve_time_s": runtime, "d_s": d, "big_x": upper_model + d,
        "upper_bound_s": upper, "start_s": start_span if x0 is not None else None,
        "formulation": formulation, "heuristic_effort": heuristic_effort,
        "variables": nvar, "binaries": int(integrality.sum()), "constraints": nrows,
        "objective_s": None, "dual_bound_s": res["dual_bound"], "gap_percent": None,
        "fallback": None}
    x = res["x"]
    if x is None and res["api"].startswith("none"):
        info.update(objective_s=start_span, dual_bound_s=floor, gap_percent=0.0)
        return Plan(policy="milp", kind="per_server",
                    order=np.lexsort((np.arange(n), s0)).astype(np.int64), server=srv0,
                    planned_start=s0, info=info)
    if x is None:
        info["fallback"] = (f"MILP found no feasible schedule within {solver_limit:.3g} s "
                            f"({info['status']}); its plan is the start schedule's")
        return Plan(policy="milp", kind="per_server",
                    order=np.lexsort((np.arange(n), s0)).astype(np.int64), server=srv0,
                    planned_start=s0, info=info)
    tau = np.maximum(x[i_tau:i_tau + n], 0.0)
    z = x[i_z:i_z + n * dc.servers].reshape(n, dc.servers)
    server = np.argmax(z, axis=1).astype(np.int64)
    objective = float(x[i_c])
    info["objective_s"] = objective
    # the solver's bound, or ours (longest task, total work / cores) when it has none yet
    dual = res["dual_bound"]
    dual = float(dual) if dual is not None and math.isfinite(dual) else -math.inf
    info["dual_bound_s"] = max(dual, float(lb[i_c]))
    if objective > 0:
        info["gap_percent"] = max(0.0, 100.0 * (objective - info["dual_bound_s"]) / objective)
    order = np.lexsort((np.arange(n), tau)).astype(np.int64)
    return Plan(policy="milp", kind="per_server", order=order, server=server,
                planned_start=tau, info=info)


def _solve_with_progress(solve: Callable[[], None], time_limit_s: float,
                         progress: Callable[[str, float], None]) -> None:
    """Run ``solve`` in a thread and report the solver's time against its limit.

    The clock starts when the solver does (the model is built by then), so the label
    never counts past the limit: HiGHS checks its clock between steps and may run a little
    over, which the label then says instead of counting on ("61 of 60 s").
    """
    worker = threading.Thread(target=solve, daemon=True)
    begun = time.perf_counter()
    worker.start()
    while True:
        worker.join(0.25)
        if not worker.is_alive():
            return
        _solver_progress(progress, begun, time_limit_s)


def _solver_progress(progress: Callable[[str, float], None], begun: float,
                     time_limit_s: float) -> None:
    """The solver's time since ``begun`` against its limit, never counting past it."""
    spent = time.perf_counter() - begun
    if spent < time_limit_s:
        progress(f"MILP (HiGHS), {int(spent)} of {time_limit_s:g} s", spent / time_limit_s)
    else:
        progress(f"MILP (HiGHS), {time_limit_s:g} s limit reached, the solver is stopping", 1.0)


_STATUS = {0: "optimal", 1: "time limit reached", 2: "infeasible", 3: "unbounded",
           4: "solver error"}
