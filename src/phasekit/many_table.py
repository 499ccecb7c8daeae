"""How the results of several inputs read (:mod:`phasekit.many`): the phases of several
profiles and the loop structure of several traces, one row per input; what the command line,
the report and a notebook show (:mod:`phasekit.present`). Also how a table names an input
file (:func:`file_stem`). The inputs that failed are counted in the headline; the command
line lists them on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from phasekit.present import Presentation, View, listed, percent

__all__ = ["file_stem", "phases_presentation", "structures_presentation"]

#: Inputs named in a headline at most (the rest are counted).
NAMED = 3


def file_stem(name: str) -> str:
    """A file name without its input suffix (``node01.csv.gz`` -> ``node01``)."""
    from phasekit.io import PROFILE_SUFFIXES, TRACE_SUFFIXES

    base = Path(name).name
    for suffix in sorted((*PROFILE_SUFFIXES, *TRACE_SUFFIXES), key=len, reverse=True):
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            return base[:-len(suffix)]
    return Path(base).stem or base


def _span(values: Sequence[int]) -> str:
    """``3`` when all are 3, ``1 to 3`` otherwise."""
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low} to {high}"



def _failed(result: Any, done: int) -> str:
    errors = len(result.errors)
    return f"; {errors} of {done + errors} inputs failed" if errors else ""


# --- the phases of several profiles ----------------------------------------------------------
def phases_headline(result: Any) -> str:
    """One line in plain words: how many phases of how many kinds per profile, the profiles
    without a phase change, how many inputs failed."""
    nodes = result.nodes
    if not nodes:
        return "no profile analyzed" + _failed(result, 0)
    phases = [int(n.get("n_phases", len(n.get("phases") or []))) for n in nodes]
    kinds = [int(n.get("n_ids", 0)) for n in nodes]
    line = (f"{len(nodes)} profile{'s' if len(nodes) != 1 else ''}: {_span(phases)} phases"
            f"{' each' if len(nodes) > 1 else ''}, of {_span(kinds)} kinds")
    unchanged = [str(n.get("node") or n.get("file")) for n, k in zip(nodes, phases, strict=True)
                 if k <= 1]
    if unchanged and len(nodes) > 1:
        line += f"; no phase change in {len(unchanged)}: {listed(unchanged, NAMED)}"
    return line + _failed(result, len(nodes))


def phases_presentation(result: Any, name: str | None = None) -> Presentation:
    """The phases of several profiles (``name`` is not used: each profile names itself):
    the headline and one row per profile."""
    rows = tuple((str(n["node"]), f"{n['duration_s']:.6g}", str(n["n_phases"]), str(n["n_ids"]),
                  str(n["method"]), f"{n['threshold']:g}", str(n.get("explanation") or ""))
                 for n in result.nodes)
    table = View(f"Phases of {len(result.nodes)} profiles (Tsafack Chetsa et al.)",
                 ("node", "duration (s)", "phases", "ids", "method", "threshold", "note"), rows,
                 numeric=(False,) + (True,) * 5 + (False,), wrap=(False,) * 6 + (True,))
    return Presentation(phases_headline(result), (table,))


# --- the loop structure of several traces ----------------------------------------------------
def structures_headline(result: Any) -> str:
    """One line in plain words: how many traces have loops, the iterations of each one's
    main loop, the traces without a loop, how many inputs failed."""
    from phasekit.structure.table import main_loop

    traces = result.traces
    if not traces:
        return "no trace analyzed" + _failed(result, 0)
    mains = [main_loop([loop for loop in t.get("loops") or [] if isinstance(loop, dict)])
             for t in traces]
    counts = [int(m.get("iterations") or 0) for m in mains if m is not None]
    line = f"{len(traces)} trace{'s' if len(traces) != 1 else ''}"
    if counts:
        which = ("all" if len(counts) == len(traces) > 1 else
                 "" if len(traces) == 1 else f"{len(counts)}")
        line += (f", {which + ' ' if which else ''}with loops: the main loop runs "
                 f"{_span(counts)} iterations")
    without = [str(t.get("file", "?")) for t, m in zip(traces, mains, strict=True) if m is None]
    if without:
        line += (f"; no loop in {len(without)}: {listed(without, NAMED)}" if counts else
                 ", none with a loop")
    return line + _failed(result, len(traces))


def structures_presentation(result: Any, name: str | None = None) -> Presentation:
    """The structure of several traces (``name`` is not used: each trace names itself): the
    headline and one row per trace (its main loop: iterations, share of the run and of that
    in MPI; its top-level loops' iterations in program order)."""
    from phasekit.structure.table import main_loop

    rows = []
    for trace in result.traces:
        info, loops = trace["trace"], trace["loops"]
        main = main_loop([loop for loop in loops if isinstance(loop, dict)])
        rows.append((trace["file"], str(info["n_ranks"]), str(info["n_calls"]),
                     f"{info['duration_s']:.6g}",
                     "-" if main is None else f"id {main.get('id')}, {main['iterations']:g}",
                     "-" if main is None else percent(main.get("run_share"), 0),
                     "-" if main is None else percent(main.get("mpi_share"), 0),
                     ", ".join(f"{loop['iterations']:g}" for loop in loops)))
    table = View(f"Loop structure of {len(result.traces)} traces",
                 ("trace", "ranks", "MPI calls", "duration (s)", "main loop (iterations)",
                  "of the run", "in MPI", "top-level loops' iterations"), tuple(rows),
                 numeric=(False,) + (True,) * 6 + (False,),
                 wrap=(True,) + (False,) * 6 + (True,))
    return Presentation(structures_headline(result), (table,))
