"""Scheduling policies of seed 004, chapter 5: round robin, LTF energy-aware heuristic,
simulated annealing and a MILP minimizing the makespan.

Each policy returns a :class:`~phasekit.schedule.simulate.Plan`, which the simulator executes
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
  choices are in the function's docstring.
- :func:`milp_schedule` (section 5.2.1, after Goldman & Ngoko): start times tau, server
  assignment z, "j is running when k ends" x and its side y, capacity at every task's end,
  makespan C; solved with HiGHS through :func:`scipy.optimize.milp` within a time limit,
  its MIP gap reported.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from phasekit.errors import UsageError
from phasekit.schedule.simulate import (
    RULES,
    DataCenter,
    Plan,
    _list_makespan,
    lower_bound,
)

__all__ = [
    "MILP_MAX_ROWS",
    "SA_COOLING",
    "SA_EVALUATIONS",
    "SA_ITERATIONS",
    "SA_MAX_LEVELS",
    "ltf_heuristic",
    "milp_fits",
    "milp_schedule",
    "milp_size_text",
    "round_robin",
    "simulated_annealing",
]

Progress = Callable[[str, float], None] | None


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
SA_START_ACCEPT = 0.25


@njit(cache=True)
def _anneal_level(order: np.ndarray, current: float, best_order: np.ndarray, best: float,
                  temp: float, t0: float, swaps0: float, n_moves: int, threads: np.ndarray,
                  times: np.ndarray, power: np.ndarray, n_servers: int, cores: int,
                  seed: int) -> tuple[float, float, int]:
    """One temperature level of Algorithm 3: ``n_moves`` trial orders (Algorithm 4)."""
    np.random.seed(seed)
    n = order.size
    cand = order.copy()
    accepted = 0
    swaps = math.floor(swaps0 * temp / t0 + 0.5)
    if swaps < 1:
        swaps = 1
    for _ in range(n_moves):
        cand[:] = order
        for _s in range(swaps):
            r1 = np.random.randint(0, n)
            r2 = np.random.randint(0, n)
            tmp = cand[r1]
            cand[r1] = cand[r2]
            cand[r2] = tmp
        c = _list_makespan(cand, threads, times, power, n_servers, cores, 0)
        delta = c - current
        take = delta < 0
        if not take:
            z = delta / temp
            if z < 700.0:
                take = np.random.random() < 1.0 / (1.0 + math.exp(z))
        if take:
            order[:] = cand
            current = c
            accepted += 1
            if c < best:
                best = c
                best_order[:] = cand
    return current, best, accepted


def simulated_annealing(threads: np.ndarray, times: np.ndarray, dc: DataCenter, *,
                        seed: int = 0, iterations: int | None = None,
                        cooling: float = SA_COOLING, t0: float | None = None,
                        swaps0: float | None = None, init: str = "ltf",
                        start_accept: float = SA_START_ACCEPT,
                        moves_per_level: int | None = None, time_limit_s: float | None = None,
                        progress: Progress = None) -> Plan:
    """Algorithms 3-5: anneal the batch order against the first-fit list makespan.

    Thesis: ``moves_per_level`` = n trial orders per temperature (inner loop of Algorithm 3),
    T = T0 x ``cooling``^k with ``cooling`` = 0.95, acceptance 1 / (1 + exp(delta / T)),
    swaps per move proportional to T. Our choices, where the thesis gives no value:

    - ``iterations`` (temperature levels): by default as many as 50 000 list schedules
      allow, between 60 and 1000: 757 levels for the small scenario's 66 tasks (under a
      second; it keeps improving up to several hundred levels) and 60 for the large one's
      900 (54 000 schedules, about 17 s on one core against the issue's 30 s target; 150
      levels found no better order there). Below a few percent of T0 the rule still takes
      equal moves with probability 0.5, so the frozen tail is a random walk on the plateau
      that keeps any improvement;
    - ``t0`` (seconds of makespan): the median worsening of 100 random single swaps of the
      initial order divided by ln 3, so a typical worse move is accepted with probability
      0.25 at the start (the rule never accepts one with more than 0.5);
    - ``swaps0`` = max(2, n / 30) swaps per move at T0, scaled by T / T0 and at least 1
      (Algorithm 4 loops "for i = 1:Temp", mixing units; we keep the proportionality);
    - ``init`` = ``"ltf"``: start from the Longest-Task-First order, or ``"arrival"`` as the
      thesis (from the arrival order). Starting from LTF costs nothing and puts the long
      tasks first, which the thesis's results suggest the annealing ends up doing anyway;
    - the best order seen is returned (Algorithm 3 returns its last state, which can be
      worse); ``time_limit_s`` stops the cooling early, said in ``info``.

    Reproducible: the same ``seed`` gives the same order (one numba random stream per
    temperature level, seeded from ``seed``).
    """
    threads = np.ascontiguousarray(threads, dtype=np.int64)
    times = np.ascontiguousarray(times, dtype=np.float64)
    n = times.size
    if iterations is None:
        iterations = max(SA_ITERATIONS, min(SA_MAX_LEVELS, SA_EVALUATIONS // max(n, 1)))
    if iterations < 1:
        raise UsageError(f"annealing needs at least one temperature level, not {iterations}")
    if not 0 < cooling < 1:
        raise UsageError(f"cooling factor {cooling}: expected a number in (0, 1)")
    if init not in ("ltf", "arrival"):
        raise UsageError(f"init {init!r}: expected 'ltf' or 'arrival'")
    power = np.zeros(n)
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    level_seeds = rng.integers(0, 2**31 - 1, size=iterations + 1)
    order = (np.argsort(-times, kind="stable") if init == "ltf"
             else np.arange(n)).astype(np.int64)
    current = float(_list_makespan(order, threads, times, power, dc.servers, dc.cores, 0))
    initial = current
    floor = lower_bound(threads, times, dc)
    if t0 is None:
        deltas = []
        for _ in range(100 if n > 1 else 0):
            r1, r2 = rng.integers(0, n, size=2)
            trial = order.copy()
            trial[[r1, r2]] = trial[[r2, r1]]
            deltas.append(_list_makespan(trial, threads, times, power, dc.servers, dc.cores, 0)
                          - current)
        worse = [d for d in deltas if d > 0]
        if not 0 < start_accept < 0.5:
            raise UsageError(f"start_accept {start_accept}: expected a probability in (0, 0.5)")
        t0 = (float(np.median(worse)) / math.log(1 / start_accept - 1) if worse
              else 1e-3 * max(current, 1e-9))
    if not (t0 > 0 and math.isfinite(t0)):
        raise UsageError(f"initial temperature {t0}: expected a positive number")
    swaps0 = float(max(2.0, n / 30.0) if swaps0 is None else swaps0)
    n_moves = int(n if moves_per_level is None else moves_per_level)
    best_order = order.copy()
    best = current
    accepted = 0
    levels = 0
    stopped = None
    for k in range(iterations):
        if n <= 1 or best <= floor * (1 + 1e-12):
            stopped = "reached the lower bound (longest task or total work / cores)"
            break
        temp = t0 * cooling ** k
        current, best, acc = _anneal_level(order, current, best_order, best, temp, t0,
                                           swaps0, n_moves, threads, times, power,
                                           dc.servers, dc.cores, int(level_seeds[k]))
        accepted += acc
        levels += 1
        if progress is not None:
            progress(f"annealing, makespan {best:.6g} s", (k + 1) / iterations)
        if time_limit_s is not None and time.perf_counter() - started > time_limit_s:
            if k + 1 < iterations:
                stopped = f"time limit {time_limit_s:g} s after {k + 1} of {iterations} levels"
            break
    info: dict[str, Any] = {
        "seed": seed, "init": init, "t0": t0, "cooling": cooling, "levels": levels,
        "iterations": iterations, "moves_per_level": n_moves, "swaps0": swaps0,
        "evaluations": levels * n_moves, "accepted": accepted,
        "initial_makespan_s": initial, "best_planned_makespan_s": best,
        "final_temperature": t0 * cooling ** max(levels - 1, 0),
        "stopped": stopped}
    return Plan(policy="sa", kind="list", order=best_order, rule="first_fit", info=info)


# --- MILP ------------------------------------------------------------------------------------
#: The largest MILP we build (rows of constraints 5-8: 4 n (n - 1) servers).
MILP_MAX_ROWS = 1_500_000


def _milp_rows(n: int, dc: DataCenter) -> int:
    return 4 * n * (n - 1) * dc.servers


def milp_fits(n: int, dc: DataCenter) -> bool:
    return _milp_rows(n, dc) <= MILP_MAX_ROWS


def milp_size_text(n: int, dc: DataCenter) -> str:
    return (f"{n} tasks on {dc.servers} servers need {_milp_rows(n, dc):,} overlap "
            f"constraints and {2 * n * (n - 1):,} binaries (limit {MILP_MAX_ROWS:,} rows)")


def _milp_model(threads: np.ndarray, times: np.ndarray, dc: DataCenter, upper: float,
                d: float) -> tuple[Any, ...]:
    """The thesis's formulation (section 5.2.1) as sparse arrays for scipy.optimize.milp.

    Variables: tau (n), C, z (n x m), x and y (one per ordered pair k != j). Our additions,
    all valid for every optimal schedule: tau_k + t_k <= C <= ``upper`` (an upper bound from
    a list schedule), which lets the big constant be X = upper + d instead of > sum t; task k
    only on servers 0..k (identical servers: symmetry breaking); and the work bound
    C >= sum_k c_k t_k z_ki / cores per server, so the reported gap means something.
    """
    from scipy.sparse import coo_matrix

    n, m, cap = times.size, dc.servers, dc.cores
    pairs_k, pairs_j = np.nonzero(~np.eye(n, dtype=bool))
    npairs = pairs_k.size
    i_tau, i_c = 0, n
    i_z = n + 1
    i_x = i_z + n * m
    i_y = i_x + npairs
    nvar = i_y + npairs
    big = upper + d
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    row = 0

    def add(entries: list[tuple[np.ndarray, float | np.ndarray]], lower: np.ndarray,
            upper_: np.ndarray) -> None:
        nonlocal row
        count = lower.size
        r = row + np.arange(count)
        for col, val in entries:
            rows.append(r)
            cols.append(np.broadcast_to(col, (count,)).astype(np.int64))
            vals.append(np.broadcast_to(np.asarray(val, dtype=float), (count,)))
        lo.append(lower)
        hi.append(upper_)
        row += count

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
    # (9) sum_j c_j x_kj <= c_server - c_k
    rows.append(row + pairs_k)
    cols.append(i_x + np.arange(npairs))
    vals.append(threads[pairs_j].astype(float))
    lo.append(np.full(n, -np.inf))
    hi.append((cap - threads).astype(float))
    row += n
    # (10) tau_k + t_k <= C
    add([(i_tau + np.arange(n), 1.0), (np.full(n, i_c), -1.0)], np.full(n, -np.inf), -times)
    # (4) sum_i z_ki = 1
    rows.append(row + np.repeat(np.arange(n), m))
    cols.append(i_z + np.arange(n * m))
    vals.append(np.ones(n * m))
    lo.append(np.ones(n))
    hi.append(np.ones(n))
    row += n
    # work bound per server: cores C - sum_k c_k t_k z_ki >= 0
    rows.append(row + np.tile(np.arange(m), n))
    cols.append(i_z + np.arange(n * m))
    vals.append(-np.repeat(threads * times, m))
    rows.append(row + np.arange(m))
    cols.append(np.full(m, i_c))
    vals.append(np.full(m, float(cap)))
    lo.append(np.zeros(m))
    hi.append(np.full(m, np.inf))
    row += m
    a = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                   shape=(row, nvar)).tocsr()
    lb = np.zeros(nvar)
    ub = np.ones(nvar)
    ub[i_tau:i_tau + n] = np.maximum(upper - times, 0.0)
    lb[i_c] = lower_bound(threads, times, dc)
    ub[i_c] = upper
    zmask = np.arange(m)[None, :] > np.arange(n)[:, None]  # task k only on servers 0..k
    ub[i_z:i_z + n * m][zmask.ravel()] = 0.0
    integrality = np.zeros(nvar)
    integrality[i_z:] = 1
    cost = np.zeros(nvar)
    cost[i_c] = 1.0
    return cost, a, np.concatenate(lo), np.concatenate(hi), lb, ub, integrality, (
        i_tau, i_c, i_z, i_x, i_y, nvar, row)


def _mip_start(start: np.ndarray, server: np.ndarray, threads: np.ndarray, times: np.ndarray,
               dc: DataCenter, d: float, upper_model: float, idx: tuple[int, ...]
               ) -> np.ndarray | None:
    """A feasible point of the MILP from a real schedule (start times and servers), or None.

    x, y and z follow from the schedule; the start times are then re-solved as an LP with
    those binaries fixed, which opens the d gaps the formulation wants between tasks that
    touch (a task starting exactly when another ends).
    """
    from scipy.optimize import linprog

    i_tau, i_c, i_z, i_x, i_y, nvar, _ = idx
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
    return x


def _highs_solve(cost: np.ndarray, a: Any, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray,
                 ub: np.ndarray, integrality: np.ndarray, time_limit_s: float,
                 start: np.ndarray | None) -> dict[str, Any]:
    """Solve with HiGHS, from a MIP start.

    :func:`scipy.optimize.milp` takes no starting solution, and without one HiGHS finds no
    feasible point of this big-M formulation in minutes beyond ~15 tasks. HiGHS's own Python
    binding, ``highspy`` (PyPI, a dependency), takes one (``setSolution``); scipy bundles a
    copy of it (``scipy.optimize._highspy._core``, private), used if ``highspy`` is missing;
    without either, :func:`scipy.optimize.milp` (no start). Same solver, model and options.
    """
    if start is not None:
        try:
            import highspy as h
        except ImportError:
            try:
                from scipy.optimize._highspy import _core as h  # private: guarded
            except ImportError:
                h = None
        if h is not None:
            try:
                return _highs_started(h, cost, a, lo, hi, lb, ub, integrality, time_limit_s,
                                      start)
            except (AttributeError, TypeError) as exc:  # another binding layout
                logging.getLogger(__name__).info("no MIP start (%s); plain milp", exc)
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(cost, integrality=integrality, bounds=Bounds(lb, ub),
               constraints=LinearConstraint(a, lo, hi),
               options={"time_limit": float(time_limit_s), "disp": False})
    return {"x": res.x, "status": _STATUS.get(res.status, str(res.message)),
            "dual_bound": getattr(res, "mip_dual_bound", None),
            "gap": getattr(res, "mip_gap", None), "started": False,
            "api": "HiGHS (scipy.optimize.milp, no MIP start)"}


def _highs_started(h: Any, cost: np.ndarray, a: Any, lo: np.ndarray, hi: np.ndarray,
                   lb: np.ndarray, ub: np.ndarray, integrality: np.ndarray,
                   time_limit_s: float, start: np.ndarray) -> dict[str, Any]:
    """HiGHS through scipy's bundled binding, as scipy's own wrapper calls it, plus a start."""
    csc = a.tocsc()
    lp = h.HighsLp()
    lp.num_col_ = cost.size
    lp.num_row_ = lo.size
    lp.a_matrix_.num_col_ = cost.size
    lp.a_matrix_.num_row_ = lo.size
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.col_cost_ = cost
    lp.col_lower_ = lb
    lp.col_upper_ = ub
    lp.row_lower_ = lo
    lp.row_upper_ = hi
    lp.a_matrix_.start_ = csc.indptr
    lp.a_matrix_.index_ = csc.indices
    lp.a_matrix_.value_ = csc.data
    lp.integrality_ = [h.HighsVarType(int(i)) for i in integrality]
    highs = h.Highs() if hasattr(h, "Highs") else h._Highs()
    options = h.HighsOptions()
    options.time_limit = float(time_limit_s)
    options.output_flag = False
    options.log_to_console = False
    highs.passOptions(options)
    highs.passModel(lp)
    solution = h.HighsSolution()
    solution.col_value = list(start)
    solution.value_valid = True
    highs.setSolution(solution)
    highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    has_x = info.objective_function_value != h.kHighsInf and status in (
        h.HighsModelStatus.kOptimal, h.HighsModelStatus.kTimeLimit,
        h.HighsModelStatus.kIterationLimit, h.HighsModelStatus.kSolutionLimit,
        h.HighsModelStatus.kInterrupt)
    x = np.array(highs.getSolution().col_value) if has_x else None
    names = {h.HighsModelStatus.kOptimal: "optimal",
             h.HighsModelStatus.kTimeLimit: "time limit reached",
             h.HighsModelStatus.kInfeasible: "infeasible"}
    return {"x": x, "status": names.get(status, highs.modelStatusToString(status)),
            "dual_bound": info.mip_dual_bound, "gap": info.mip_gap, "started": True,
            "api": f"HiGHS ({h.__name__}, with a MIP start)"}


def milp_schedule(threads: np.ndarray, times: np.ndarray, dc: DataCenter, *,
                  time_limit_s: float = 60.0, upper_bound_s: float | None = None,
                  start_schedule: tuple[np.ndarray, np.ndarray] | None = None,
                  d: float | None = None,
                  progress: Progress = None) -> Plan:
    """Section 5.2.1: minimize the makespan C with HiGHS.

    ``d`` is the thesis's small delay that replaces strict inequalities (d < min t / 2); our
    default 1e-4 x the upper bound, capped at min t / 4: large against the solver's
    feasibility and integrality tolerances (1e-6) times X, so no separation is faked, and
    small enough that the d gaps cost little; the simulator drops them anyway (each server
    starts its next task as soon as the cores are free). The upper bound
    (``upper_bound_s``, default and at most the Longest-Task-First list schedule's
    makespan, plus n d for the gaps) bounds C and sets X. The solver starts from
    ``start_schedule`` (start times and servers of a schedule on ``times``; default the
    Longest-Task-First first-fit list schedule), so it returns that schedule or a better
    one (see :func:`_highs_solve`).

    ``info``: solver status, the makespan of the start (``start_s``), the one it proved
    (``objective_s``), its lower bound (``dual_bound_s``) and the relative MIP gap in
    percent. The plan keeps each task's server and the order of the start times; when no
    feasible schedule is known at the end (no start could be built and the solver found
    none) it is the start schedule's, said in ``info["fallback"]``.
    """
    from phasekit.schedule.simulate import execute_arrays

    threads = np.ascontiguousarray(threads, dtype=np.int64)
    times = np.ascontiguousarray(times, dtype=np.float64)
    n = times.size
    if not milp_fits(n, dc):
        raise UsageError("the MILP is too large: " + milp_size_text(n, dc)
                         + "; use --policy sa or heuristic (the thesis uses only those on "
                         "its large scenario)")
    if not (time_limit_s > 0):
        raise UsageError(f"MILP time limit {time_limit_s}: expected a positive number of "
                         "seconds")
    ltf = Plan(policy="ltf", kind="list", order=np.argsort(-times, kind="stable")
               .astype(np.int64), rule="first_fit")
    ltf_span = float(_list_makespan(ltf.order, threads, times, np.zeros(n), dc.servers,
                                    dc.cores, RULES["first_fit"]))
    upper = ltf_span if upper_bound_s is None else min(float(upper_bound_s), ltf_span)
    if d is None:
        d = min(1e-4 * upper, float(times.min()) / 4)
    if not (0 < d < float(times.min()) / 2):
        raise UsageError(f"MILP delay d = {d}: expected 0 < d < min t / 2 "
                         f"= {float(times.min()) / 2:g}")
    started = time.perf_counter()
    if start_schedule is None:
        s0, srv0 = execute_arrays(ltf, threads, times, np.zeros(n), dc)
    else:
        s0 = np.asarray(start_schedule[0], dtype=np.float64)
        srv0 = np.asarray(start_schedule[1], dtype=np.int64)
    start_span = float((s0 + times).max())
    upper = max(upper, start_span)
    upper_model = upper + (n + 1) * d  # room for the d gaps of a schedule of makespan upper
    cost, a, lo, hi, lb, ub, integrality, idx = _milp_model(threads, times, dc, upper_model, d)
    i_tau, i_c, i_z, _, _, nvar, nrows = idx
    x0 = _mip_start(s0, srv0, threads, times, dc, d, upper_model, idx)
    if x0 is not None:
        viol = max(float(np.max(lo - a @ x0, initial=0.0)), float(np.max(a @ x0 - hi,
                                                                          initial=0.0)))
        viol = max(viol, float(np.max(lb - x0)), float(np.max(x0 - ub)))
        if viol > 1e-6 * upper_model:
            x0 = None
    box: dict[str, Any] = {}

    def solve() -> None:
        try:
            box["res"] = _highs_solve(cost, a, lo, hi, lb, ub, integrality, time_limit_s, x0)
        except Exception as exc:  # re-raised below, in the caller's thread
            box["error"] = exc

    if progress is None:
        solve()
    else:
        worker = threading.Thread(target=solve, daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.25)
            spent = time.perf_counter() - started
            progress(f"MILP (HiGHS), {spent:.0f} of {time_limit_s:g} s",
                     min(spent / time_limit_s, 1.0))
    if "error" in box:
        raise box["error"]
    res = box["res"]
    runtime = time.perf_counter() - started
    info: dict[str, Any] = {
        "status": res["status"], "solver": res["api"], "time_limit_s": float(time_limit_s),
        "solve_time_s": runtime, "d_s": d, "big_x": upper_model + d,
        "upper_bound_s": upper, "start_s": start_span if x0 is not None else None,
        "variables": nvar, "binaries": int(integrality.sum()), "constraints": nrows,
        "objective_s": None, "dual_bound_s": res["dual_bound"], "gap_percent": None,
        "fallback": None}
    x = res["x"]
    if x is None:
        info["fallback"] = (f"MILP found no feasible schedule within {time_limit_s:g} s "
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


_STATUS = {0: "optimal", 1: "time limit reached", 2: "infeasible", 3: "unbounded",
           4: "solver error"}
