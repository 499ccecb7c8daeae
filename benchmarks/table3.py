"""Phase-TA's Table III: analysis time and peak memory of phasekit, with DTW baselines beside it.

For NEMO-, HPCG- and OpenFOAM-like synthetic profiles (``phasekit.synth``, seed 0) of 1, 3, 5,
10, 15, 30 and 45 minutes at 5 ms, each size runs in a fresh subprocess that

1. times ``phasekit.periodicity.analyze(profile)``: one warm-up run on the same profile (it
   loads or compiles the numba kernels; reported as "first call"), then the median of 3 runs
   up to 10 minutes and 1 run above;
2. reads the process's peak RSS (``ru_maxrss``, the whole process: interpreter, imports,
   profile, analysis) *before* any baseline is imported;
3. on the SAME instances phasekit clustered (each pattern's instances, ``instances_of``, raw
   1-D), times the baselines per pattern and sums over patterns:
   - dtaidistance ``dtw.distance_matrix_fast(window=r + 1)`` (C, OpenMP on all cores) and
     ``dtw_barycenter.dba_loop(max_it=31, thr=None, use_c=True, window=r + 1)``;
   - tslearn ``metrics.cdist_dtw(global_constraint="sakoe_chiba", sakoe_chiba_radius=r)`` on
     NaN-padded series (tslearn strips the NaN tail of every series, ``_cdist_generic``) and
     ``barycenters.dtw_barycenter_averaging(max_iter=31, tol=0)`` with the same band;
   - phasekit's own pieces on those instances: the clustering (``cluster.single_linkage``),
     DBA forced to 31 iterations (``average.dba``) and, for a kernel-to-kernel comparison, the
     full banded DTW_2 matrix (``distance.dtw.dtw2_matrix``), which the analysis never builds
     above 64 instances.

   ``r = ceil(0.1 x median instance length)``, phasekit's 10 % band. dtaidistance's
   ``window`` admits ``|i - j| < window + |len(a) - len(b)|``, so ``window = r + 1`` allows a
   shift of r samples. Both baseline DBAs start from the shortest instance (dtaidistance
   2.5.1's C ``dba_loop`` aborts with heap corruption when, with a window, the initial average
   is longer than one of the series) and run exactly 31
   iterations (no early stop); phasekit's analysis stops DBA early (5 x 2.5 %), so the DBA
   comparison uses phasekit's DBA forced to 31 iterations too.

Baseline calls get a time budget: a pilot on the first few instances estimates the cost per
pair (distance matrices) or per instance (DBA); when the whole set would exceed the budget the
call runs on the first N instances only and is extrapolated quadratically (matrices) or
linearly (DBA). Every extrapolated figure is marked.

Run: ``python benchmarks/table3.py [--quick]`` (``--quick``: one small size, tiny budgets, no
RESULTS.md unless ``--results`` is given).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _common

KINDS = ("nemo", "hpcg", "openfoam")
MINUTES = (1, 3, 5, 10, 15, 30, 45)
SEED = 0
BAND = 0.1
DBA_ITERATIONS = 31
SECTION = "table3"
# Phase-TA Table III (seconds, 32-core Xeon of the dahu cluster)
SEED_TABLE = {
    "hpcg": (0.44, 1.18, 2.67, 9.33, 19.60, 76.00, 168.84),
    "nemo": (0.45, 1.16, 2.67, 8.73, 18.38, 71.13, 162.76),
    "openfoam": (0.84, 1.40, 2.62, 6.95, 13.36, 46.98, 73.69),
}
TARGETS = {10: 2.0, 45: 10.0}  # seconds on this 2-core machine
PEAK_TARGET_MB = 2048.0


# --- worker: one size in a fresh process --------------------------------------------------
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def budgeted(call: Callable[[int], float], n: int, cost: Callable[[int], float],
             budget: float, pilot: int) -> tuple[float, int]:
    """Seconds of ``call`` on all ``n`` instances, measured or extrapolated, and the number of
    instances actually measured. ``call(N)`` runs on the first N instances and returns its
    wall time; ``cost(N)`` is its work (pairs or instances)."""
    if n <= pilot:
        return call(n), n
    per_unit = call(pilot) / cost(pilot)
    if per_unit * cost(n) <= budget:
        return call(n), n
    size = pilot
    while size < n and per_unit * cost(size + 1) <= budget:
        size += 1
    elapsed = call(size) if size > pilot else per_unit * cost(pilot)
    return elapsed * cost(n) / cost(size), size


def pairs(n: int) -> float:
    return n * (n - 1) / 2.0


def instances(n: int) -> float:
    return float(n)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def worker(config: dict) -> dict:
    """Everything measured for one (kind, minutes) size; runs in its own process."""
    import numpy as np

    from phasekit.distance.dtw import dtw2_matrix
    from phasekit.periodicity import analyze, average, cluster, instances_of
    from phasekit.synth import generate

    kind, minutes, runs = config["kind"], config["minutes"], config["runs"]
    budgets, pilot = config["budgets"], config["pilot"]
    profile, _ = generate(kind, minutes=minutes, seed=SEED)
    first = timed(lambda: analyze(profile))  # warm-up: loads or compiles the numba kernels
    walls, cpus = [], []
    result = None
    load = os.getloadavg()[0]
    marks: dict[str, float] = {}

    def progress(stage: str, fraction: float) -> None:
        marks.setdefault(stage, time.perf_counter())

    for _ in range(runs):
        marks.clear()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = analyze(profile, progress=progress)
        walls.append(time.perf_counter() - wall0)
        cpus.append(time.process_time() - cpu0)
    # stages of the last run: window tuning, extraction (+ phase alignment), clustering + DBA
    end = marks.get("done", time.perf_counter())
    clustering = marks.get("clustering instances", end)
    stages = {"tuning": marks.get("extracting instances", end) - marks["tuning the window"],
              "extraction": clustering - marks.get("extracting instances", end),
              "clustering": end - clustering}
    peak = peak_rss_mb()  # before any baseline is imported or run
    assert result is not None
    out: dict = {
        "kind": kind, "minutes": minutes, "n_samples": profile.n_samples,
        "first_call": first, "walls": walls, "cpus": cpus, "peak_rss_mb": peak,
        "load": load, "stages": stages,
        "coverage": result.coverage, "window": result.window, "patterns": [],
    }
    sets = []
    for index, pattern in enumerate(result.patterns):
        X, lengths = instances_of(profile, result, index)
        series = [np.ascontiguousarray(X[i, :lengths[i], 0]) for i in range(lengths.size)]
        radius = math.ceil(BAND * float(np.median(lengths)))
        # start both baseline DBAs from the shortest instance: dtaidistance 2.5.1's C dba
        # corrupts the heap (abort) on series of different lengths when the initial average is
        # longer than one of them and a window is set
        shortest = int(np.argmin(lengths))
        sets.append((X, lengths, series, radius, series[shortest]))
        out["patterns"].append({"n": int(lengths.size), "length": float(lengths.mean()),
                                "radius": radius, "coverage": pattern.coverage,
                                "dba_iterations": pattern.dba_iterations})
    share = max(1, len(sets))

    def measure(name: str, make: Callable[[tuple], Callable[[int], float]],
                cost: Callable[[int], float]) -> None:
        total, measured, extrapolated = 0.0, 0, False
        for item in sets:
            n = int(item[1].size)
            seconds, used = budgeted(make(item), n, cost, budgets[name] / share, pilot)
            total += seconds
            measured += used
            extrapolated |= used < n
        out[name] = {"seconds": total, "measured": measured,
                     "n": sum(int(s[1].size) for s in sets), "extrapolated": extrapolated}
        print(f"  {kind} {minutes} min {name}: {total:.3f} s"
              f"{' (extrapolated)' if extrapolated else ''}", file=sys.stderr, flush=True)

    # phasekit's own pieces on the same instances
    measure("pk_cluster", lambda s: lambda N: timed(
        lambda: cluster.single_linkage(s[0][:N], s[1][:N], band=BAND)), instances)
    measure("pk_dba31", lambda s: lambda N: timed(
        lambda: average.dba(s[0][:N], s[1][:N], band=BAND, max_iter=DBA_ITERATIONS,
                            n_consecutive=10**9)), instances)
    measure("pk_matrix", lambda s: lambda N: timed(
        lambda: dtw2_matrix(s[0][:N], s[1][:N], BAND)), pairs)

    # baselines, imported only now so that the peak RSS above is phasekit's
    import warnings

    warnings.filterwarnings("ignore", message="h5py not installed")
    from dtaidistance import dtw as dtai_dtw
    from dtaidistance import dtw_barycenter
    from tslearn.barycenters import dtw_barycenter_averaging
    from tslearn.metrics import cdist_dtw
    from tslearn.utils import to_time_series_dataset

    use_c = bool(dtai_dtw.try_import_c())
    out["dtai_use_c"] = use_c
    tiny = [np.sin(np.linspace(0, 6, 30 + k)) for k in range(3)]  # shortest first
    warm = time.perf_counter()  # tslearn's numba kernels are not cached: compile them now
    if config["tslearn"]:
        cdist_dtw(to_time_series_dataset(tiny), global_constraint="sakoe_chiba",
                  sakoe_chiba_radius=3)
        dtw_barycenter_averaging(to_time_series_dataset(tiny), init_barycenter=tiny[0],
                                 max_iter=2, metric_params={"global_constraint": "sakoe_chiba",
                                                            "sakoe_chiba_radius": 3})
    dtai_dtw.distance_matrix_fast(tiny, window=4)
    dtw_barycenter.dba_loop(tiny, c=tiny[0], max_it=2, thr=None, use_c=use_c, window=4)
    out["baseline_warmup"] = time.perf_counter() - warm
    datasets = [to_time_series_dataset(s[2]) for s in sets]
    by_id = {id(s): d for s, d in zip(sets, datasets, strict=True)}

    def sc(radius: int) -> dict:
        return {"global_constraint": "sakoe_chiba", "sakoe_chiba_radius": radius}

    measure("dtai_matrix", lambda s: lambda N: timed(
        lambda: dtai_dtw.distance_matrix_fast(s[2][:N], window=s[3] + 1)), pairs)
    measure("dtai_dba", lambda s: lambda N: timed(
        lambda: dtw_barycenter.dba_loop(s[2][:N], c=s[4], max_it=DBA_ITERATIONS, thr=None,
                                        use_c=use_c, window=s[3] + 1)), instances)
    if not config["tslearn"]:
        return out
    measure("tslearn_matrix", lambda s: lambda N: timed(
        lambda: cdist_dtw(by_id[id(s)][:N], **sc(s[3]))), pairs)
    measure("tslearn_dba", lambda s: lambda N: timed(
        lambda: dtw_barycenter_averaging(by_id[id(s)][:N], init_barycenter=s[4],
                                         max_iter=DBA_ITERATIONS, tol=0.0,
                                         metric_params=sc(s[3]))), instances)
    return out


def import_baseline_mb() -> float:
    """Peak RSS of a process that only imported phasekit (and its analysis modules)."""
    code = ("import resource, phasekit, phasekit.periodicity, phasekit.synth; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) / 1024.0


def run_size(config: dict) -> dict:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                           json.dumps(config)], capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"worker for {config} failed with exit code {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report --------------------------------------------------------------------------------
def cell(entry: dict | None) -> str:
    if entry is None:
        return "skipped"
    text = _common.seconds(entry["seconds"])
    if entry["extrapolated"]:
        return f"~{text} (extrapolated from {entry['measured']} of {entry['n']} instances)"
    return text


def ratio(numerator: dict | None, denominator: float) -> str:
    if numerator is None:
        return "skipped"
    value = numerator["seconds"] / denominator
    return ("~" if numerator["extrapolated"] else "") + f"{value:.1f}x"


def median_wall(row: dict) -> float:
    return statistics.median(row["walls"])


def report(rows: list[dict], base_mb: float, bench: _common.Run,
           budgets: dict) -> tuple[str, str]:
    """Terminal text and the markdown section."""
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    minutes = list(dict.fromkeys(r["minutes"] for r in rows))
    get = {(r["kind"], r["minutes"]): r for r in rows}
    head = ["profile"] + [f"{m} min" for m in minutes]
    table = []
    for kind in kinds:
        table.append([f"{kind} (phasekit)"] + [
            _common.seconds(median_wall(get[kind, m])) if (kind, m) in get else ""
            for m in minutes])
        if kind in SEED_TABLE:
            table.append([f"{kind} (Phase-TA, 32 cores)"] + [
                f"{SEED_TABLE[kind][MINUTES.index(m)]:.2f} s" if m in MINUTES else ""
                for m in minutes])
    detail_head = ["profile", "min", "samples", "patterns", "instances (mean length)",
                   "first call", "median (min-max) of runs", "CPU time / run",
                   "tuning / extraction / clustering+DBA (last run)", "peak RSS",
                   "load (1 min) at start"]
    detail = []
    for r in rows:
        walls = r["walls"]
        inst = " + ".join(f"{p['n']} ({p['length']:.0f})" for p in r["patterns"]) or "0"
        spread = (f"{_common.seconds(median_wall(r))} ({_common.seconds(min(walls))}-"
                  f"{_common.seconds(max(walls))}, {len(walls)} run{'s' if len(walls) > 1 else ''})")
        detail.append([r["kind"], r["minutes"], r["n_samples"], len(r["patterns"]), inst,
                       _common.seconds(r["first_call"]), spread,
                       _common.seconds(statistics.median(r["cpus"])),
                       " / ".join(_common.seconds(r["stages"][k])
                                  for k in ("tuning", "extraction", "clustering")),
                       f"{r['peak_rss_mb']:.0f} MB", f"{r['load']:.2f}"])
    base_head = ["profile", "min", "phasekit whole analysis", "dtaidistance matrix",
                 "ratio dtai matrix / phasekit", ">= 5x?", "tslearn matrix",
                 "ratio tslearn matrix / phasekit", "phasekit full DTW_2 matrix",
                 "phasekit clustering"]
    base = []
    dba_head = ["profile", "min", "phasekit DBA (31 it.)", "dtaidistance dba_loop (31 it.)",
                "ratio", "tslearn DBA (31 it.)", "ratio", "phasekit DBA iterations in analysis"]
    dba = []
    holds = []
    for r in rows:
        whole = median_wall(r)
        if not r["patterns"]:
            base.append([r["kind"], r["minutes"], _common.seconds(whole)] + ["no pattern"] * 7)
            continue
        dtai = r["dtai_matrix"]
        ok = dtai["seconds"] / whole >= 5.0
        holds.append(((r["kind"], r["minutes"]), ok))
        base.append([r["kind"], r["minutes"], _common.seconds(whole), cell(dtai),
                     ratio(dtai, whole), "yes" if ok else "**no**", cell(r.get("tslearn_matrix")),
                     ratio(r.get("tslearn_matrix"), whole), cell(r["pk_matrix"]),
                     cell(r["pk_cluster"])])
        pk = r["pk_dba31"]["seconds"]
        dba.append([r["kind"], r["minutes"], cell(r["pk_dba31"]), cell(r["dtai_dba"]),
                    ratio(r["dtai_dba"], pk), cell(r.get("tslearn_dba")),
                    ratio(r.get("tslearn_dba"), pk),
                    ", ".join(str(p["dba_iterations"]) for p in r["patterns"])])
    checks = []
    for m, limit in TARGETS.items():
        for kind in kinds:
            if (kind, m) in get:
                t = median_wall(get[kind, m])
                checks.append(f"{kind} {m} min: {_common.seconds(t)} "
                              f"({'meets' if t <= limit else '**misses**'} <= {limit:.0f} s)")
    checks = checks or ["not measured (no 10- or 45-minute size in this run)"]
    peak = max(r["peak_rss_mb"] for r in rows)
    holding = [f"{k} {m}" for (k, m), ok in holds if ok]
    failing = [f"{k} {m}" for (k, m), ok in holds if not ok]

    text = "\n\n".join([
        "Table III (phasekit wall time, median):\n" + _common.text_table(head, table),
        "Per size:\n" + _common.text_table(detail_head, detail),
        "Distance matrices:\n" + _common.text_table(base_head, base),
        "DBA:\n" + _common.text_table(dba_head, dba),
        "Targets: " + "; ".join(checks) + f"; peak RSS max {peak:.0f} MB "
        f"({'meets' if peak <= PEAK_TARGET_MB else 'misses'} <= 2 GB)",
    ])
    md = "\n".join([
        "## Table III: analysis time and memory, with DTW baselines (`benchmarks/table3.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {bench.elapsed() / 60:.1f} min. Profiles: `phasekit.synth.generate(kind, "
        f"minutes=M, seed={SEED})`, 5 ms sampling. Each size ran in a fresh process; a process "
        f"that only imported phasekit peaks at {base_mb:.0f} MB RSS.",
        "- phasekit: `analyze(profile)` with its defaults, after one warm-up run on the same "
        "profile (\"first call\": loads the numba kernels from numba's on-disk cache or compiles "
        "them); median of 3 runs up to 10 minutes, 1 run above. Peak RSS is the whole process "
        "(`ru_maxrss`: interpreter, imports, synthetic profile, warm-up and timed runs), read "
        "before any baseline is imported.",
        "",
        "### Table III (seconds; Phase-TA's figures are for a 32-core Xeon)",
        "",
        _common.markdown_table(head, table),
        "",
        "Targets (this machine): " + "; ".join(checks) + f". Peak RSS at most "
        f"{peak:.0f} MB ({'meets' if peak <= PEAK_TARGET_MB else '**misses**'} <= 2 GB).",
        "",
        "### Per size",
        "",
        _common.markdown_table(detail_head, detail, "lrrrrrrrrrr"),
        "",
        "### Baselines on the same instances: distance matrices",
        "",
        "Each pattern's instances (`instances_of`, raw 1-D), one matrix per pattern, summed over "
        "patterns. Band radius r = ceil(0.1 x median instance length) (phasekit's 10 %): "
        "dtaidistance `distance_matrix_fast(window=r+1)` (C + OpenMP, both cores), tslearn "
        "`cdist_dtw(global_constraint=\"sakoe_chiba\", sakoe_chiba_radius=r)` on NaN-padded "
        "series (n_jobs=None: its thread backend was slower on this machine, one joblib task "
        "per pair). \"phasekit full DTW_2 matrix\" is `dtw2_matrix` on the same instances, which "
        "the analysis does not compute (it builds the single-linkage MST from ~10 candidate "
        "neighbours per instance); \"phasekit clustering\" is that MST + cut "
        "(`cluster.single_linkage`). The requirement: phasekit's whole analysis >= 5x faster "
        "than dtaidistance's banded matrix alone.",
        "",
        "Budgets per call (seconds, shared among a profile's patterns): "
        + ", ".join(f"{k} {v:g}" for k, v in budgets.items())
        + ". \"~x (extrapolated from N of n instances)\": measured on the first N instances, "
        "scaled by n(n-1)/(N(N-1)) for matrices and n/N for DBA.",
        "",
        _common.markdown_table(base_head, base, "lrrrrlrrrr"),
        "",
        "The 5x requirement holds for: " + (", ".join(holding) or "none")
        + "; it does not hold for: " + (", ".join(failing) or "none") + ".",
        "",
        "### Baselines on the same instances: DBA",
        "",
        "31 iterations for everyone (dtaidistance `dba_loop(max_it=31, thr=None, use_c=True)`, "
        "tslearn `dtw_barycenter_averaging(max_iter=31, tol=0)`, phasekit `average.dba` with "
        "the early stop disabled), all with the band above; the baselines start from the shortest "
        "instance (dtaidistance 2.5.1's C `dba_loop` aborts with heap corruption on series of "
        "different lengths when the initial average is longer than one of them and a window "
        "is set), phasekit from its medoid (its time includes the medoid search). The last "
        "column is how many DBA iterations phasekit's analysis actually ran (31 + 1 final WGSS "
        "evaluation = 32, or fewer after 5 consecutive steps below 2.5 %).",
        "",
        _common.markdown_table(dba_head, dba, "lrrrrrrr"),
    ])
    return text, md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one 1-minute NEMO profile, tiny budgets (smoke test)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=None)
    parser.add_argument("--minutes", nargs="+", type=float, default=None)
    parser.add_argument("--results", type=Path, default=None,
                        help="RESULTS.md to update (default benchmarks/RESULTS.md; "
                             "not written in --quick mode unless given)")
    parser.add_argument("--no-tslearn", action="store_true",
                        help="skip the tslearn baselines (compiling them takes ~10 s)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0

    bench = _common.Run()
    if args.quick:
        kinds, minutes = args.kinds or ["nemo"], args.minutes or [1]
        budgets = {"pk_cluster": 0.2, "pk_dba31": 0.2, "pk_matrix": 0.2, "dtai_matrix": 0.2,
                   "dtai_dba": 0.2, "tslearn_matrix": 0.2, "tslearn_dba": 0.2}
        pilot = 6
    else:
        kinds, minutes = args.kinds or list(KINDS), args.minutes or list(MINUTES)
        budgets = {"pk_cluster": 10.0, "pk_dba31": 10.0, "pk_matrix": 10.0,
                   "dtai_matrix": 20.0, "dtai_dba": 10.0, "tslearn_matrix": 10.0,
                   "tslearn_dba": 10.0}
        pilot = 40
    minutes = [int(m) if float(m).is_integer() else m for m in minutes]
    base_mb = import_baseline_mb()
    rows = []
    for kind in kinds:
        for m in minutes:
            runs = 1 if args.quick or m > 10 else 3
            print(f"{kind} {m} min ...", file=sys.stderr, flush=True)
            rows.append(run_size({"kind": kind, "minutes": m, "runs": runs,
                                  "budgets": budgets, "pilot": pilot,
                                  "tslearn": not args.no_tslearn}))
    text, md = report(rows, base_mb, bench, budgets)
    print(text)
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
