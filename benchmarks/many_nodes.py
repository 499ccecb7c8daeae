"""Many nodes: ``phasekit analyze FOLDER`` on the node profiles of one run, serially,
on local worker processes and on a Dask LocalCluster, against one node's time.

The run is ``phasekit.synth.generate_nodes``: 64 NEMO-like node profiles of 10 minutes at 5 ms
(120 000 samples each, Parquet), one shape, one slow and one idle outlier planted. Every
configuration is a fresh ``phasekit analyze`` process on the whole folder (``--json``), timed
from the outside (interpreter start, imports, the analyses, the comparison):

- one node: the task each configuration runs per file (read the profile, analyze it, keep its
  summary), timed in a warm process (numba kernels loaded) on 3 normal nodes, median; with the
  threads the serial path uses (all cores) and with the one thread a worker gets; and, as a
  user without this feature would run it, ``phasekit analyze NODE.parquet --json`` as a
  command of its own (interpreter start and imports included), median of the same 3 nodes;
- serial: ``--workers 1`` (the analyses one after the other in the ``phasekit`` process);
- local: ``--workers 2`` (2 spawned worker processes, 1 numba thread each);
- Dask: ``--scheduler`` on a LocalCluster of 2 worker processes, 1 thread each, started
  before the timed command (its start is shown apart) and cold (its workers import phasekit
  and load numba's kernels on their first task, as the local workers do).

Targets: local <= 64 x (one node's time) / 1.8, and Dask within 10 % of local. One
node's time is taken as a worker runs it, on one thread: the one-file path uses every core
for one node, and on a machine with as many cores as workers no pool of one-thread workers
can beat 64 x that time by more than workers / (its gain from the extra cores), which the
run prints. The JSON results must be equal (the same nodes, agreement and outliers), and
the outliers are scored against the planted ones. Peak RSS: the largest process of the
command (``phasekit`` or one of its workers; getrusage of the reaped children), and VmHWM of
each Dask worker. The measurements run in ``--rounds`` interleaved rounds (this VM's speed
drifts by tens of per cent over minutes): every ratio is taken within a round, and the
median over the rounds is reported.

Run on a quiet machine: ``python benchmarks/many_nodes.py`` (about 4 minutes a round at full size);
``--nodes``, ``--minutes``, ``--workers`` change the sizes; ``--quick``: 4 nodes of 30 s (smoke
test; writes RESULTS.md only with ``--results``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _common

SECTION = "many_nodes"
SPEEDUP_TARGET = 1.8
DASK_TOLERANCE = 1.10
TIMED_NODES = 3
ROUNDS = 3
#: Runs a command and prints, last on stderr, the peak RSS (KiB) of its largest process.
PEAK_WRAPPER = ("import resource, subprocess, sys\n"
                "code = subprocess.call(sys.argv[1:])\n"
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
                "sys.exit(code)\n")


def child(files: list[str]) -> None:
    """Time the per-file task on ``files[1:]`` after a warm-up on ``files[0]``: with the
    serial path's threads, and with one thread as in a worker; print JSON."""
    import functools

    from phasekit.many import periodicity_file
    from phasekit.parallel import call

    task = functools.partial(periodicity_file, metrics=None, window_s=None, options={})
    call(task, files[0])
    call(task, files[0], threads=1)
    serial, single = [], []
    for path in files[1:]:
        start = time.perf_counter()
        outcome = call(task, path)
        serial.append(time.perf_counter() - start)
        start = time.perf_counter()
        call(task, path, threads=1)
        single.append(time.perf_counter() - start)
        if outcome.failure is not None:
            raise SystemExit(outcome.failure.message)
    print(json.dumps({"serial": serial, "single": single}))


def one_node(files: list[Path]) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", *map(str, files)],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {"serial": statistics.median(got["serial"]), "single": statistics.median(got["single"])}


def command(target: Path, *options: str) -> dict:
    """``phasekit analyze TARGET --json OPTIONS`` (a folder or one profile) in a fresh
    process: wall time, peak RSS of its largest process, the JSON."""
    argv = [sys.executable, "-c", PEAK_WRAPPER, sys.executable, "-m", "phasekit.cli",
            "analyze", str(target), "--json", *options]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(argv[3:])} failed ({done.returncode}):\n"
                         + done.stderr[-3000:])
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return {"wall": wall, "rss_mib": peak_kib / 1024, "result": json.loads(done.stdout)}


#: A LocalCluster in a process of its own, so that its cold start is timed apart from the
#: command: prints its address and start time, waits for a line on stdin, prints the peak RSS
#: (VmHWM, MiB) of each worker, stops.
CLUSTER = """
import json, sys, time
from pathlib import Path

def vmhwm_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")

if __name__ == "__main__":
    from distributed import Client, LocalCluster
    start = time.perf_counter()
    with LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        print(json.dumps({"address": cluster.scheduler_address,
                          "start_s": time.perf_counter() - start}), flush=True)
        sys.stdin.readline()
        with Client(cluster.scheduler_address) as client:
            print(json.dumps(list(client.run(vmhwm_mib).values())), flush=True)
"""


def on_dask(folder: Path, workers: int) -> tuple[dict, float, list[float]]:
    """The command on a fresh LocalCluster of ``workers`` processes: its figures, the
    cluster's start time and its workers' peak RSS."""
    with tempfile.TemporaryDirectory() as elsewhere, subprocess.Popen(
            [sys.executable, "-c", CLUSTER, str(workers)], cwd=elsewhere, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE) as cluster:
        assert cluster.stdin is not None and cluster.stdout is not None
        try:
            ready = json.loads(cluster.stdout.readline())
            got = command(folder, "--scheduler", ready["address"])
            cluster.stdin.write("done\n")
            cluster.stdin.flush()
            peaks = json.loads(cluster.stdout.readline())
        except BaseException:
            cluster.kill()
            raise
    return got, float(ready["start_s"]), [float(p) for p in peaks]


def same(a: dict, b: dict) -> bool:
    keys = ("nodes", "agreement", "outliers", "errors")
    from phasekit.results import json_close

    return all(json_close(a[k], b[k]) for k in keys)


def one_round(folder: Path, normal: list[Path], workers: int) -> dict[str, Any]:
    """One node's time, then the serial, local and Dask commands, one after the other."""
    node = one_node(normal[-1:] + normal[:TIMED_NODES])
    node["command"] = statistics.median(command(p)["wall"] for p in normal[:TIMED_NODES])
    serial = command(folder, "--workers", "1")
    local = command(folder, "--workers", str(workers))
    dask, started, peaks = on_dask(folder, workers)
    print(f"  one node {node['serial']:.3f} s (1 thread {node['single']:.3f} s, command "
          f"{node['command']:.2f} s); serial "
          f"{serial['wall']:.1f} s, local {local['wall']:.1f} s, Dask {dask['wall']:.1f} s",
          file=sys.stderr, flush=True)
    return {"node": node, "serial": serial, "local": local, "dask": dask,
            "dask_start": started, "dask_peaks": peaks}


def spread(values: Sequence[float]) -> str:
    """The median of ``values`` and, for several, their range."""
    text = _common.seconds(statistics.median(values))
    if len(values) > 1:
        text += f" ({_common.seconds(min(values))}-{_common.seconds(max(values))})"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="4 nodes of 30 s (smoke test)")
    parser.add_argument("--nodes", type=int, default=None, help="node profiles (default 64)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="minutes per profile (default 10)")
    parser.add_argument("--workers", type=int, default=2, help="local and Dask workers")
    parser.add_argument("--rounds", type=int, default=None,
                        help=f"rounds of all the measurements, interleaved (default {ROUNDS}; "
                             "quick 1)")
    parser.add_argument("--kind", default="nemo", help="synthetic application (nemo)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the profiles into this folder and keep them")
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    from phasekit.io import write_profile
    from phasekit.parallel import available_cores
    from phasekit.synth import OUTLIER_KINDS, generate_nodes

    bench = _common.Run()
    n_nodes = args.nodes or (4 if args.quick else 64)
    minutes = args.minutes or (0.5 if args.quick else 10.0)
    n_rounds = args.rounds or (1 if args.quick else ROUNDS)
    outliers = OUTLIER_KINDS if n_nodes >= 8 else ()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="phasekit-nodes-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        profiles, truth = generate_nodes(args.kind, n_nodes=n_nodes, minutes=minutes, seed=0,
                                         outliers=outliers)
        paths = {}
        for profile in profiles:
            paths[profile.node] = folder / f"{profile.node}.parquet"
            write_profile(profile, paths[profile.node])
        n_samples = profiles[0].n_samples
        del profiles
        print(f"wrote {n_nodes} profiles of {n_samples:,} samples in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        normal = [paths[n] for n in truth.normal]
        rounds = []
        for k in range(n_rounds):
            print(f"round {k + 1} of {n_rounds}", file=sys.stderr, flush=True)
            rounds.append(one_round(folder, normal, args.workers))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)

    def walls(name: str) -> list[float]:
        return [r[name]["wall"] for r in rounds]

    def per_round(value: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(value(r) for r in rounds)

    def speedup(name: str, basis: str) -> float:
        """``n_nodes`` x one node's time (``basis``: serial, single or command) / the wall
        time of configuration ``name``, within each round."""
        return per_round(lambda r: n_nodes * r["node"][basis] / r[name]["wall"])

    first = rounds[0]
    consistent = all(same(first["serial"]["result"], r[name]["result"])
                     for r in rounds for name in ("serial", "local", "dask"))
    flagged = {o["node"]: o["reasons"] for o in first["local"]["result"]["outliers"]}
    found = sorted(n for n in truth.outliers if n in flagged)
    false = sorted(set(flagged) - set(truth.outliers))
    agreement = first["local"]["result"]["agreement"]
    local_speedup = speedup("local", "single")
    dask_ratio = per_round(lambda r: r["dask"]["wall"] / r["local"]["wall"])
    threads_gain = per_round(lambda r: r["node"]["single"] / r["node"]["serial"])
    header = ["configuration", f"wall, median of {n_rounds} (range)", "per node",
              "speed-up vs serial", f"{n_nodes} x one node (1 thread) / wall",
              f"{n_nodes} x one node (all cores) / wall",
              f"{n_nodes} x one node's own command / wall", "target", "peak RSS"]

    def measured(name: str, label: str, target: str, rss: str) -> list[str]:
        return [label, spread(walls(name)),
                _common.seconds(statistics.median(walls(name)) / n_nodes),
                f"{per_round(lambda r: r['serial']['wall'] / r[name]['wall']):.2f}",
                f"{speedup(name, 'single'):.2f}", f"{speedup(name, 'serial'):.2f}",
                f"{speedup(name, 'command'):.2f}", target, rss]

    rows = [
        ["one node, all cores (the one-file path; warm)",
         spread([r["node"]["serial"] for r in rounds]), "", "", "", "", "", "", ""],
        ["one node, 1 thread (as in a worker; warm)",
         spread([r["node"]["single"] for r in rounds]), "", "", "", "", "", "", ""],
        ["one node, its own command (`phasekit analyze NODE.parquet`)",
         spread([r["node"]["command"] for r in rounds]), "", "", "", "", "", "", ""],
        measured("serial", "serial: `--workers 1`", "",
                 f"{max(r['serial']['rss_mib'] for r in rounds):,.0f} MiB"),
        measured("local", f"local: `--workers {args.workers}`",
                 f">= {SPEEDUP_TARGET} (1 thread): "
                 + ("meets" if local_speedup >= SPEEDUP_TARGET else "misses"),
                 f"{max(r['local']['rss_mib'] for r in rounds):,.0f} MiB"),
        measured("dask", f"Dask LocalCluster, {args.workers} workers (start "
                         f"{spread([r['dask_start'] for r in rounds])} apart)",
                 f"<= {DASK_TOLERANCE:.2f} x local: {dask_ratio:.2f} x, "
                 + ("meets" if dask_ratio <= DASK_TOLERANCE else "misses"),
                 f"{max(max(r['dask_peaks'], default=float('nan')) for r in rounds):,.0f} MiB "
                 "per worker"),
    ]
    print(_common.text_table(header, rows))
    outcome = (f"same JSON result in every configuration and round (numbers to 1e-9): "
               f"{'yes' if consistent else 'NO'}; reference node {agreement['reference']}, all "
               f"agree: {agreement['agree']} (largest distance "
               f"{100 * (agreement['max_distance'] or 0):.2f} % of the pattern mean); outliers "
               f"found {len(found)} of {len(truth.outliers)} planted, {len(false)} other "
               "node(s) flagged")
    basis = (f"one node takes {threads_gain:.2f} x longer on 1 thread than on all "
             f"{available_cores()} cores, so {args.workers} one-thread workers cannot beat "
             f"{n_nodes} x the all-cores time by more than {args.workers / threads_gain:.2f} x, "
             "even with nothing to start")
    print(outcome)
    print(basis)
    md = "\n".join([
        "## Many nodes: serial, local processes, Dask (`benchmarks/many_nodes.py`)", "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}; {n_nodes} node profiles of {minutes:g} min at 5 ms "
        f"({n_samples:,} samples, Parquet) from `phasekit.synth.generate_nodes('{args.kind}', "
        f"seed=0)`, outliers planted: {', '.join(outliers) or 'none'}.",
        f"- {n_rounds} rounds; each measures one node, then runs the serial, local and Dask "
        "commands one after the other. This VM's speed drifts by tens of per cent over "
        "minutes, so every ratio is taken within a round; the table gives the medians over "
        "the rounds. Each command: one fresh `phasekit analyze FOLDER --json` process, timed "
        "from outside (start, imports, analyses, comparison). One node: the per-file task "
        f"(read, analyze, summarize) in a warm process, median of {TIMED_NODES} normal nodes. "
        f"Target: {n_nodes} x one node / wall >= {SPEEDUP_TARGET} with {args.workers} local "
        "workers, one node timed as a worker runs it (1 thread); Dask within 10 % of local "
        "(its cluster started before the timed command, its workers cold). Peak RSS: the "
        "largest process of the command; for Dask the largest worker (VmHWM).",
        f"- {outcome}.",
        f"- The all-cores basis: {basis}.", "",
        f"- The command basis: {n_nodes} separate `phasekit analyze NODE.parquet` commands "
        "(a shell loop, what the many-inputs path replaces) each pay the interpreter start "
        "and the imports that one run of the many-inputs path pays once per worker; shown "
        "for completeness, the target is judged on the 1-thread basis.", "",
        _common.markdown_table(header, rows, "lrrrrrrll"),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0 if consistent else 1


if __name__ == "__main__":
    sys.exit(main())
