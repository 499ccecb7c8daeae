"""Batch-scheduling policies as plug-ins: the :class:`Policy` base class, the
:data:`POLICIES` registry that :func:`~phasekit.schedule.simulate.schedule_batch` and
``phasekit schedule`` read, and the four policies of Salinas Hilburg 2020, chapter 5.

A policy is a subclass with a ``name``, a one-line ``description`` and :meth:`Policy.plan`,
added to the registry by one line, ``@register_policy``; its ``label`` (default: its name) is
how tables and figures show it, and :meth:`Policy.detail` may say how its run went::

    @register_policy
    class OneServer(Policy):
        name = "one-server"
        label = "one server"
        description = "every task on server 0, in submission order"

        def plan(self, request: PlanRequest) -> Plan:
            n = len(request.time_s)
            return Plan(policy=self.name, kind="per_server", order=np.arange(n),
                        server=np.zeros(n, dtype=np.int64))

The registry's order is the order in which ``"all"`` runs the policies and lists their
results: round robin (the baseline of every saving), the heuristic, the annealing and the
MILP (which starts from the best plan made before it), then plug-ins in the order they were
registered. The four are registered here, next to the registry, so that this order is
written in one place and the registry is complete whenever it can be imported. Their
algorithms stay in :mod:`phasekit.schedule.policies`, which shares the dispatch kernels among
them and is imported when a policy first plans.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from phasekit.errors import UsageError
from phasekit.schedule.datacenter import DataCenter, Execution, Plan

if TYPE_CHECKING:
    from phasekit.schedule.batch import Batch
    from phasekit.schedule.budget import Deadline

__all__ = [
    "BASELINE",
    "POLICIES",
    "PlanRequest",
    "Policy",
    "policy_label",
    "register_policy",
    "requested_policies",
]

#: The policy every saving is measured against (eq. 5.3); it always runs.
BASELINE = "rr"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True, eq=False)
class PlanRequest:
    """What a policy plans with; :func:`~phasekit.schedule.simulate.schedule_batch` makes one
    per policy.

    ``threads``, ``time_s`` and ``power_w`` are per task, the times and powers those the
    comparison plans with (the truth or estimates; every plan is then executed on the
    truth). ``budget_s`` is the policy's share of ``time_limit_s``: the limit over the
    number of long-running policies compared, the whole limit for any other; ``deadline``
    is the whole comparison's clock. ``progress(stage, fraction)`` is a long-running
    policy's share of the progress bar (else None). ``planned`` holds the plans made before
    this one, executed on the planning values; ``iterations`` caps an iterative policy's
    iterations (the annealing's temperature levels; None: its own default).
    """

    batch: Batch
    dc: DataCenter
    threads: np.ndarray
    time_s: np.ndarray
    power_w: np.ndarray
    seed: int = 0
    time_limit_s: float = 60.0
    budget_s: float = 60.0
    deadline: Deadline | None = None
    progress: Callable[[str, float], None] | None = None
    iterations: int | None = None
    planned: Mapping[str, Execution] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add ``text`` to the result's notes."""
        self.notes.append(text)


class Policy(ABC):
    """A batch-scheduling policy: its ``name`` (what ``policies=`` takes), a one-line
    ``description``, and :meth:`plan`; ``label``, how tables and figures name it (default:
    the name). ``long_running`` policies search for as long as they are allowed: they share
    the time limit and the progress bar."""

    name: ClassVar[str]
    description: ClassVar[str]
    label: ClassVar[str] = ""
    long_running: ClassVar[bool] = False

    def detail(self, info: Mapping[str, Any]) -> str | None:
        """One line on how a run of the policy went, from its plan's ``info`` (shown after
        the table of policies as ``label: line``), or None (the default) for nothing."""
        return None

    def left_out(self, n_tasks: int, dc: DataCenter) -> str | None:
        """Why ``"all"`` leaves this policy out for ``n_tasks`` tasks on ``dc``, as a note of
        the result, or None (the default) to run it. A policy named explicitly always runs."""
        return None

    @abstractmethod
    def plan(self, request: PlanRequest) -> Plan:
        """The plan of ``request.batch`` on ``request.dc``, made with the planning values."""


#: The registered policies by name, in the order of ``"all"``.
POLICIES: dict[str, Policy] = {}

PolicyClass = TypeVar("PolicyClass", bound=type[Policy])


def register_policy(cls: PolicyClass) -> PolicyClass:
    """Class decorator: register an instance of ``cls`` under ``cls.name``, after the
    policies registered before it."""
    name = getattr(cls, "name", None)
    description = getattr(cls, "description", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "all":
        raise UsageError("a policy name is letters, digits, '_', '-' and '.' (not 'all')",
                         parameter="name", value=name)
    if name in POLICIES:
        raise UsageError(f"already registered ({type(POLICIES[name]).__qualname__})",
                         parameter="name", value=name)
    if not isinstance(description, str) or not description.strip() or "\n" in description:
        raise UsageError("a policy needs a one-line description", parameter="description",
                         value=description)
    label = getattr(cls, "label", "")
    if not isinstance(label, str) or "\n" in label:
        raise UsageError("a policy's label is one line of text", parameter="label",
                         value=label)
    POLICIES[name] = cls()
    return cls


def policy_label(name: str) -> str:
    """How tables and figures name policy ``name``: its registered ``label``, else its name
    (a policy of a saved result that is not registered here)."""
    policy = POLICIES.get(name)
    return (policy.label or name) if policy is not None else name


def requested_policies(policies: Sequence[str] | str) -> list[str]:
    """The registered policies that ``policies`` (a name, names, or ``"all"``) asks for, in
    the registry's order; UsageError naming the first unknown one."""
    names = list(POLICIES) if policies == "all" else (
        [policies] if isinstance(policies, str) else list(policies))
    for name in names:
        if name not in POLICIES:
            raise UsageError(f"unknown policy; expected one of {', '.join(POLICIES)} or all",
                             parameter="policies", value=name, option="--policy")
    return [name for name in POLICIES if name in names]


# --- the policies of Salinas Hilburg 2020, chapter 5 (the algorithms: phasekit.schedule.policies)
@register_policy
class RoundRobin(Policy):
    """Section 5.1: the batch in arrival order, each task on the first server it fits."""

    name = "rr"
    label = "round robin"
    description = "round robin: arrival order, first fit"

    def plan(self, request: PlanRequest) -> Plan:
        from phasekit.schedule.policies import round_robin

        return round_robin(len(request.time_s))


@register_policy
class LongestTaskFirst(Policy):
    """Algorithm 6: Longest Task First, each on the server whose energy grows least."""

    name = "heuristic"
    label = "LTF heuristic"
    description = "Longest Task First, least-energy server; Algorithm 6"

    def plan(self, request: PlanRequest) -> Plan:
        from phasekit.schedule.policies import ltf_heuristic

        return ltf_heuristic(request.time_s)


@register_policy
class Annealing(Policy):
    """Algorithms 3-5: anneal the order against the first-fit makespan, within its budget
    counted in temperature levels (the same plan on every machine)."""

    name = "sa"
    label = "annealing"
    description = "simulated annealing; Algorithms 3-5"
    long_running = True

    def detail(self, info: Mapping[str, Any]) -> str:
        """The seed, levels and moves, the start temperature, the planned makespan before and
        after, and why it stopped when it stopped early."""
        text = (f"seed {info.get('seed')}, {info.get('levels')} levels x "
                f"{info.get('moves_per_level')} moves, T0 {info.get('t0', 0):.4g} s, planned "
                f"makespan {info.get('initial_makespan_s', float('nan')):.6g} -> "
                f"{info.get('best_planned_makespan_s', float('nan')):.6g} s")
        if info.get("cut_by") == "lower bound":
            text += f"; stopped: {info['stopped']}"
        elif info.get("stopped"):
            text += f"; {info['stopped']}"
        return text

    def plan(self, request: PlanRequest) -> Plan:
        from phasekit.schedule.policies import simulated_annealing

        levels = {} if request.iterations is None else {"iterations": request.iterations}
        return simulated_annealing(request.threads, request.time_s, request.dc,
                                   seed=request.seed, time_limit_s=request.budget_s,
                                   deadline=request.deadline, progress=request.progress,
                                   **levels)


@register_policy
class MinimumMakespan(Policy):
    """Section 5.2.1: the MILP, solved by HiGHS from the best plan known on the planning
    times (which also bounds its makespan) until the deadline."""

    name = "milp"
    label = "MILP"
    description = "minimum makespan, HiGHS"
    long_running = True

    def detail(self, info: Mapping[str, Any]) -> str:
        """HiGHS's status, the start schedule, the best makespan, gap and bound, the solve
        time and the formulation; or why the solver did not run."""
        if info.get("fallback"):
            return str(info["fallback"])
        if str(info.get("solver", "")).startswith("none"):
            return (f"the start schedule ({info.get('start_s') or 0:.6g} s) ends at the lower "
                    "bound: optimal, HiGHS not run")
        gap = info.get("gap_percent")
        gap_text = "n/a" if gap is None else f"{gap:.2f} %"
        start = info.get("start_s")
        start_text = "" if start is None else f"started from {start:.6g} s, "
        return (f"{info.get('status')}, {start_text}best {info.get('objective_s') or 0:.6g} s "
                f"(with d gaps), gap {gap_text}, bound "
                f"{info.get('dual_bound_s') or float('nan'):.6g} s, "
                f"{info.get('solve_time_s', 0):.1f} s, {info.get('formulation', 'compact')} "
                "formulation")

    def left_out(self, n_tasks: int, dc: DataCenter) -> str | None:
        from phasekit.schedule.policies import milp_fits, milp_size_text

        if milp_fits(n_tasks, dc):
            return None
        return (f"MILP left out: {milp_size_text(n_tasks, dc)} (Salinas Hilburg 2020 Table "
                "5.1: the MILP does not scale to the large scenario)")

    def plan(self, request: PlanRequest) -> Plan:
        from phasekit.schedule.dispatch import execute_arrays
        from phasekit.schedule.policies import milp_schedule

        ltf = Plan(policy="ltf", kind="list", rule="first_fit",
                   order=np.argsort(-request.time_s, kind="stable").astype(np.int64))
        start, server = execute_arrays(ltf, request.threads, request.time_s, request.power_w,
                                       request.dc)
        end = start + request.time_s
        known = [*((e.makespan_s, e.start_s, e.server) for e in request.planned.values()),
                 (float(end.max()) if end.size else 0.0, start, server)]
        upper, best_start, best_server = min(known, key=lambda k: k[0])
        plan = milp_schedule(request.threads, request.time_s, request.dc,
                             time_limit_s=request.time_limit_s, upper_bound_s=upper,
                             start_schedule=(best_start, best_server),
                             deadline=request.deadline, progress=request.progress)
        if plan.info.get("fallback"):
            request.note(str(plan.info["fallback"]))
        return plan
