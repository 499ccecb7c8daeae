"""How a structure reads, before and after a change, on every trace at hand: loops found
against the truth, the main loop, the "relation uncertain" notes, the rows printed by
default, names and FILE/LINE cells that are not clean, and the time.

Traces: every program of :data:`phasekit.synth.traces.SUITE` (written with
``write_paraver``), the Fortran particle-in-cell program at 1, 4 and 16 ranks
(``phasekit.synth.fortran``; Extrae's gfortran labels, calls without call sites, a varying
trip count), and the shared real traces (LULESH with Extrae, 8 ranks; the two OTF2
ping-pong traces of Score-P). The base revision is checked out with ``git worktree`` and
both run ``phasekit structure FILE -o RESULT.json`` in a fresh process (the wall time of
that whole command is reported). Truth: the generated programs' loop nests (their number of
loops; for the Fortran program, the 10-iteration time step as the main loop); the real
traces have none, so only their notes, rows and names are compared.

Run: ``python benchmarks/structure_readable.py --base REV [--quick] [--results FILE]``
(``--quick``: the Fortran program and LULESH only).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common
from phasekit.synth.fortran import PIC_RANKS, fortran_pic, write_fortran_pic
from phasekit.synth.traces import SUITE, Loop, Program, write_paraver
from same_results import checkout

SECTION = "structure_readable"
TITLE = "## How a structure reads (`benchmarks/structure_readable.py`)"
SHARED = _common.HERE.parent.parent / "shared" / "data"
UNCERTAIN = "relation is uncertain"
NOT_CLEAN = re.compile(r"_MOD_|__\w|\.\.|_mp_|\b_Z\w|\b_Q[MPF]\w|\?")


Truth = tuple[int, int, int | None, list[list[int]]] | None


def nest_truth(program: Program, main_iterations: int | None = None,
               drawn: dict[str, list[int]] | None = None) -> Truth:
    """Loops in all, loops at the top level, the main loop's iterations (None: not checked)
    and every loop's fewest and most iterations per iteration of its parent, sorted, of a
    generated program (``drawn``: the trip counts drawn for a varying loop, by name). A loop
    of site-less calls counts its calls: they cannot be told apart, so 3 iterations of 4
    calls read as 12."""
    top = sum(isinstance(node, Loop) for node in program.body)
    ranges = []
    for loop in program.loops():
        low, high = loop.count_range()
        if drawn and loop.name in drawn:
            low, high = min(drawn[loop.name]), max(drawn[loop.name])
        calls = [node for node in loop.body if not isinstance(node, Loop)]
        if calls and all(not call.path for call in calls):
            low, high = low * len(calls), high * len(calls)
        ranges.append([low, high])
    return len(list(program.loops())), top, main_iterations, sorted(ranges)


def traces(folder: Path, quick: bool) -> list[tuple[str, Path, Truth]]:
    """(name, file, truth) per trace."""
    out: list[tuple[str, Path, Truth]] = []
    for n in PIC_RANKS:
        path = folder / f"fortran-pic-{n}.prv"
        written = write_fortran_pic(path, n, seed=0)
        drawn = {d["name"]: d["counts"]
                 for d in json.loads(written["truth"].read_text())["trip_counts"]}
        out.append((f"Fortran PIC, {n} ranks", path, nest_truth(fortran_pic(n), 10, drawn)))
    if not quick:
        for name, program in SUITE.items():
            path = folder / f"{name}.prv"
            write_paraver(program, path)
            out.append((f"synthetic {name}", path, nest_truth(program)))
    out.append(("LULESH (Extrae, 8 ranks)",
                SHARED / "paraver" / "lulesh_chop8" / "lulesh_7+1_chop8.prv", None))
    if not quick:
        for name in ("ping-pong-otf2", "ping-pong-otf2-papi"):
            out.append((f"{name} (Score-P)", SHARED / "otf2" / name / "traces.otf2", None))
    return out


def all_loops(tree: list[dict]) -> list[dict]:
    out = []
    for loop in tree:
        out.append(loop)
        out.extend(all_loops(loop.get("loops") or []))
    return out


def analyze(tree: Path, trace: Path, output: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "structure", str(trace),
                           "-o", str(output)], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:80]}
    data = json.loads(output.read_text(encoding="utf-8"))
    loops = all_loops(data.get("loops") or [])
    top = data.get("loops") or []
    main_id = data.get("main_loop")
    if main_id is None and top:  # before the main loop was named: the longest top-level
        main_id = max(top, key=lambda lp: lp["iterations"] * (lp["iteration_time_s"] or 0))["id"]
    main = next((lp for lp in top if lp["id"] == main_id), None)
    rows = data.get("pseudocode") or []
    unclean = sum(1 for row in rows
                  if NOT_CLEAN.search(row["PSEUDOCODE"].lstrip(": ").split(" at ")[0])
                  or (row["FILE"] and not (re.fullmatch(r"[\w.+-]+\.\w+", row["FILE"])
                                           and row["LINE"].isdigit())))
    notes = "\n".join([*data.get("diagnostics", []), done.stdout])
    ranges = sorted(loop.get("iterations_range") or [loop["iterations"]] * 2
                    for loop in loops)
    return {"loops": len(loops), "top": len(top), "ranges": ranges, "main": None if main is None else main["iterations"],
            "uncertain": sum(UNCERTAIN in d for d in data.get("diagnostics", [])),
            "question": "?" in notes, "rows": len(rows), "unclean": unclean,
            "seconds": seconds}


def cell(before: dict, after: dict, key: str) -> str:
    if "error" in before or "error" in after:
        return "-"
    return f"{before[key]} -> {after[key]}"


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="the Fortran program and LULESH only")
    parser.add_argument("--base", required=True, help="the earlier revision (a git commit)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    here = _common.HERE.parent
    rows, totals = [], {"before": 0, "after": 0}
    right = {"before": 0, "after": 0}
    known = 0
    with tempfile.TemporaryDirectory(prefix="structure-readable-") as folder:
        work = Path(folder)
        tree = checkout(args.base, work)
        try:
            for name, path, truth in traces(work, args.quick):
                before = analyze(tree, path, work / "before.json")
                after = analyze(here, path, work / "after.json")
                if "error" in after:
                    raise SystemExit(f"{name}: {after['error']}")
                for side, result in (("before", before), ("after", after)):
                    totals[side] += result.get("uncertain", 0)
                ok = {}
                if truth is not None:
                    known += 1
                    for side, result in (("before", before), ("after", after)):
                        ok[side] = (result.get("loops") == truth[0]
                                        and result.get("top") == truth[1]
                                        and truth[2] in (None, result.get("main"))
                                        and result.get("ranges") == truth[3])
                        right[side] += ok[side]
                shown = "-" if truth is None else (
                    f"{truth[0]} ({truth[1]} top)" + (f", main {truth[2]}" if truth[2] else ""))
                rows.append((name, shown, " -> ".join(
                    "yes" if ok[side] else "no" for side in ("before", "after")) if ok else "-",
                             cell(before, after, "loops"),
                             cell(before, after, "top"),
                             cell(before, after, "main"), cell(before, after, "uncertain"),
                             cell(before, after, "rows"), cell(before, after, "unclean"),
                             "yes" if before.get("question") else "no",
                             "yes" if after["question"] else "no",
                             "-" if "error" in before else f"{before['seconds']:.2f}",
                             f"{after['seconds']:.2f}"))
                print(" | ".join(str(c) for c in rows[-1]), flush=True)
        finally:
            subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force",
                            str(tree)], check=False)
    header = ("trace", "truth: loops", "as generated", "loops", "at the top level", "main loop iterations", "'relation uncertain'",
              "rows by default", "rows not clean", "'?' before", "'?' after", "before (s)",
              "after (s)")
    print(_common.text_table(header, rows))
    summary = (f"loops, top-level loops, trip counts and main loop as generated in {right['before']} -> {right['after']} of "
               f"{known} generated traces; 'relation uncertain' notes {totals['before']} -> "
               f"{totals['after']} over {len(rows)} traces")
    print(summary)
    body = "\n".join([
        TITLE, "",
        *_common.machine_lines(bench),
        f"- Command: `python benchmarks/structure_readable.py --base {args.base}` "
        f"({bench.elapsed() / 60:.1f} min): `phasekit structure FILE -o RESULT.json` with the "
        f"base revision ({args.base}) and this one, each in a fresh process (wall time of "
        "the whole command, start-up included). Main loop before the change: the longest "
        "top-level loop (iterations x time per iteration), as its headline named it. As "
        "generated: the number of loops, of top-level loops, the main loop's iterations and "
        "every loop's fewest and most iterations per iteration of its parent (a varying trip "
        "count: its range; a loop of calls without call site counts its calls, which cannot "
        "be told apart). Rows "
        "not clean: pseudocode rows with a mangled or abbreviated name, a '?', or a FILE "
        "cell that is not a file name with an integer LINE.",
        f"- **{summary}**.",
        "",
        _common.markdown_table(header, rows, "lllllllllllrr"),
    ])
    _common.publish(SECTION, body, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
