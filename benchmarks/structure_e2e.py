"""Loop structure end to end: reading a generated Paraver trace plus the whole
structure analysis, in events per second and peak memory.

The trace is a phasekit.synth.traces program written by ``write_paraver`` (streamed in chunks
of calls): 16 ranks, an outer time-step loop around a halo exchange loop of 5 (Irecv, Isend,
Waitall), an Allreduce and a solver loop of 3 (two Allreduce), call paths two levels deep,
instructions and cycles at every call - the shape of an Extrae trace of a stencil code. The
outer loop's iteration count sets the size: 10 million event records (entry and exit of 5
million MPI calls), the size the target is set for.

The measured run is a fresh process (its peak RSS, VmHWM, is the pipeline's alone):
a warm-up on a tiny trace (modules loaded), then ``read_trace`` and
``structure`` timed together. The structure found must be the program's (checked against
``Program.outline()``), or the run fails. Target: >= 1 million events/s end to end,
<= 2 GB.

Run: ``python benchmarks/structure_e2e.py [--quick]`` (``--quick``: 100 000 events; writes
RESULTS.md only with ``--results``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

SECTION = "structure_e2e"
N_RANKS = 16
CALLS_PER_ITERATION = 5 * 3 + 1 + 3 * 2  # per rank: halo loop, Allreduce, solver loop
TARGET_EVENTS_PER_S = 1e6
TARGET_RSS_MIB = 2 * 1024


def program(outer: int):  # -> phasekit.synth.traces.Program
    from phasekit.synth.traces import Call, Loop, Program

    ring = {r: (r + 1) % N_RANKS for r in range(N_RANKS)}
    back = {r: (r - 1) % N_RANKS for r in range(N_RANKS)}
    halo = Loop(5, (
        Call("MPI_Irecv", ("main@step.c:40", "halo@comm.c:12"), peer=back, bytes=8192,
             burst_s=2e-5),
        Call("MPI_Isend", ("main@step.c:40", "halo@comm.c:15"), peer=ring, bytes=8192,
             burst_s=2e-5),
        Call("MPI_Waitall", ("main@step.c:40", "halo@comm.c:18"), burst_s=4e-4)))
    solver = Loop(3, (
        Call("MPI_Allreduce", ("main@step.c:52", "dot@cg.c:80"), bytes=8, burst_s=3e-4),
        Call("MPI_Allreduce", ("main@step.c:52", "norm@cg.c:90"), bytes=8, burst_s=2e-4)))
    body = (Loop(outer, (halo, Call("MPI_Allreduce", ("main@step.c:45",), bytes=8,
                                    burst_s=1e-3), solver)),)
    return Program("stencil-solver", N_RANKS, body, description="benchmark program")


def outer_for(n_events: int) -> int:
    """Outer iterations giving about ``n_events`` event records (2 per call)."""
    return max(2, round(n_events / 2 / (N_RANKS * CALLS_PER_ITERATION)))


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM, MiB). Not ``getrusage``: its ru_maxrss
    survives ``exec`` and would count the parent's memory at ``fork`` (here the simulated
    trace the parent holds)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("no VmHWM in /proc/self/status")


def child(path: str, outer: int) -> None:
    """Read and analyze ``path`` in this process after a warm-up; print JSON figures."""
    from phasekit.io import read_trace
    from phasekit.structure import outline, structure
    from phasekit.synth.traces import write_paraver

    tmp = Path(tempfile.mkdtemp())
    try:
        warm = write_paraver(program(3), tmp / "warm.prv")["prv"]
        structure(read_trace(warm))
    finally:
        shutil.rmtree(tmp)
    start = time.perf_counter()
    trace = read_trace(path)
    read_s = time.perf_counter() - start
    result = structure(trace)
    total_s = time.perf_counter() - start
    rss = peak_rss_mib()
    correct = outline(result.body, result.reduction) == program(outer).outline()
    print(json.dumps({"read_s": read_s, "total_s": total_s, "calls": trace.n_calls,
                      "lines": trace.meta.get("lines"), "rss_mib": rss, "correct": correct,
                      "loops": len(result.loops), "diagnostics": result.diagnostics}))


def measure(path: Path, outer: int, tree: Path | None = None) -> dict:
    """The child's figures, with phasekit from ``tree``'s sources (a base revision's
    checkout) when given, else this checkout's."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")} if tree is not None else None
    done = subprocess.run([sys.executable, __file__, "--child", str(path), "--outer",
                           str(outer)], capture_output=True, text=True, check=False, env=env)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="100 000 events (smoke test)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--outer", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--base", default=None,
                        help="also measure this earlier revision (a git commit) on the same "
                             "trace, in the same run")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.outer)
        return 0
    from phasekit.synth.traces import simulate, write_paraver

    bench = _common.Run()
    n_target = 100_000 if args.quick else 10_000_000
    outer = outer_for(n_target)
    tmp = Path(tempfile.mkdtemp(prefix="phasekit-structure-"))
    try:
        start = time.perf_counter()
        simulated = simulate(program(outer), seed=0)
        path = write_paraver(program(outer), tmp / "bench.prv", trace=simulated)["prv"]
        n_calls = simulated.n_events
        del simulated
        size = path.stat().st_size
        print(f"wrote {path.name}: {2 * n_calls:,} event records, {size / 1e6:.0f} MB in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        with open(path, "rb") as fh:  # in the page cache for both measured runs alike
            while fh.read(1 << 24):
                pass
        got = measure(path, outer)
        base = None
        if args.base:
            from same_results import checkout

            tree = checkout(args.base, tmp)
            try:
                base = measure(path, outer, tree)
            finally:
                subprocess.run(["git", "-C", str(_common.HERE.parent), "worktree", "remove",
                                "--force", str(tree)], check=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if got["calls"] != n_calls:
        raise SystemExit(f"read {got['calls']} calls, wrote {n_calls}")
    if not got["correct"]:
        raise SystemExit(f"wrong structure found: {got}")
    events = 2 * n_calls
    header = ["revision", "event records", "MPI calls", "file", "read", "analysis", "total",
              "events/s", ">= 1 M/s", "peak RSS", "<= 2 GB", "structure"]

    def row(label: str, got: dict) -> list[str]:
        rate = events / got["total_s"]
        return [label, f"{events:,}", f"{n_calls:,}", f"{size / 1e6:,.0f} MB",
                _common.seconds(got["read_s"]), _common.seconds(got["total_s"] - got["read_s"]),
                _common.seconds(got["total_s"]), f"{rate / 1e6:.2f} M/s",
                "meets" if rate >= TARGET_EVENTS_PER_S else "misses",
                f"{got['rss_mib']:,.0f} MiB",
                "meets" if got["rss_mib"] <= TARGET_RSS_MIB else "misses",
                f"{'correct' if got['correct'] else 'wrong'} ({got['loops']} loops)"]

    rows = [row("this one", got)]
    if base is not None:
        rows.append(row(f"base {args.base}", base))
    print(_common.text_table(header, rows))
    md = "\n".join([
        "## Loop structure end to end (`benchmarks/structure_e2e.py`)", "",
        *_common.machine_lines(bench),
        f"- Generated trace (`phasekit.synth.traces`, written by `write_paraver`): {N_RANKS} "
        f"ranks, FOR 1 TO {outer:,} {{ FOR 1 TO 5 {{Irecv; Isend; Waitall}}; Allreduce; "
        "FOR 1 TO 3 {Allreduce; Allreduce} }, two caller levels, instructions and cycles per "
        "call. `read_trace` + `structure` timed together in a fresh process after a warm-up "
        "(modules loaded), the file read once before (in the page cache); one core; peak "
        "RSS (VmHWM) of that process (Python and numpy included). 'structure': the "
        "pseudocode's outline equals the program's." + (f" Base: revision {args.base} (`--base`), same trace, same run."
                        if base is not None else ""), "",
        _common.markdown_table(header, rows, "lrrrrrrrlrll"),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
