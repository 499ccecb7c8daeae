"""How a signature and its estimate read (Salinas Hilburg 2020, 4.1): the headline, the tables
(the executables of a signature; the segments and totals of an estimate) and the notes; what
the command line, the report and a notebook show (:mod:`phasekit.present`)."""

from __future__ import annotations

import math
import shlex
from typing import Any

from phasekit.present import Presentation, View

__all__ = ["estimate_headline", "estimate_presentation", "signature_headline",
           "signature_presentation"]


def _fmt(value: float | None, spec: str = ".4g") -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def _command(program: str, args: tuple[str, ...]) -> str:
    return f"{program} {shlex.join(args)}".rstrip()


# --- the signature (build) -------------------------------------------------------------------
def _probe_steps(signature: Any) -> str:
    """The trip counts the instructions were counted at (``1,2``)."""
    count = signature.base.count
    return ",".join(str(k) for k, _ in count.probes) if count is not None else "-"


def signature_headline(signature: Any) -> str:
    """One line: how many paths, the instructions estimated, and how far from the program's
    own count when it was counted."""
    n = len(signature.paths)
    failed = sum(1 for u in signature.path_units if not u.ok)
    line = (f"{_command(signature.program, signature.args)}: {n} independent "
            f"path{'s' if n != 1 else ''}, {_fmt(signature.instructions_estimate)} "
            "instructions estimated")
    if math.isfinite(signature.instructions_program):
        line += f", {_fmt(signature.instruction_error, '.2f')} % off the program's count"
    if failed:
        line += f"; {failed} path{'s' if failed != 1 else ''} failed"
    return line


def signature_presentation(signature: Any, name: str | None = None) -> Presentation:
    """The executables of the signature (``name``: the program, default its file's), their
    instructions and status, then the totals and the build's notes."""
    rows = []
    for unit in signature.units:
        if unit.kind == "path":
            count = signature.path_instructions(unit)
        else:
            count = unit.count.at_args if unit.count is not None else math.nan
        minus = signature.unit(unit.reference).label if unit.reference else ""
        status = "ok" if unit.ok else f"failed: {unit.reason}"
        rows.append((unit.label, unit.kind, minus, _fmt(count, ".4g"), status))
    table = View(f"Signature of {_command(name or signature.program, signature.args)}",
                 ("executable", "kind", "minus", "instructions", "status"), tuple(rows),
                 numeric=(False, False, False, True, False), wrap=(True,) * 5)
    line = f"instructions: {signature.instructions_estimate:.4g} estimated ({signature.counter}"
    if signature.steps_arg is not None:
        line += f", extrapolated from trip counts {_probe_steps(signature)} to {signature.steps}"
    line += ")"
    if math.isfinite(signature.instructions_program):
        line += (f"; the program: {signature.instructions_program:.4g} (error "
                 f"{signature.instruction_error:.2f} %, eq. 4.13)")
    notes = [line, f"call graph: {signature.graph.tool}; {len(signature.paths)} independent "
                   f"path(s); built in {signature.build_time_s:.1f} s"]
    notes += [f"note: {note}" for note in (*signature.graph.notes, *signature.notes)]
    return Presentation(signature_headline(signature), (table,), tuple(notes))


# --- the estimate (run) ----------------------------------------------------------------------
def estimate_headline(estimate: Any) -> str:
    """One line: the time and energy estimated, from how many partial runs, and, when the
    program was run too, how far they are from its measured ones."""
    paths = sum(1 for seg in estimate.segments if seg.kind == "path")
    line = (f"{_command(estimate.program, estimate.args)}: estimated "
            f"{_fmt(estimate.time_s)} s and {_fmt(estimate.energy_j)} J from "
            f"{paths} path{'s' if paths != 1 else ''} run to p = {estimate.p:g} %")
    if not estimate.complete:
        line += f" (incomplete: {len(estimate.missing)} missing)"
    if estimate.compared:
        measured = "simulated" if estimate.mode == "simulated" else "measured"
        line += (f"; {measured} {_fmt(estimate.program_time_s)} s and "
                 f"{_fmt(estimate.program_energy_j)} J (errors {_fmt(estimate.time_error, '.1f')}"
                 f" % and {_fmt(estimate.energy_error, '.1f')} %)")
    return line


def _segments(estimate: Any, name: str | None) -> View:
    hardware = estimate.mode in ("hardware", "simulated")
    headers = ("segment", "instr.", "ns/instr", *(("IPC",) if hardware else ()), "T' (s)",
               "busy", "P^ (W)", "E^ (J)")
    rows = tuple((seg.label, _fmt(seg.instructions, ".3g"), _fmt(seg.tpi_s * 1e9, ".3f"),
                  *((_fmt(seg.ipc, ".2f"),) if hardware else ()), _fmt(seg.time_s, ".4f"),
                  _fmt(seg.counters.get("task_clock", math.nan), ".2f"),
                  _fmt(seg.power_w, ".2f"), _fmt(seg.energy_j, ".3f"))
                 for seg in estimate.segments)
    return View(f"Estimate of {_command(name or estimate.program, estimate.args)} "
                f"({estimate.mode} counters, p = {estimate.p:g} %, s = {estimate.s})",
                headers, rows, numeric=(False,) + (True,) * (len(headers) - 1),
                wrap=(True,) + (False,) * (len(headers) - 1))


def _totals(estimate: Any) -> View:
    label = "estimate" + ("" if estimate.complete else " (incomplete)")
    rows = [(label, _fmt(estimate.time_s, ".4f"), _fmt(estimate.energy_j, ".3f"),
             _fmt(estimate.instructions, ".4g"))]
    if estimate.compared:
        rows += [("program (measured)", _fmt(estimate.program_time_s, ".4f"),
                  _fmt(estimate.program_energy_j, ".3f"),
                  _fmt(estimate.program_instructions, ".4g")),
                 ("error (%)", _fmt(estimate.time_error, ".1f"),
                  _fmt(estimate.energy_error, ".1f"), _fmt(estimate.instruction_error, ".2f"))]
        if math.isfinite(estimate.program_meter_energy_j):
            rows.append(("program (meter)", "", _fmt(estimate.program_meter_energy_j, ".3f"),
                         ""))
    return View("Totals", ("", "time (s)", "energy (J)", "instructions"), tuple(rows),
                numeric=(False, True, True, True), wrap=(True, True, True, True))


def estimate_presentation(estimate: Any, name: str | None = None) -> Presentation:
    """The segments of the reconstructed profile and the totals (``name``: the program,
    default its file's), then the compression ratios, the stops, the power model, the sources
    and what could not be measured."""
    ratios = (f"compression: CR = {_fmt(estimate.cr, '.1f')} (eq. 2.1, T_app / sum of "
              f"partial times {estimate.t_sig_s:.3f} s), {_fmt(estimate.cr_parallel, '.1f')} "
              f"in parallel ({estimate.t_sig_parallel_s:.3f} s), CR_fr = "
              f"{_fmt(estimate.cr_framework, '.2f')} with the build (eq. 4.14)")
    if not estimate.compared:
        ratios += "; T_app is the estimate (the program was not run to measure it)"
    notes = [ratios]
    steps = sorted({k for seg in estimate.segments for k in seg.run_steps if k is not None})
    if steps:
        notes.append("partial runs: " + " and ".join(map(str, steps)) + " step(s) each; "
                     "busy: task_clock (cores)")
    stable = [seg.label for seg in estimate.segments if seg.stable]
    stops = [f"{seg.label} ({seg.stopped_by})" for seg in estimate.segments
             if seg.stopped_by not in ("end",)]
    notes.append("stable counter window (criterion 2): " + (", ".join(stable) or "none")
                 + (("; stopped early: " + ", ".join(stops)) if stops else ""))
    notes.append(f"power model: {estimate.power_model_description}")
    notes.append(f"sources: {', '.join(estimate.sources) or '-'}; sampling every "
                 f"{estimate.interval_s * 1e3:g} ms")
    notes += [f"not measured here: {item}" for item in estimate.unmeasured]
    notes += [f"note: {note}" for note in estimate.notes]
    return Presentation(estimate_headline(estimate), (_segments(estimate, name),
                                                      _totals(estimate)), tuple(notes))
