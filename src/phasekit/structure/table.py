"""How a loop structure reads (Martínez Vera): the headline, the pseudocode table, the loops
and the notes, what the command line, the report and a notebook show (:mod:`phasekit.present`).

Everything here reads the result's JSON layout (``loop_tree``, ``pseudocode``, ``trace``,
``parameters``), so a structure read back from a file reads as the one just computed. The
loop taking the most time (:func:`main_loop`) is the one the several-trace summary calls the
main loop too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from phasekit.present import Presentation, View, percent, plural
from phasekit.structure.pseudocode import format_count, format_ranks, format_time, function_text

__all__ = ["PSEUDOCODE_COLUMNS", "fit_width", "headline", "loop_calls", "loop_records",
           "loop_time", "main_loop", "presentation", "run_share"]

#: The columns of the pseudocode table (Martínez Vera's console output).
PSEUDOCODE_COLUMNS = ("FILE", "LINE", "PSEUDOCODE", "E(TIME)", "E(SIZE)", "E(IPC)")
#: On a narrow terminal (:func:`fit_width`): the widest a FILE cell stays, and the width kept
#: for the pseudocode before file names are cut shorter still.
FILE_WIDTH = 24
PSEUDOCODE_WIDTH = 16
#: A compact pseudocode row that stands for several call sites (:mod:`.pseudocode`).
_GROUP_ROW = re.compile(r"^[:\s]*MPI_\w+ at (\d+) sites\b")
#: A share of the run at least this large reads as the whole run: the explained time
#: (repetitions x mean time between them) counts one gap more than the loop spans.
WHOLE_RUN = 0.995


def loop_records(tree: Sequence[Mapping[str, Any]], parent: int | None = None
                 ) -> list[dict[str, Any]]:
    """The loops of a JSON loop tree at every depth, depth first, each as its record with
    the id of the loop it is in (``parent``, None at the top level)."""
    out: list[dict[str, Any]] = []
    for loop in tree:
        out.append({**loop, "parent": parent})
        out.extend(loop_records(loop.get("loops") or [], loop.get("id")))
    return out


def loop_time(loop: Mapping[str, Any]) -> float:
    """The time a top-level loop takes: iterations x time per iteration (0 if unknown)."""
    try:
        time = float(loop["iterations"]) * float(loop["iteration_time_s"])
    except (KeyError, TypeError, ValueError):
        return 0.0
    return time if math.isfinite(time) else 0.0


def main_loop(loops: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The main loop among top-level loop records (:mod:`.mainloop`): the longest span of
    time, then the most iterations; by :func:`loop_time` for a result saved before spans
    were (version 2). None without loops."""
    if any("span_s" in loop for loop in loops):
        return max(loops, key=lambda loop: (float(loop.get("span_s") or 0.0),
                                            int(loop.get("iterations_total") or 0)),
                   default=None)
    return max(loops, key=loop_time, default=None)


def loop_calls(loop: Mapping[str, Any]) -> list[str]:
    """The MPI calls a loop makes, its nested loops' too, each once, in program order."""
    calls = [str(c.get("call", "?")) for c in loop.get("calls") or []]
    children = {child.get("id"): child for child in loop.get("loops") or []}
    out: list[str] = []

    def walk(body: Sequence[Mapping[str, Any]]) -> None:
        for item in body:
            if "call" in item and isinstance(item["call"], int) and item["call"] < len(calls):
                out.append(calls[item["call"]])
            elif item.get("loop") in children:
                out.extend(loop_calls(children[item["loop"]]))
            elif "if" in item:
                walk(item.get("body") or [])

    walk(loop.get("body") or [])
    if not out:  # a loop without its body: its own calls, then its loops'
        out = calls + [c for child in children.values() for c in loop_calls(child)]
    return list(dict.fromkeys(out))


def run_share(fraction: Any) -> str | None:
    """``92% of the run``, ``the whole run`` from :data:`WHOLE_RUN` on; None when unknown."""
    try:
        share = float(fraction)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(share):
        return None
    return "the whole run" if share >= WHOLE_RUN else f"{percent(share, 0)} of the run"



def headline(result: Any) -> str:
    """One line in plain words: the main loop (:func:`main_loop`), where it is in the code,
    its iterations and their time, the share of the run it spans and of that in MPI, then
    how many loops there are in all."""
    top = list(result.loop_tree)
    main = main_loop(top)
    if main is None:
        return result.explanation or "no loop found"
    rank = result.parameters.get("rank")
    function, site = str(main.get("function") or ""), str(main.get("site") or "")
    caller = str(main.get("first_call_in") or "")
    line = f"main loop (id {main.get('id')})"
    if function:
        line += f" in {function_text(function)}" + (f" at {site}" if site else "")
    iterations = int(main.get("iterations") or 0)
    line += f": {format_count(iterations)} iteration{'' if iterations == 1 else 's'}"
    per_iteration = float(main.get("iteration_time_s") or math.nan)
    if math.isfinite(per_iteration):
        line += f" of {format_time(per_iteration)}"
    if (share := run_share(main.get("run_share", main.get("explained")))) is not None:
        line += f" over {share}"
    mpi = float(main.get("mpi_share") if main.get("mpi_share") is not None else math.nan)
    if math.isfinite(mpi):
        line += f", {percent(mpi, 0)} of it in MPI"
    if not function and site:
        line += f"; its first call from {function_text(caller)} at {site}" if caller \
            else f"; its first call at {site}"
    if rank is not None:
        line += f"; rank {rank}"
    if result.n_loops > 1:
        line += f"; {plural(result.n_loops, 'loop')} in all, {len(top)} at the top level"
    else:
        calls = loop_calls(main)
        line += "; calls " + ", ".join(calls[:3]) + (", ..." if len(calls) > 3 else "")
    return line


def _loops_view(result: Any) -> View:
    rows = tuple((str(loop.get("id")), "-" if loop["parent"] is None else str(loop["parent"]),
                  format_count(float(loop.get("iterations_per_outer", loop.get("iterations", 0)))),
                  str(loop.get("iterations_total", "-")),
                  format_time(float(loop.get("iteration_time_s") or math.nan)),
                  format_ranks([int(r) for r in loop.get("ranks") or []]),
                  percent(loop.get("explained"), 1))
                 for loop in loop_records(result.loop_tree))
    return View("Loops", ("loop", "in loop", "iterations", "total", "iteration time", "ranks",
                          "explained"), rows,
                numeric=(True, True, True, True, True, False, True),
                wrap=(False,) * 5 + (True, False))


def presentation(result: Any, name: str | None = None, *, full: bool = False) -> Presentation:
    """The structure of ``result`` (``name``: its trace file, in the title; default the
    trace's first file) as a person reads it: the headline, the pseudocode, the loops, then
    the notes (the loops at the top level, the calls left out, what makes it doubtful, the
    settings)."""
    trace, parameters = result.trace, result.parameters
    sources = trace.get("sources") or []
    shown = name or (Path(str(sources[0])).name if sources else "the trace")
    rank = parameters.get("rank")
    only = f", rank {rank}" if rank is not None else ""
    views = []
    pseudocode = result.table(full=full)
    if pseudocode:
        views.append(View(
            f"Loop structure of {shown} ({trace.get('n_ranks')} ranks{only}, "
            f"{trace.get('n_calls')} MPI calls)", PSEUDOCODE_COLUMNS,
            tuple(tuple(row[c] for c in PSEUDOCODE_COLUMNS) for row in pseudocode),
            numeric=(False, True, False, True, True, True)))
    if result.loop_tree:
        views.append(_loops_view(result))
    top = result.loop_tree
    notes = [f"{plural(result.n_loops, 'loop')}, {len(top)} at the top level"
             + (": " + ", ".join(f"id {loop['id']} with {loop['iterations_total']} iterations"
                                 for loop in top) if top else "")]
    if not full and (grouped := _grouped_sites(result)):
        notes.append(f"{plural(grouped[0], 'row')} of the pseudocode stand for "
                     f"{grouped[1]} call sites, each made by some ranks under its own "
                     "condition (--full shows each)")
    min_explained = float(parameters.get("min_explained", 0.0))
    if result.filtered:
        notes.append(f"repeated calls that explain less than {min_explained:.0%} of the run "
                     "each are left out (min_explained): " + by_place(result.filtered, top))
    if result.unplaced:
        notes.append("calls made once, during a loop but not in each of its iterations, are "
                     "not in the pseudocode: " + by_place(result.unplaced, top))
    said = [result.explanation] if result.explanation else []
    said += [*result.reading_notes, *result.diagnostics]
    if top and not result.pseudocode:
        said.append("no pseudocode in this result (saved by an older phasekit): infer the "
                    "structure again to see it")
    notes += [f"note: {text}" for text in said]
    notes.append(f"{trace.get('format', '?')} trace of {float(trace.get('duration_s', 0)):.4g} s"
                 f"; DBSCAN eps {parameters.get('eps')}, min_pts {parameters.get('min_pts')}; "
                 f"min_explained {min_explained:.0%}")
    return Presentation(headline(result), tuple(views), tuple(notes))


def by_place(calls: Sequence[Mapping[str, Any]], top: Sequence[Mapping[str, Any]]) -> str:
    """Calls (JSON entry records: one per rank and call site, with ``first_s``) counted by
    where they are made: in the set-up (before the main loop), during a top-level loop, in
    the finalization (after the main loop); at each place every call site once, with how
    often and on how many ranks it is made."""
    main = main_loop(top)
    places: dict[str, dict[tuple[str, str], list[int]]] = {}
    for call in calls:
        when = float(call.get("first_s", math.nan))
        during = next((loop for loop in top
                       if float(loop.get("first_s", math.inf)) <= when
                       <= float(loop.get("last_s", -math.inf))), None)
        if during is not None:
            place = ("during the main loop" if during is main
                     else f"during loop {during.get('id')}")
        elif main is not None and math.isfinite(when) and "first_s" in main:
            place = "in the set-up" if when < float(main["first_s"]) else "in the finalization"
        else:
            place = "outside the loops"
        site = (str(call.get("call", "?")), str(call.get("site") or ""))
        places.setdefault(place, {}).setdefault(site, []).append(
            int(call.get("repetitions") or 1))

    def one(site: tuple[str, str], counts: list[int]) -> str:
        name, where = site
        times = max(counts)
        return (f"{name}{f' at {where}' if where else ''}"
                f"{f' {times} times' if times > 1 else ''}"
                f" on {plural(len(counts), 'rank')}")

    parts = []
    for place, sites in places.items():
        listed = sorted(sites.items(), key=lambda item: (-len(item[1]) * max(item[1]), item[0]))
        shown = ", ".join(one(site, counts) for site, counts in listed[:3])
        more = f", and {len(listed) - 3} more" if len(listed) > 3 else ""
        parts.append(f"{place}, {shown}{more}")
    return "; ".join(parts)


def _grouped_sites(result: Any) -> tuple[int, int] | None:
    """How many compact rows stand for a run of call sites, and how many sites they hold
    (the rows' own count, ``MPI_X at N sites, ...``); None when the rows are all shown."""
    compact, full = result.table(), result.table(full=True)
    if len(full) <= len(compact):
        return None
    counts = [int(match.group(1)) for row in compact
              if (match := _GROUP_ROW.search(row["PSEUDOCODE"])) is not None]
    return (len(counts), sum(counts)) if counts else None


def fit_width(shown: Presentation, width: int) -> Presentation:
    """``shown`` with the file names and pseudocode lines of its pseudocode table cut short
    (…) to fit ``width`` columns, never a number: the numbers take their width (with 3
    spaces between columns and 1 at each edge), the file up to :data:`FILE_WIDTH`, the
    pseudocode what is left (a pseudocode line is never wrapped onto two)."""
    views = []
    for table in shown.views:
        if table.headers == PSEUDOCODE_COLUMNS:
            widest = [max([len(header), *(len(row[k]) for row in table.rows)])
                      for k, header in enumerate(table.headers)]
            text_width = width - sum(widest[1:2] + widest[3:]) - 3 * 5 - 2
            file_width = max(4, min(widest[0], FILE_WIDTH, text_width - PSEUDOCODE_WIDTH))
            code_width = max(text_width - file_width, 4)
            table = replace(table, rows=tuple(
                (_cut(row[0], file_width), row[1], _cut(row[2], code_width), *row[3:])
                for row in table.rows))
        views.append(table)
    return replace(shown, views=tuple(views))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
