"""Recorder overhead: recorder CPU time per second, slowdown of a fixed CPU-bound
child, and interval jitter, at 5, 10 and 100 ms.

The child is a small C program (compiled here with gcc) that runs a fixed dependent
floating-point chain on 1 thread (the recorder has the other core to itself) or on as many
threads as there are cores (the recorder competes with it); it prints the wall time of its
work loop only (clock_gettime around it), so start-up is not counted. Each configuration runs
``--reps`` times, interleaved with unrecorded runs of the same child (the baseline), and the
slowdown is the median over the pairs (one recorded run, one unrecorded run next to it, in
alternating order) of recorded / unrecorded - 1; the table also gives the smallest and
largest pair, a measure of this shared machine's noise.

The recorder runs in this process exactly as ``phasekit record`` runs it (node scope, every
source that works here); its CPU time is ``time.process_time()`` over the recording (all its
threads; the child's time is not included), divided by the recording's duration.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

SECTION = "record_overhead"
PER_SOURCE_NOTE = (
    "Most of a sample's cost is in the kernel: reading the other CPU's counters (perf-sw, "
    "node scope) interrupts that CPU, an IPI, costly in a virtual machine; /proc files are "
    "formatted by the kernel at every read. The recorder's CPU time per second is charged by "
    "the kernel's tick-based accounting, which over-charges a task that wakes in step with the "
    "timer: read it as an upper bound; the child's slowdown is the measure.")
INTERVALS = (0.005, 0.010, 0.100)
TARGETS = {0.005: 0.03, 0.100: 0.01}  # the largest slowdown accepted per sampling interval
CHILD_SOURCE = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long n;
static volatile double sink;
static void *work(void *arg) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
    return arg;
}
int main(int argc, char **argv) {
    n = atol(argv[1]);
    int threads = atoi(argv[2]);
    pthread_t tid[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int t = 0; t < threads; t++) pthread_create(&tid[t], NULL, work, NULL);
    for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.6f\n", (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""


def build_child(folder: Path) -> Path:
    if shutil.which("gcc") is None:
        raise SystemExit("record_overhead.py needs gcc to build its fixed CPU-bound child")
    source, binary = folder / "busy.c", folder / "busy"
    source.write_text(CHILD_SOURCE, encoding="utf-8")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", str(binary), str(source)], check=True)
    return binary


def calibrate(binary: Path, seconds: float) -> int:
    """Iterations that take about ``seconds`` on one thread."""
    n = 10_000_000
    elapsed = float(subprocess.run([str(binary), str(n), "1"], capture_output=True, text=True,
                                   check=True).stdout)
    return max(1_000_000, int(n * seconds / max(elapsed, 1e-3)))


def baseline(binary: Path, n: int, threads: int) -> float:
    done = subprocess.run([str(binary), str(n), str(threads)], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def recorded(binary: Path, n: int, threads: int, interval: float, folder: Path,
             source_names: list[str] | None = None, loop: str = "compiled"
             ) -> tuple[float, dict[str, float]]:
    """Child work time under the recorder (``loop``: its compiled sampling loop, the
    default, or the pure-Python one), and the recorder's figures."""
    from phasekit.record import Recorder, builtin_sources, select_sources

    output = folder / f"rec-{interval}-{threads}.parquet"
    output.unlink(missing_ok=True)
    log = folder / "child.out"
    sources = select_sources(source_names, builtin_sources())
    forced = os.environ.pop("PHASEKIT_SAMPLER", None)
    if loop == "python":
        os.environ["PHASEKIT_SAMPLER"] = "python"
    with open(log, "w") as sink:
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            summary = Recorder(sources, interval=interval).run(
                output, command=[str(binary), str(n), str(threads)])
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.environ.pop("PHASEKIT_SAMPLER", None)
            if forced is not None:
                os.environ["PHASEKIT_SAMPLER"] = forced
    if not summary.sampler.startswith(loop):
        raise SystemExit(f"asked for the {loop} sampling loop, the recorder ran "
                         f"{summary.sampler}")
    work = float(log.read_text().strip().splitlines()[-1])
    figures = {"cpu_per_s": summary.recorder_cpu_s / max(summary.duration, 1e-9),
               "p50": summary.jitter_p50, "p99": summary.jitter_p99, "max": summary.jitter_max,
               "missed": summary.missed_ticks, "samples": summary.n_samples,
               "achieved": summary.achieved_interval}
    return work, figures | {"sources": ",".join(summary.sources),  # type: ignore[operator]
                            "sampler": summary.sampler}


def measure(binary: Path, n: int, threads: int, interval: float, reps: int, folder: Path,
            source_names: list[str] | None = None, loop: str = "compiled") -> dict[str, object]:
    base, rec, figures = [], [], []
    for k in range(reps):  # pairs, in alternating order so that a slow drift cancels
        if k % 2 == 0:
            base.append(baseline(binary, n, threads))
        work, fig = recorded(binary, n, threads, interval, folder, source_names, loop)
        if k % 2 == 1:
            base.append(baseline(binary, n, threads))
        rec.append(work)
        figures.append(fig)
    b, r = statistics.median(base), statistics.median(rec)
    pairs = [w / u - 1 for w, u in zip(rec, base, strict=True)]
    pick = {k: statistics.median(float(f[k]) for f in figures)
            for k in ("cpu_per_s", "p50", "p99", "max", "missed", "achieved")}
    return {"interval": interval, "threads": threads, "baseline": b, "recorded": r,
            "slowdown": statistics.median(pairs), "pair_range": (min(pairs), max(pairs)),
            "base_spread": (min(base), max(base)),
            "rec_spread": (min(rec), max(rec)), "sources": figures[0]["sources"],
            "loop": loop, "sampler": figures[0]["sampler"], **pick}


def report(rows: list[dict[str, object]], bench: _common.Run, reps: int, work_s: float
           ) -> tuple[str, str]:
    header = ["loop", "interval", "child threads", "child work: unrecorded (median)",
              "recorded (median)", "slowdown (median of pairs)", "pairs: min / max", "target", "recorder CPU per s of recording",
              "jitter p50 / p99 / max", "missed ticks (median)", "achieved interval"]
    table = []
    for r in rows:
        interval = float(r["interval"])  # type: ignore[arg-type]
        target = TARGETS.get(interval)
        slowdown = float(r["slowdown"])  # type: ignore[arg-type]
        verdict = "" if target is None else (
            f"<= {100 * target:g} %: " + ("meets" if slowdown <= target else "**misses**"))
        table.append([
            r["loop"], f"{interval * 1e3:g} ms", r["threads"], f"{r['baseline']:.3f} s",
            f"{r['recorded']:.3f} s", f"{100 * slowdown:+.2f} %",
            "{:+.2f} / {:+.2f} %".format(*(100 * x for x in r["pair_range"])),  # type: ignore[attr-defined]
            verdict,
            f"{1e3 * float(r['cpu_per_s']):.1f} ms ({100 * float(r['cpu_per_s']):.2f} %)",  # type: ignore[arg-type]
            f"{1e3 * float(r['p50']):.3f} / {1e3 * float(r['p99']):.3f} / "  # type: ignore[arg-type]
            f"{1e3 * float(r['max']):.2f} ms",  # type: ignore[arg-type]
            f"{float(r['missed']):g}", f"{1e3 * float(r['achieved']):.4f} ms"])  # type: ignore[arg-type]
    text = _common.text_table(header, table)
    p99_5ms = [float(r["p99"]) for r in rows  # type: ignore[arg-type]
               if r["interval"] == 0.005 and r["loop"] == "compiled"]
    jitter = ("" if not p99_5ms else
              f"Jitter p99 at 5 ms, compiled loop: {1e3 * max(p99_5ms):.3f} ms (target <= 1 ms: "
              + ("meets" if max(p99_5ms) <= 1e-3 else "**misses**") + ").")
    md = "\n".join([
        "## Recorder overhead (`benchmarks/record_overhead.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {bench.elapsed() / 60:.1f} min. Child: a C loop of a dependent "
        f"floating-point chain, ~{work_s:g} s of work per thread, on 1 thread (the recorder "
        f"has the other core) and on {os.cpu_count()} threads (every core busy: the recorder "
        "competes with the child). "
        f"{reps} pairs per row: a recorded run and an unrecorded run of the same child next "
        "to it (alternating which comes first); slowdown: median over the pairs. Recorder: node scope, every source that works here "
        f"({rows[0]['sources'] if rows else '-'}), as `phasekit record` runs it; its CPU "
        "time (all its threads, not the child's) per second of recording.",
        "- Loop: `compiled` is the default, the sampling loop in a native thread "
        f"({rows[0]['sampler'] if rows else '-'}); `python` the pure-Python loop it replaced "
        "(`PHASEKIT_SAMPLER=python`, kept for machines without a C compiler), run for "
        "comparison where the recorder competes with the child.",
        "- Jitter: lateness of each sample against its deadline on the monotonic clock.",
        "",
        _common.markdown_table(header, table, "llrrrrrlrrrr"),
        "",
        jitter,
    ])
    return text, md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one tiny run (smoke test)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--work", type=float, default=10.0,
                        help="seconds of child work (long enough that the recorder's start-up, "
                             "a few tens of ms, weighs less than the per-sample cost)")
    parser.add_argument("--results", type=Path, default=None,
                        help="RESULTS.md to update (default benchmarks/RESULTS.md; "
                             "not written in --quick mode unless given)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    reps, work_s = (1, 0.3) if args.quick else (args.reps, args.work)
    intervals = (0.01,) if args.quick else INTERVALS
    thread_counts = (1,) if args.quick else (1, os.cpu_count() or 1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="phasekit-overhead-") as tmp:
        folder = Path(tmp)
        binary = build_child(folder)
        n = calibrate(binary, work_s)
        for threads in thread_counts:
            for interval in intervals:
                print(f"{interval * 1e3:g} ms, {threads} thread(s) ...", file=sys.stderr,
                      flush=True)
                started = time.perf_counter()
                rows.append(measure(binary, n, threads, interval, reps, folder))
                print(f"  {time.perf_counter() - started:.1f} s", file=sys.stderr)
        if not args.quick:  # the Python loop where the recorder competes, for comparison
            for interval in (0.005, 0.100):
                print(f"{interval * 1e3:g} ms, {os.cpu_count()} threads, Python loop ...",
                      file=sys.stderr, flush=True)
                rows.append(measure(binary, n, os.cpu_count() or 1, interval, reps, folder,
                                    loop="python"))
        per_source = []
        if not args.quick:
            from phasekit.record import builtin_sources, probe_all

            names = [a.name for a in probe_all(builtin_sources()) if a.available]
            for name in names:
                print(f"5 ms, {os.cpu_count()} threads, {name} alone ...", file=sys.stderr)
                per_source.append((name, measure(binary, n, os.cpu_count() or 1, 0.005, reps,
                                                 folder, [name])))
    text, md = report(rows, bench, reps, work_s)
    if per_source:
        head = ["source alone", "child slowdown (5 ms, every core busy)",
                "recorder CPU per s", "jitter p99"]
        lines = [[name, f"{100 * float(r['slowdown']):+.2f} %",  # type: ignore[arg-type]
                  f"{1e3 * float(r['cpu_per_s']):.1f} ms",  # type: ignore[arg-type]
                  f"{1e3 * float(r['p99']):.3f} ms"] for name, r in per_source]  # type: ignore[arg-type]
        text += "\n\n" + _common.text_table(head, lines)
        md += "\n\n" + "\n".join([
            "Per source, at 5 ms with every core busy (where the recorder competes):", "",
            _common.markdown_table(head, lines, "lrrr"), "",
            PER_SOURCE_NOTE])
    print(text)
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
