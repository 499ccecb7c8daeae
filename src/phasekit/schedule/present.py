"""How a comparison of scheduling policies reads (Salinas Hilburg 2020, Table 5.1): the
headline (which policy saves the most energy against round robin, and the others), the table
of policies and the notes (how each long search went, what the plans were made with, the
lower bound and the energy model); what the command line, the report and a notebook show
(:mod:`phasekit.present`). Policies are named by their registered label
(:func:`~phasekit.schedule.registry.policy_label`)."""

from __future__ import annotations

from typing import Any

from phasekit.present import Presentation, View
from phasekit.schedule.registry import BASELINE, POLICIES, policy_label

__all__ = ["duration", "headline", "presentation"]


def duration(seconds: float) -> str:
    """A duration as a person reads it: seconds up to 2 minutes, minutes up to 2 hours,
    then hours (``11723`` -> ``3.3 h``)."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def headline(result: Any) -> str:
    """One line in plain words: the policy that saves the most energy against round robin,
    how much, on what, with its makespan; then the saving of every other policy."""
    dc = result.datacenter
    where = f"{result.n_tasks} tasks on {dc.servers} x {dc.cores} cores"
    compared = [p for p in result.policies if p.policy != BASELINE]
    if not compared:
        rr = result.baseline
        return (f"round robin alone: {where}, makespan {duration(rr.makespan_s)}, "
                f"{rr.energy_j / 1e6:.4g} MJ")
    best = max(compared, key=lambda p: p.saving_vs_rr)
    if best.saving_vs_rr > 0:
        line = (f"{policy_label(best.policy)} saves {best.saving_vs_rr:.1f} % energy against "
                f"round robin for {where} (makespan {duration(best.makespan_s)})")
    else:
        line = (f"no policy saves energy against round robin for {where}: the best, "
                f"{policy_label(best.policy)}, uses {-best.saving_vs_rr:.1f} % more "
                f"(makespan {duration(best.makespan_s)})")
    others = [f"{policy_label(p.policy)} {p.saving_vs_rr:.1f} %" for p in compared
              if p is not best]
    return line + ("; " + ", ".join(others) if others else "")


def _details(result: Any) -> list[str]:
    """``label: line`` of each registered policy that says how its run went
    (:meth:`~phasekit.schedule.registry.Policy.detail`)."""
    lines = []
    for p in result.policies:
        policy = POLICIES.get(p.policy)
        text = policy.detail(dict(p.info)) if policy is not None else None
        if text:
            lines.append(f"{policy_label(p.policy)}: {text}")
    return lines


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The comparison as a person reads it: the headline, one row per policy (``name``: the
    batch, in the title) and the notes."""
    dc = result.datacenter
    table = View(f"{name or 'batch'}: {result.n_tasks} tasks, {dc.servers} x {dc.cores} cores "
                 "(Salinas Hilburg 2020, Table 5.1)",
                 ("policy", "makespan (s)", "energy (MJ)", "saving", "planned (s)", "time (s)"),
                 tuple((policy_label(p.policy), f"{p.makespan_s:.6g}", f"{p.energy_j / 1e6:.4g}",
                        f"{p.saving_vs_rr:.2f} %", f"{p.planned_makespan_s:.6g}",
                        f"{p.runtime_s:.2f}") for p in result.policies),
                 numeric=(False, True, True, True, True, True))
    notes = _details(result)
    notes += [f"planned with {result.planned_with}; executed on the true times and powers"
              if result.planned_with != "oracle" else
              "planned and executed with the true times and powers (oracle)",
              f"lower bound on the makespan {result.lower_bound_s:.6g} s (longest task, work "
              "over the cores, wide tasks that cannot share a server)",
              f"energy: {dc.servers} servers always on at {dc.static_w:.2f} W + the running "
              f"tasks' power, PUE {dc.pue:g}"]
    notes += [f"note: {n}" for n in result.notes]
    return Presentation(headline(result), (table,), tuple(notes))
