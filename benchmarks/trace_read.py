"""Paraver reader throughput: lines, event records and MPI calls read per second,
and the reader's peak resident memory, on a generated Extrae-like .prv.

The trace is written by a small streaming generator in this script (rows of integers
formatted by phasekit.synth.traces.format_int_lines; not phasekit.synth's simulator): 16 ranks
repeat a loop of 8 MPI call sites (MPI_Irecv x2, MPI_Isend x2, MPI_Wait x2, MPI_Waitall,
MPI_Allreduce) with 3 caller levels and 2 line levels on every entry, PAPI_TOT_INS and
PAPI_TOT_CYC on every entry and exit, a state record per call and per burst, and a
communication record per MPI_Isend, in global time order - the shape of an Extrae trace
(about 4.25 lines and 2 event records per call). Sizes: 10 million event records (5 million
calls, ~1.3 GB), the trace size of the end-to-end target; and a gzip-compressed (level 1)
copy of a 2-million-event trace for .prv.gz.

Each read runs in a fresh process (so the peak RSS is the reader's alone, from
``getrusage``), after a warm-up read of a tiny trace in that process (the C parser and the
modules loaded); each file is read ``--repeat`` times (3)
and the median reported, since one read on a shared VM can be off by a factor of two. The
end-to-end target, reading plus analysis at >= 1 million events/s, needs the reader well above
that.

Run: ``python benchmarks/trace_read.py [--quick] [--repeat N]`` (``--quick``: 100 000 events,
one read; writes RESULTS.md only with ``--results``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

import _common

SECTION = "trace_read"
N_RANKS = 16
# call site: (event type, call id) - the loop body of every rank
SITES = np.array([[50000001, 4], [50000001, 4], [50000001, 3], [50000001, 3],
                  [50000001, 5], [50000001, 5], [50000001, 6], [50000002, 10]], dtype=np.int64)
PCF = """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC


EVENT_TYPE
9   50000001    MPI Point-to-point
VALUES
3   MPI_Isend
4   MPI_Irecv
5   MPI_Wait
6   MPI_Waitall
0   Outside MPI


EVENT_TYPE
9   50000002    MPI Collective Comm
VALUES
10   MPI_Allreduce
0   Outside MPI


EVENT_TYPE
7  42000050 PAPI_TOT_INS ([Instr completed])
7  42000059 PAPI_TOT_CYC ([Total cycles])


EVENT_TYPE
0    70000001    Caller at level 1
0    70000002    Caller at level 2
0    70000003    Caller at level 3
VALUES
0   End
1 main
2 timestep
3 exchange
4 reduce


EVENT_TYPE
0    80000001    Caller line at level 1
0    80000002    Caller line at level 2
VALUES
0   End
""" + "".join(f"{k} {100 + k} (solver.c, app)\n" for k in range(1, 9)) + "\n"


#: Fields of the longest record (the entry event): the width of a row of integers.
WIDTH = 22


@njit(cache=True)
def _rows(fields, counts, steps0, steps1, n_ranks, sites, seed):
    """Fill ``fields``/``counts`` with the records of loop steps [steps0, steps1) for all
    ranks, in time order; returns the number of rows."""
    np.random.seed(seed)
    slot = 10000  # ns per rank per step
    step_ns = slot * n_ranks
    k = 0
    n_sites = sites.shape[0]
    for s in range(steps0, steps1):
        site = s % n_sites
        for r in range(n_ranks):
            task = r + 1
            base = s * step_ns + r * slot
            t_e = base + 2000 + np.random.randint(0, 3000)
            t_x = t_e + 500 + np.random.randint(0, 2000)
            nxt = (s + 1) * step_ns + r * slot + 2000  # next entry is after this
            ins = 100000 + np.random.randint(0, 50000) + 1000 * site
            cyc = 80000 + np.random.randint(0, 30000)
            row = fields[k]  # entry event: call, counters, caller levels
            row[:6] = (2, task, 1, task, 1, t_e)
            row[6:8] = (sites[site, 0], sites[site, 1])
            row[8:12] = (42000050, ins, 42000059, cyc)
            row[12:16] = (70000001, 3 + (site == 7), 80000001, site + 1)
            row[16:22] = (70000002, 2, 80000002, 1, 70000003, 1)
            counts[k] = 22
            fields[k + 1, :8] = (1, task, 1, task, 1, t_e, t_x, 10)  # in-MPI state
            counts[k + 1] = 8
            k += 2
            if sites[site, 1] == 3:  # communication record of an Isend, to the next rank
                peer = (r + 1) % n_ranks + 1
                row = fields[k]
                row[:7] = (3, task, 1, task, 1, t_e, t_e + 100)
                row[7:15] = (peer, 1, peer, 1, t_e, t_x, 4096 << (site & 3), 7)
                counts[k] = 15
                k += 1
            ins_x = 5000 + np.random.randint(0, 900)
            cyc_x = 9000 + np.random.randint(0, 900)
            row = fields[k]  # exit event with counters, then the running state
            row[:8] = (2, task, 1, task, 1, t_x, sites[site, 0], 0)
            row[8:12] = (42000050, ins_x, 42000059, cyc_x)
            counts[k] = 12
            fields[k + 1, :8] = (1, task, 1, task, 1, t_x, nxt, 1)
            counts[k + 1] = 8
            k += 2
    return k


def write_trace(path: Path, n_events: int, *, compress: bool = False) -> dict:
    """Write a .prv (or .prv.gz) with about ``n_events`` event records, its .pcf and .row."""
    n_calls = max(n_events // 2, N_RANKS)
    steps = -(-n_calls // N_RANKS)
    duration = (steps + 1) * 10000 * N_RANKS
    header = (f"#Paraver (01/01/2024 at 00:00):{duration}_ns:1({N_RANKS}):1:{N_RANKS}("
              + ",".join("1:1" for _ in range(N_RANKS)) + "),1\n")
    from phasekit.synth.traces import format_int_lines

    per_block = (64 << 20) // 700 // N_RANKS  # loop steps per block (the seed is per block)
    fields = np.zeros((per_block * N_RANKS * 5, WIDTH), dtype=np.int64)
    counts = np.zeros(len(fields), dtype=np.int64)
    buf = np.empty(len(fields) * (WIDTH * 21 + 1), dtype=np.uint8)
    size = 0
    with gzip.open(path, "wb", compresslevel=1) if compress else open(path, "wb") as out:
        out.write(header.encode())
        out.write(b"c:1:1:" + str(N_RANKS).encode() + b":"
                  + ":".join(str(t) for t in range(1, N_RANKS + 1)).encode() + b"\n")
        for s0 in range(0, steps, per_block):
            rows = _rows(fields, counts, s0, min(steps, s0 + per_block), N_RANKS, SITES, s0)
            n = format_int_lines(fields[:rows], counts[:rows], buf)
            out.write(buf[:n].tobytes())
            size += n
    stem = path.name.removesuffix(".gz").removesuffix(".prv")
    (path.parent / (stem + ".pcf")).write_text(PCF)
    (path.parent / (stem + ".row")).write_text(
        f"LEVEL NODE SIZE 1\nnode0\n\nLEVEL THREAD SIZE {N_RANKS}\n"
        + "".join(f"THREAD 1.{t}.1\n" for t in range(1, N_RANKS + 1)))
    return {"calls": steps * N_RANKS, "events": 2 * steps * N_RANKS, "bytes": size}


def child(path: str) -> None:
    """Read ``path`` in this process after a warm-up; print JSON figures: the time, and the
    time in reading (and decompressing) the file and in the parsing kernel (the rest builds
    the columns)."""
    import resource

    from phasekit.io import paraver, read_trace

    tmp = Path(tempfile.mkdtemp())
    try:
        write_trace(tmp / "warm.prv", 200)
        read_trace(tmp / "warm.prv")
    finally:
        shutil.rmtree(tmp)
    spent = {"input": 0.0, "parse": 0.0}

    def timed(cls: type, name: str, key: str) -> None:
        method = getattr(cls, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - start
        setattr(cls, name, wrapper)

    timed(paraver._Blocks, "_fill", "input")  # the reader's own steps
    timed(paraver._Buffers, "scan", "parse")
    start = time.perf_counter()
    trace = read_trace(path)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB
    print(json.dumps({"seconds": seconds, "calls": trace.n_calls, "input_s": spent["input"],
                      "parse_s": spent["parse"], "lines": trace.meta["lines"], "rss_mib": rss}))


def measure(path: Path, repeat: int) -> dict:
    """The median read of ``repeat`` reads, each in a fresh process; the range of the times
    and the largest peak RSS."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, __file__, "--child", str(path)],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    runs.sort(key=lambda run: run["seconds"])
    got = dict(runs[len(runs) // 2])
    got["min_s"], got["max_s"] = runs[0]["seconds"], runs[-1]["seconds"]
    got["rss_mib"] = max(run["rss_mib"] for run in runs)
    return got


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="tiny sizes (smoke test)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="reads of each file, each in a fresh process; the median is "
                             "reported (default 3, 1 with --quick)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    repeat = max(1, args.repeat or (1 if args.quick else 3))
    bench = _common.Run()
    sizes = [(100_000, False), (50_000, True)] if args.quick else [
        (10_000_000, False), (2_000_000, True)]
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="phasekit-trace-read-"))
    try:
        for n_events, compress in sizes:
            path = tmp / (f"bench{n_events}.prv" + (".gz" if compress else ""))
            start = time.perf_counter()
            facts = write_trace(path, n_events, compress=compress)
            print(f"wrote {path.name}: {facts['events']:,} events, "
                  f"{facts['bytes'] / 1e6:.0f} MB in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)
            got = measure(path, repeat)
            if got["calls"] != facts["calls"]:
                raise SystemExit(f"read {got['calls']} calls, wrote {facts['calls']}")
            s = got["seconds"]
            rows.append([path.name.split(".", 1)[1], f"{facts['events']:,}",
                         f"{got['lines']:,}", f"{facts['bytes'] / 1e6:,.0f} MB",
                         _common.seconds(s),
                         f"{_common.seconds(got['min_s'])} - {_common.seconds(got['max_s'])}",
                         _common.seconds(got["input_s"]), _common.seconds(got["parse_s"]),
                         _common.seconds(s - got["input_s"] - got["parse_s"]),
                         f"{got['lines'] / s / 1e6:.2f} M/s",
                         f"{facts['events'] / s / 1e6:.2f} M/s",
                         f"{facts['calls'] / s / 1e6:.2f} M/s",
                         f"{facts['bytes'] / s / 1e6:.0f} MB/s", f"{got['rss_mib']:,.0f} MiB"])
            path.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    header = ["file", "event records", "lines", "uncompressed", "read time",
              f"range ({repeat} read{'s' if repeat > 1 else ''})",
              "input", "parsing", "columns", "lines/s", "events/s", "calls/s", "MB/s",
              "peak RSS"]
    print(_common.text_table(header, rows))
    md = "\n".join([
        "## Paraver reader throughput (`benchmarks/trace_read.py`)", "",
        *_common.machine_lines(bench),
        f"- Generated Extrae-like traces: {N_RANKS} ranks, 8 MPI call sites in a loop, 3 caller "
        "levels, 2 counters at every entry and exit, a state record per call and per burst, a "
        "communication record per MPI_Isend. `read_trace` in a fresh process after a warm-up "
        f"read (modules loaded), one core; the median of {repeat} such reads (their "
        "range beside it) and the largest peak RSS of those processes (Python and numpy "
        "included). Of the median read: *input* is reading (and decompressing) the "
        "file, *parsing* the compiled line parser, *columns* the rest (ordering the calls by "
        "rank, attributing message sizes, the labels, the Trace's columns).", "",
        _common.markdown_table(header, rows, "lrrrrrrrrrrrrr"),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
