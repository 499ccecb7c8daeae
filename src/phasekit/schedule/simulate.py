"""Discrete-event data-center simulator (Salinas Hilburg 2020, section 5.3.1) and policy comparison.

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

Dispatchers (:mod:`phasekit.schedule.dispatch`): ``list`` with rule ``first_fit`` (round robin,
annealing) or ``least_energy`` (the heuristic), and ``per_server`` (the MILP). The data center
and the plans are in :mod:`phasekit.schedule.datacenter`; this module executes plans and
compares policies.

Oracle vs estimated (section 5.1): a policy plans with the times and powers it is given
(the truth, or estimates with the signature's errors), and the plan is then executed on the
true times and powers: completions happen when the tasks really end.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.options import Options, Rule
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.schedule.batch import Batch
from phasekit.schedule.budget import Deadline
from phasekit.schedule.datacenter import (
    BOUND_MAX_K,
    DataCenter,
    Execution,
    Plan,
    dual_feasible,
    lower_bound,
)
from phasekit.schedule.dispatch import execute_arrays, list_schedule, plan_schedule
from phasekit.schedule.registry import BASELINE, POLICIES, PlanRequest, requested_policies

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "BOUND_MAX_K",
    "RESULT_VERSION",
    "DataCenter",
    "Execution",
    "Plan",
    "PolicyResult",
    "ScheduleOptions",
    "ScheduleResult",
    "dual_feasible",
    "execute",
    "list_schedule",
    "lower_bound",
    "plan_schedule",
    "schedule_batch",
]

RESULT_VERSION = 1


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
    # np.sum, not np.dot: BLAS sums in an order that depends on the CPU (the energies'
    # last digits did), numpy's pairwise sum in one fixed order
    energy_it = dc.servers * dc.static_w * makespan + float(np.sum(power * times))
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
class ScheduleResult(Result):
    """Policies compared on one batch in one data center (Salinas Hilburg 2020, Table 5.1).

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

    KIND: ClassVar[str] = "schedule"

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

    def __repr__(self) -> str:
        return short_repr(
            self, f"{self.n_tasks} tasks",
            f"{self.datacenter.servers} servers x {self.datacenter.cores} cores",
            *(f"{p.policy} {p.makespan_s:.4g} s {p.energy_j:.4g} J" for p in self.policies[:4]))

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

    def summary(self) -> pd.DataFrame:
        """The table ``phasekit schedule`` prints: one row per policy, its makespan (s),
        energy (J, with the PUE; ``energy_it_j`` without), saving against round robin (%),
        planned makespan and the time the policy took to plan (s)."""
        import pandas as pd

        columns = ["policy", "makespan_s", "energy_j", "saving_vs_rr", "energy_it_j",
                   "planned_makespan_s", "runtime_s"]
        return pd.DataFrame([{k: p.summary()[k] for k in columns} for p in self.policies],
                            columns=columns)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the policy that saves the most against round robin), the table of
        policies (``name``: the batch) and the notes (:mod:`phasekit.schedule.present`)."""
        from phasekit.schedule.present import presentation

        return presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The figure of ``phasekit schedule --plot``: a Gantt chart per policy and the
        data-center power; on ``ax``, the power of every policy over time."""
        from phasekit.plot.common import root_figure
        from phasekit.plot.schedule import draw_power, schedule_figure

        if ax is None:
            return schedule_figure(self)
        draw_power(ax, self)
        return root_figure(ax)


#: The largest fraction :func:`schedule_batch` reports before it returns.
PROGRESS_CAP = 0.99
#: Seconds of the time limit kept for running the plans and reporting them after the MILP
#: (our measure on 66 and 900 tasks: running a plan 0.3-2.5 ms, the result as JSON 3-35 ms).
FINISH_RESERVE_S = 0.25
#: Compile time (s) beyond which the result notes that numba compiled the kernels first.
COMPILE_NOTE_S = 0.5
#: Seconds a comparison of policies may take when no limit is given (ours).
TIME_LIMIT_S = 60.0


@dataclass(frozen=True)
class ScheduleOptions(Options):
    """The tuning parameters of scheduling a batch (:func:`phasekit.schedule.api.schedule`),
    declared and checked once: ``schedule(batch, options=ScheduleOptions(servers=5,
    cores=12, policies="sa", seed=3))`` or, equally, ``schedule(batch, servers=5, cores=12,
    policies="sa", seed=3)``.

    ``servers`` x ``cores``: the data center (:class:`DataCenter`, the thesis's static power
    and PUE), required to schedule (:attr:`datacenter`). ``policies``: a registered policy's name, names, or "all"
    (:data:`~phasekit.schedule.registry.POLICIES`). ``seed``: the annealing's.
    ``time_limit_s`` bounds the whole comparison (60 s, ours), less ``reserve_s``
    (:data:`FINISH_RESERVE_S`) for running and reporting the plans and ``extra_reserve_s``
    for the caller's own use of the result (e.g. drawing its figure).
    ``sa_iterations`` caps the annealing's temperature levels (None: as many as its share of
    the limit allows, :func:`~phasekit.schedule.policies.simulated_annealing`). A value out
    of range or an unknown policy is a :class:`~phasekit.errors.UsageError` naming the
    parameter (``policies`` is ``--policy`` on the command line, ``time_limit_s``
    ``--time-limit``).
    """

    FLAGS: ClassVar[Mapping[str, str]] = {"policies": "--policy", "time_limit_s": "--time-limit"}

    servers: int | None = None
    cores: int | None = None
    policies: str | tuple[str, ...] = "all"
    seed: int = 0
    time_limit_s: float = TIME_LIMIT_S
    sa_iterations: int | None = None
    reserve_s: float = FINISH_RESERVE_S
    extra_reserve_s: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.policies, str):  # names as a tuple: the options are a value
            with contextlib.suppress(TypeError):  # not names: rules() says so
                object.__setattr__(self, "policies", tuple(self.policies))
        super().__post_init__()

    @property
    def datacenter(self) -> DataCenter:
        """The data center: ``servers`` x ``cores``; UsageError naming the one not given."""
        if self.servers is None:
            raise UsageError("expected the number of servers (the data center to schedule "
                             "on)", parameter="servers")
        if self.cores is None:
            raise UsageError("expected the cores per server (the data center to schedule on)",
                             parameter="cores")
        return DataCenter(servers=self.servers, cores=self.cores)

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        given = self.policies
        asked = ([given] if isinstance(given, str) and given != "all"
                 else list(given) if isinstance(given, tuple) else [])
        unknown = [name for name in asked if name not in POLICIES]
        which = f" {unknown[0]!r}" if unknown and isinstance(given, tuple) else ""
        names = isinstance(given, str | tuple)

        def seconds(value: float) -> bool:
            return math.isfinite(value) and value >= 0

        return [
            ("servers", self.servers is None or self.servers >= 1,
             "the data center needs at least one server"),
            ("cores", self.cores is None or self.cores >= 1, "a server needs at least one core"),
            ("policies", names and not unknown,
             f"unknown policy{which}; expected one of {', '.join(POLICIES)} or all"),
            ("time_limit_s", math.isfinite(self.time_limit_s) and self.time_limit_s > 0,
             "expected a positive number of seconds"),
            ("sa_iterations", self.sa_iterations is None or self.sa_iterations >= 1,
             "the annealing needs at least one temperature level"),
            ("reserve_s", seconds(self.reserve_s), "expected a number of seconds >= 0"),
            ("extra_reserve_s", seconds(self.extra_reserve_s),
             "expected a number of seconds >= 0"),
        ]


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


def schedule_batch(batch: Batch, dc: DataCenter, *, policies: Sequence[str] | str = "all",
                   estimated: tuple[str, str | None] | None = None, seed: int = 0,
                   time_limit_s: float = TIME_LIMIT_S, sa_iterations: int | None = None,
                   progress: Callable[[str, float], None] | None = None,
                   started: float | None = None,
                   reserve_s: float = FINISH_RESERVE_S) -> ScheduleResult:
    """Plan ``batch`` with each policy, execute the plans on the true times, compare energy.

    ``policies``: a name, names, or ``"all"``, of the registered policies
    (:data:`~phasekit.schedule.registry.POLICIES`: ``rr``, ``heuristic``, ``sa``, ``milp``,
    then any plug-in), run and listed in the registry's order; ``"all"`` leaves out, with
    a note, a policy that cannot take the batch (the MILP when its model would be too
    large: the thesis's "MILP does not scale"). ``estimated``: ``(time column, power
    column or None)`` of the batch to plan with instead of the truth (the power column
    defaults to the true power). ``seed`` makes the annealing reproducible. ``progress(stage, fraction)`` is called
    during long-running policies (see :func:`_share_of_bar`). Round robin always runs: it
    is ``baseline``, the reference of every saving. A value out of range or an unknown policy
    is the :class:`ScheduleOptions` UsageError (``dc`` gives its ``servers`` and ``cores``).

    ``time_limit_s`` bounds the whole comparison, counted from ``started`` (a
    ``time.perf_counter()`` reading; default: the call; ``phasekit schedule`` gives its
    process's start) with ``reserve_s`` kept for running the plans and reporting them:

    - each long-running policy gets its share of the limit (``PlanRequest.budget_s``): the
      annealing the work of half the limit when the MILP runs too, else all of it,
      counted in temperature levels at an assumed speed
      (:func:`~phasekit.schedule.policies.sa_levels_within`), so the same seed and limit
      give the same plan on every machine; the clock stops it only past the deadline
      (a machine far slower than assumed), which its ``info["stopped"]`` then says;
    - the MILP solver gets what is left when it starts (a solve stopped by time depends
      on the machine: HiGHS's ``info["status"]`` says "time limit reached").

    Time numba spends compiling kernels (where their cache cannot be used) is not counted
    (:class:`~phasekit.schedule.budget.Deadline`); a note then says how long it took.
    """
    ScheduleOptions(servers=dc.servers, cores=dc.cores, policies=policies, seed=seed,
                    time_limit_s=time_limit_s, sa_iterations=sa_iterations,
                    reserve_s=reserve_s)  # the checks of every option
    deadline = Deadline(time_limit_s, started=started, reserve_s=reserve_s)
    report = progress  # the caller's bar; each long policy gets a share (_share_of_bar)

    batch.check_fits(dc.cores)
    notes: list[str] = []
    names = requested_policies(policies)
    if isinstance(policies, str) and policies == "all":
        for name in list(names):
            reason = POLICIES[name].left_out(len(batch), dc)
            if reason is not None:
                names.remove(name)
                notes.append(reason)
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

    long_running = [n for n in names if POLICIES[n].long_running]
    results: dict[str, PolicyResult] = {}
    planned: dict[str, Execution] = {}

    def run(name: str) -> tuple[Plan, float]:
        policy = POLICIES[name]
        budget = time_limit_s / len(long_running) if policy.long_running else time_limit_s
        request = PlanRequest(batch=batch, dc=dc, threads=threads, time_s=plan_time,
                              power_w=plan_power, seed=seed, time_limit_s=time_limit_s,
                              budget_s=budget, deadline=deadline,
                              progress=_share_of_bar(report, long_running, name),
                              iterations=sa_iterations, planned=dict(planned), notes=notes)
        started = time.perf_counter()
        plan = policy.plan(request)
        return plan, time.perf_counter() - started

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

    with deadline:  # numba's compile time is not counted
        baseline = evaluate(BASELINE, *run(BASELINE), None)
        for name in names:
            results[name] = (baseline if name == BASELINE
                             else evaluate(name, *run(name), baseline.energy_j))
    if deadline.compiled_s > COMPILE_NOTE_S:
        notes.append(f"numba compiled the scheduling kernels first ({deadline.compiled_s:.1f} s, "
                     "not counted in the time limit): no usable compiled copy was found; "
                     "'python -m phasekit.warmup' compiles them once for every later run")
    return ScheduleResult(datacenter=dc, n_tasks=len(batch), planned_with=planned_with,
                          policies=tuple(results.values()),
                          baseline=baseline,
                          lower_bound_s=lower_bound(threads, batch.time_s, dc),
                          notes=tuple(notes), names=batch.names)
