"""Batch scheduling (Salinas Hilburg 2020 ch. 5): the thesis's Table 5.1 on our
synthetic scenarios, where the savings come from, the annealing's time on 900 tasks (target
<= 30 s) and the MILP on 66 tasks within a 60 s limit with its gap.

Input: :func:`phasekit.synth.batches.scenario_batch` (seed 0): ``small`` = 66 tasks on 5
servers x 12 cores, ``large`` = 900 tasks on 50 x 12, tasks from Table 4.5's applications
with 1, 2, 4 or 6 threads and estimated times/powers with Table 4.5's errors. Every policy
plans with the true values (oracle) or the estimates, and its plan is executed on the truth
by the simulator; savings against round robin (eq. 5.3). The MILP runs on the small
scenario only (as in the thesis), started from the best other schedule, in our compact
formulation and (oracle) in the thesis's literal one. A saving is the static share of
round robin's energy times the makespan reduction (servers are on until the makespan and
the tasks' energy is the same under every policy); the thesis's static shares follow from
its Table 5.1 and its round-robin makespans (section 5.4.3: 86 187 s and 98 667 s). Wall
times on one core (run it with taskset -c 1); the machine may be shared, see the load
averages. ``--scenario small|large`` runs one scenario, for checking: it prints and does not
write RESULTS.md unless ``--results`` is given.

Held-out batches: :func:`realistic_batch`, a mix no default was tuned on (the
annealing's T0, swaps and restarts were chosen on the thesis-like batches of seeds 0-4):
Table 4.5's ten applications, 1-12 threads, run times 1 min-1 h, seeds from 1000. Round
robin, the heuristic, the annealing and (on 30 tasks) the MILP run in one comparison; the
lower bound (:func:`phasekit.schedule.simulate.lower_bound`, or the MILP's own bound when
higher) says how much any schedule could still gain.

``--first-run`` measures instead what a fresh install sees: ``phasekit schedule BATCH.csv
--servers 5 --cores 12 --time-limit 5s`` on a 66-task batch of phasekit's generator, run
three times in fresh processes sharing one numba cache folder (NUMBA_CACHE_DIR): filled by
the install's warm-up alone (``python -m phasekit.warmup``, what a wheel carries), the first
run and the second; then once more with an empty cache (a machine where the shipped kernels
cannot be used, so numba compiles them). Wall time of each command, the kernels it
compiled, and each policy's saving and the annealing's plan, which must be the same in all.
It writes its own section of RESULTS.md (``schedule_first_run``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import _common

SECTION = "schedule"
#: Table 5.1 of the thesis: (saving oracle, saving signature, makespan oracle, signature).
THESIS = {
    ("small", "milp"): (19.4, 18.3, 58467, 59090),
    ("small", "sa"): (17.7, 16.3, 59591, 62188),
    ("small", "heuristic"): (17.0, 15.5, 61548, 64117),
    ("large", "sa"): (13.3, 12.5, 74119, 75815),
    ("large", "heuristic"): (8.6, 8.2, 82899, 82979),
}
#: Round robin's makespan in the thesis (section 5.4.3: CR_B x signature time).
THESIS_RR = {"small": 86187, "large": 98667}
LABELS = {"rr": "round robin", "heuristic": "LTF heuristic", "sa": "annealing",
          "milp": "MILP"}


#: Held-out batches: (tasks, servers, seeds, with the MILP). 30 tasks on 3 servers is a MILP
#: HiGHS can work on within a minute (8 000 rows); 200 on 10 is a busy day of a small
#: cluster (the MILP would need 358 000 rows and does not improve on its start even at 66).
HELD_OUT = ((30, 3, (1000, 1001, 1002), True), (200, 10, (1000, 1001, 1002, 1003, 1004), False))
HELD_OUT_QUICK = ((10, 2, (1000,), True), (40, 4, (1000, 1001), False))
#: Run times at the task's thread count: log-uniform in [1 min, 1 h] (our choice: as many
#: short as long jobs on a log scale, as in batch-system logs).
RUNTIME_RANGE_S = (60.0, 3600.0)


def realistic_batch(n_tasks: int, seed: int, cores: int = 12) -> Any:
    """Mixed applications (Table 4.5's ten, uniformly), 1..``cores`` threads (uniformly),
    run times log-uniform in :data:`RUNTIME_RANGE_S`, dynamic power P(1) p^g of the
    application's family (``phasekit.synth.batches``: 9-15 W per thread)."""
    from phasekit.schedule import Batch
    from phasekit.synth.batches import APPS

    rng = np.random.default_rng(seed)
    app = rng.integers(0, len(APPS), n_tasks)
    threads = rng.integers(1, cores + 1, n_tasks)
    low, high = np.log(RUNTIME_RANGE_S[0]), np.log(RUNTIME_RANGE_S[1])
    time_s = np.exp(rng.uniform(low, high, n_tasks))
    p1 = np.array([a.p1_w for a in APPS])[app]
    g = np.array([a.exponent for a in APPS])[app]
    names = tuple(f"t{i:03d}-{APPS[app[i]].name}-{threads[i]}t" for i in range(n_tasks))
    return Batch(names=names, threads=threads, time_s=time_s, power_w=p1 * threads**g,
                 source=f"held-out(n={n_tasks}, seed={seed})")


def held_out(quick: bool, limit: float, sa_iter: int | None) -> tuple[list[list[object]],
                                                                     list[list[object]]]:
    """The held-out comparison: a row per batch and a summary row per batch size."""
    from phasekit.schedule import DataCenter, schedule_batch

    rows: list[list[object]] = []
    summary: list[list[object]] = []
    for n, servers, seeds, with_milp in (HELD_OUT_QUICK if quick else HELD_OUT):
        dc = DataCenter(servers, 12)
        policies = ["rr", "heuristic", "sa"] + (["milp"] if with_milp else [])
        per: dict[str, list[float]] = {p: [] for p in ("heuristic", "sa", "milp", "gap")}
        for seed in seeds:
            batch = realistic_batch(n, seed)
            started = time.perf_counter()
            r = schedule_batch(batch, dc, policies=policies, seed=0, time_limit_s=limit,
                               sa_iterations=sa_iter)
            print(f"held-out {n} tasks, seed {seed}: {time.perf_counter() - started:.1f} s",
                  flush=True)
            span = {p.policy: p.makespan_s for p in r.policies}
            bound, bound_from = r.lower_bound_s, "ours"
            milp = r.get("milp") if with_milp else None
            if milp is not None and (milp.info.get("dual_bound_s") or 0) > bound * (1 + 1e-9):
                bound, bound_from = float(milp.info["dual_bound_s"]), "HiGHS"
            best = min(span.values())
            for p in ("heuristic", "sa", "milp"):
                if p in span:
                    per[p].append(r.get(p).saving_vs_rr)
            per["gap"].append(100 * (best / bound - 1))
            milp_text = "-"
            if milp is not None:
                start = milp.info.get("start_s")
                gain = "" if start is None else f", {100 * (1 - milp.makespan_s / start):+.2f} %"
                milp_text = f"{milp.makespan_s:.0f} ({milp.info['status']}{gain})"
            rows.append([f"{n} on {servers} x 12", seed, f"{span['rr']:.0f}",
                         f"{span['heuristic']:.0f}", f"{span['sa']:.0f}", milp_text,
                         f"{bound:.0f} ({bound_from})",
                         f"{100 * (1 - span['sa'] / span['heuristic']):.1f}",
                         f"{r.get('heuristic').saving_vs_rr:.1f}",
                         f"{r.get('sa').saving_vs_rr:.1f}",
                         "-" if milp is None else f"{milp.saving_vs_rr:.1f}",
                         f"{100 * (span['heuristic'] / bound - 1):.1f}",
                         f"{100 * (best / bound - 1):.1f}"])
        h, a = np.array(per["heuristic"]), np.array(per["sa"])
        summary.append([f"{n} on {servers} x 12", len(seeds), f"{h.mean():.1f}",
                        f"{a.mean():.1f}",
                        f"{np.mean(per['milp']):.1f}" if per["milp"] else "-",
                        f"{int(np.sum(a > h + 1e-9))} of {len(seeds)}",
                        f"{np.mean(per['gap']):.1f} ({np.max(per['gap']):.1f})"])
    return rows, summary


HELD_OUT_HEADER = ["batch", "seed", "round robin (s)", "heuristic (s)", "annealing (s)",
                   "MILP (s) (status, vs its start)", "lower bound (s) (from)",
                   "annealing vs heuristic makespan cut (%)", "saving heuristic (%)",
                   "saving annealing (%)", "saving MILP (%)", "heuristic above bound (%)",
                   "best above bound (%)"]
HELD_OUT_SUMMARY = ["batch", "batches", "saving heuristic, mean (%)",
                    "saving annealing, mean (%)", "saving MILP, mean (%)",
                    "annealing better than heuristic", "best above bound, mean (max) (%)"]


FIRST_RUN_SECTION = "schedule_first_run"
FIRST_RUN_LIMIT = "5s"


def _schedule_command(batch: Path, out: Path, cache: Path, limit: str) -> dict[str, Any]:
    """One ``phasekit schedule`` in a fresh process: wall time, kernels numba compiled (its
    NUMBA_DEBUG_CACHE lines), the result."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_DEBUG_CACHE": "1"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "schedule", str(batch),
                           "--servers", "5", "--cores", "12", "--time-limit", limit,
                           "-o", str(out)], env=env, capture_output=True, text=True,
                          timeout=900, check=True)
    wall = time.perf_counter() - started
    compiled = sum(line.startswith("[cache] data saved") for line in done.stdout.splitlines())
    result = json.loads(out.read_text())
    policies = {p["policy"]: p for p in result["policies"]}
    return {"wall": wall, "compiled": compiled, "policies": policies,
            "annealing": next(line for line in done.stdout.splitlines()
                              if line.startswith("annealing:"))}


def first_run(args: Any) -> int:
    """``--first-run``: the module docstring's last paragraph."""
    from phasekit.schedule import write_batch
    from phasekit.synth.batches import generate_batch

    bench = _common.Run()
    limit = "2s" if args.quick else FIRST_RUN_LIMIT
    with tempfile.TemporaryDirectory(prefix="phasekit-first-run-") as tmp:
        folder = Path(tmp)
        batch = write_batch(generate_batch(66, seed=0), folder / "batch.csv")
        shipped, empty = folder / "cache-warmed", folder / "cache-empty"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "phasekit.warmup"], check=True, timeout=1800,
                       env={**os.environ, "NUMBA_CACHE_DIR": str(shipped)},
                       capture_output=True)
        warm_up = time.perf_counter() - started
        print(f"warm-up into a fresh cache: {warm_up:.1f} s", flush=True)
        runs = {}
        for name, cache in (("first", shipped), ("second", shipped), ("empty cache", empty)):
            runs[name] = _schedule_command(batch, folder / f"{name}.json", cache, limit)
            print(f"{name}: {runs[name]['wall']:.2f} s, {runs[name]['compiled']} kernels "
                  f"compiled; {runs[name]['annealing']}", flush=True)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        interpreter = time.perf_counter() - started
    orders = {name: run["policies"]["sa"]["order"] for name, run in runs.items()}
    same = all(order == orders["first"] for order in orders.values())
    limit_s = float(limit.rstrip("s"))
    within = all(runs[name]["wall"] <= limit_s for name in ("first", "second"))
    header = ["run", "numba cache", "kernels compiled", "wall time (s)",
              "saving annealing (%)", "saving MILP (%)", "saving heuristic (%)",
              "annealing levels", "MILP status"]
    caches = {"first": "the warm-up's (as a wheel ships it)", "second": "after the first run",
              "empty cache": "empty (kernels compiled at first use)"}
    rows = []
    for name, run in runs.items():
        p = run["policies"]
        sa = p["sa"]["info"]
        rows.append([name, caches[name], run["compiled"], f"{run['wall']:.2f}",
                     f"{p['sa']['saving_vs_rr']:.2f}", f"{p['milp']['saving_vs_rr']:.2f}",
                     f"{p['heuristic']['saving_vs_rr']:.2f}",
                     f"{sa['levels']} of {sa['iterations']}", p["milp"]["info"]["status"]])
    print()
    print(_common.text_table(header, rows))
    print(f"same annealing plan in every run: {same}; interpreter start {interpreter:.2f} s")
    body = "\n".join([
        "## Schedule: same plan first and second run (benchmarks/schedule.py)",
        "",
        f"The first `phasekit schedule` after an install, the second, and one on an empty "
        f"numba cache give the {'same' if same else '**different**'} annealing plan and "
        f"saving; with the install's kernels each ends "
        f"{'within' if within else '**after**'} `--time-limit {limit}`.",
        "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}.",
        f"- Command: `phasekit schedule BATCH.csv --servers 5 --cores 12 --time-limit {limit}` "
        "(every policy) in a fresh process (`python -m phasekit.cli`), wall time from its "
        f"start to its end, the interpreter's own start ({interpreter:.2f} s) included. BATCH: "
        "66 tasks of `phasekit.synth.batches.generate_batch(66, seed=0)` (the small scenario).",
        f"- Numba cache (NUMBA_CACHE_DIR): filled by `python -m phasekit.warmup` alone "
        f"({warm_up:.0f} s), as a wheel built with the warm-up ships it, for the first and second "
        "runs; empty for the last, where numba compiles the kernels it runs (not counted "
        "against the limit, so the plan is the same). Kernels compiled: numba's "
        "NUMBA_DEBUG_CACHE \"data saved\" lines.",
        "",
        _common.markdown_table(header, rows, align="ll" + "r" * 7),
        "",
        f"The first run's line for the annealing: `{runs['first']['annealing']}`",
        "",
        f"Total run time {_common.seconds(bench.elapsed())}.",
    ])
    if args.quick and args.results is None:
        print("\nquick run: RESULTS.md not written")
        return 0
    target = args.results or _common.RESULTS
    _common.write_section(FIRST_RUN_SECTION, body, target)
    print(f"\nwrote the {FIRST_RUN_SECTION} section of {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="tiny batches, few annealing levels, 2 s MILP "
                                               "(smoke test)")
    parser.add_argument("--scenario", choices=("small", "large", "both"), default="both",
                        help="run one scenario only (for checking; RESULTS.md is then not "
                             "written unless --results is given)")
    parser.add_argument("--first-run", action="store_true",
                        help="measure the first and second 'phasekit schedule' after an "
                             "install instead (see the module docstring)")
    args = parser.parse_args(argv)
    if args.first_run:
        return first_run(args)
    from phasekit.schedule import DataCenter, execute, schedule_batch
    from phasekit.schedule.policies import milp_schedule, simulated_annealing
    from phasekit.schedule.simulate import lower_bound
    from phasekit.synth.batches import generate_batch, scenario_batch

    bench = _common.Run()
    names = ("small", "large") if args.scenario == "both" else (args.scenario,)
    if args.quick:
        sizes = {"small": (16, 2), "large": (120, 8)}
        scenarios = {name: (generate_batch(sizes[name][0], seed=0),
                            DataCenter(sizes[name][1], 12)) for name in names}
        limit, sa_iter, seeds = 2.0, 3, [0, 1]
    else:
        scenarios = {name: (b, DataCenter(sc.servers, sc.cores))
                     for name in names for b, sc in [scenario_batch(name, seed=0)]}
        limit, sa_iter, seeds = 60.0, None, [0, 1, 2, 3, 4]
    # warm-up: load or compile the kernels
    warm = generate_batch(12, seed=1)
    simulated_annealing(warm.threads, warm.time_s, DataCenter(2, 12), iterations=1)

    results = {}
    for name, (batch, dc) in scenarios.items():
        policies = ["rr", "heuristic", "sa", "milp"] if name == "small" else ["rr",
                                                                             "heuristic", "sa"]
        for mode, est in (("oracle", None), ("estimated", ("est_time_s", "est_power_w"))):
            started = time.perf_counter()
            results[name, mode] = schedule_batch(batch, dc, policies=policies, estimated=est, seed=0,
                                                 time_limit_s=limit, sa_iterations=sa_iter)
            print(f"{name} {mode}: {time.perf_counter() - started:.1f} s", flush=True)

    # Table 5.1
    rows = []
    for name in scenarios:
        oracle, estim = results[name, "oracle"], results[name, "estimated"]
        for p in oracle.policies:
            e = estim.get(p.policy)
            thesis = THESIS.get((name, p.policy))
            rows.append([
                name, LABELS[p.policy], f"{p.saving_vs_rr:.1f}", f"{e.saving_vs_rr:.1f}",
                f"{p.makespan_s:.0f}", f"{e.makespan_s:.0f}",
                "-" if p.policy == "rr" else
                ("-" if thesis is None else f"{thesis[0]} / {thesis[1]}"),
                f"{THESIS_RR[name]}" if p.policy == "rr" else
                ("-" if thesis is None else f"{thesis[2]} / {thesis[3]}")])
        rows.append([name, "lower bound", "", "", f"{oracle.lower_bound_s:.0f}", "", "",
                     ""])
    header = ["scenario", "policy", "saving oracle (%)", "saving estimated (%)",
              "makespan oracle (s)", "makespan estimated (s)",
              "thesis saving oracle / signature", "thesis makespan"]
    print()
    print(_common.text_table(header, rows))

    # where the savings come from: saving = static share of RR's energy x makespan reduction
    parts = []
    for name in scenarios:
        oracle = results[name, "oracle"]
        dc = oracle.datacenter
        rr = oracle.baseline
        share = dc.pue * dc.servers * dc.static_w * rr.makespan_s / rr.energy_j
        for p in oracle.policies:
            if p.policy == "rr":
                continue
            thesis = THESIS.get((name, p.policy))
            cut = 100 * (1 - p.makespan_s / rr.makespan_s)
            if thesis is None:
                t_text = ["-", "-", "-"]
            else:
                t_cut = 100 * (1 - thesis[2] / THESIS_RR[name])
                t_text = [f"{t_cut:.1f}", f"{thesis[0] / t_cut:.2f}", f"{thesis[0]}"]
            parts.append([name, LABELS[p.policy],
                          f"{100 * (1 - oracle.lower_bound_s / rr.makespan_s):.1f}",
                          f"{cut:.1f}", f"{share:.2f}", f"{p.saving_vs_rr:.1f}", *t_text])
    parts_header = ["scenario", "policy", "makespan cut at the lower bound (%)",
                    "makespan cut (%)", "static share of RR energy", "saving (%)",
                    "thesis makespan cut (%)", "thesis static share", "thesis saving (%)"]
    print()
    print(_common.text_table(parts_header, parts))

    # the annealing on the large batch
    sa_rows = []
    if "large" in scenarios:
        batch, dc = scenarios["large"]
        for mode in ("oracle", "estimated"):
            sa = results["large", mode].get("sa")
            info = dict(sa.info)
            moves = max(info["moves"], 1)
            floor = lower_bound(batch.threads, batch.column(
                "time_s" if mode == "oracle" else "est_time_s"), dc)
            sa_rows.append([
                mode, len(scenarios["large"][0]),
                f"{info['levels']} x {info['moves_per_level']}", info["moves"],
                info["evaluations"], _common.seconds(sa.runtime_s),
                f"{1e6 * sa.runtime_s / moves:.0f} us",
                f"{info['initial_makespan_s']:.0f} -> {info['best_planned_makespan_s']:.0f}",
                f"{info['best_planned_makespan_s'] / floor:.4f}",
                "meets" if sa.runtime_s <= 30 else "**misses**"])
    sa_header = ["planned with", "tasks", "levels x trials", "trials", "simulations", "time",
                 "per trial", "planned makespan (LTF start -> best)",
                 "best / its lower bound", "<= 30 s"]
    if sa_rows:
        print()
        print(_common.text_table(sa_header, sa_rows))

    # the MILP on the small batch, both formulations
    milp_rows = []
    if "small" in scenarios:
        batch, dc = scenarios["small"]
        runs = [(mode, results["small", mode].get("milp")) for mode in ("oracle",
                                                                       "estimated")]
        sa_plan = results["small", "oracle"].get("sa")
        started = time.perf_counter()
        thesis_plan = milp_schedule(batch.threads, batch.time_s, dc, time_limit_s=limit,
                                    upper_bound_s=sa_plan.makespan_s,
                                    start_schedule=(sa_plan.start_s, sa_plan.server),
                                    formulation="thesis")
        print(f"small oracle, thesis-form MILP: {time.perf_counter() - started:.1f} s",
              flush=True)
        thesis_real = execute(thesis_plan, batch, dc, cores=False).makespan_s
        for mode, m in runs:
            info = dict(m.info)
            milp_rows.append(_milp_row(mode, len(batch), info, m.runtime_s,
                                       m.planned_makespan_s, m.makespan_s))
        info = dict(thesis_plan.info)
        milp_rows.append(_milp_row("oracle", len(batch), info, info["solve_time_s"],
                                   thesis_real, thesis_real))
    milp_header = ["planned with", "tasks", "formulation", "status", "time", "start (s)",
                   "best C, with d gaps (s)", "plan run on its times (s)",
                   "plan run on the truth (s)", "bound (s)", "gap", "binaries / rows"]
    if milp_rows:
        print()
        print(_common.text_table(milp_header, milp_rows))

    # several seeds of the small scenario (fast policies): mean and range of the savings
    seed_rows = []
    seed_header = ["policy", f"saving oracle, mean (range) over {len(seeds)} seeds (%)",
                   "saving estimated (%)", "largest oracle - estimated gap (points)"]
    if "small" in scenarios:
        per: dict[str, dict[str, list[float]]] = {k: {"oracle": [], "estimated": []}
                                                  for k in ("heuristic", "sa")}
        for s in seeds:
            if args.quick:
                batch, dc = generate_batch(16, seed=s), DataCenter(2, 12)
            else:
                batch, sc = scenario_batch("small", seed=s)
                dc = DataCenter(sc.servers, sc.cores)
            for mode, est in (("oracle", None), ("estimated", ("est_time_s", "est_power_w"))):
                r = schedule_batch(batch, dc, policies=["heuristic", "sa"], estimated=est, seed=0,
                                   time_limit_s=limit, sa_iterations=sa_iter)
                for p in r.policies:
                    if p.policy in per:
                        per[p.policy][mode].append(p.saving_vs_rr)
        for k, modes in per.items():
            o, e = np.array(modes["oracle"]), np.array(modes["estimated"])
            seed_rows.append([LABELS[k], f"{o.mean():.1f} ({o.min():.1f}-{o.max():.1f})",
                              f"{e.mean():.1f} ({e.min():.1f}-{e.max():.1f})",
                              f"{np.abs(o - e).max():.1f}"])
        print()
        print(_common.text_table(seed_header, seed_rows))

    held_rows, held_summary = held_out(args.quick, limit, sa_iter)
    print()
    print(_common.text_table(HELD_OUT_HEADER, held_rows))
    print()
    print(_common.text_table(HELD_OUT_SUMMARY, held_summary))

    if args.scenario != "both" and args.results is None:
        print("\none scenario only: RESULTS.md not written")
        return 0
    dcs = next(iter(scenarios.values()))[1]
    body = "\n".join([
        "## Batch scheduling (Salinas Hilburg 2020, chapter 5)",
        "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}.",
        f"- Scenarios: {', '.join(f'{k} = {len(b)} tasks on {d.servers} x {d.cores} cores' for k, (b, d) in scenarios.items())}"
        f" (synthetic, seed 0; `phasekit.synth.batches`); servers always on at "
        f"{dcs.static_w:.2f} W (P_idle 50 W + disks 16.75 W + 5 fans x 2.79 W) plus the "
        f"running tasks' dynamic power, PUE {dcs.pue:g}; savings vs round robin (eq. 5.3).",
        "- Oracle: planned with the true times and powers; estimated: planned with "
        "`est_time_s` / `est_power_w` (Table 4.5's errors), executed on the truth.",
        "- Annealing: "
        + ("the default number of temperature levels (50 000 trials, 60-1000 levels)"
           if sa_iter is None else f"{sa_iter} temperature levels")
        + " x n trials, seed 0, started from the Longest-Task-First order; MILP: HiGHS, "
        f"{limit:g} s limit, started from the best other schedule.",
        "",
        "### Table 5.1 on our scenarios (thesis values for reference, its own batches)",
        "",
        _common.markdown_table(header, rows, align="ll" + "r" * 6),
        "",
        "### Where the savings come from",
        "",
        "Saving = static share of round robin's energy x makespan cut, since every server is "
        "on until the makespan and the tasks' own energy is the same under every policy. "
        "The thesis's columns follow from its Table 5.1 and its round-robin makespans "
        "(section 5.4.3).",
        "",
        _common.markdown_table(parts_header, parts, align="ll" + "r" * 7),
        "",
        "### Annealing on the large batch (target <= 30 s)",
        "",
        _common.markdown_table(sa_header, sa_rows, align="lr" + "r" * 8) if sa_rows
        else "(not run)",
        "",
        f"### MILP on the small batch ({limit:g} s limit)",
        "",
        _common.markdown_table(milp_header, milp_rows, align="lrll" + "r" * 8) if milp_rows
        else "(not run)",
        "",
        "### Small scenario over several batches (seeds)",
        "",
        _common.markdown_table(seed_header, seed_rows) if seed_rows else "(not run)",
        "",
        "### Held-out batches: mixed applications, 1-12 threads, 1 min-1 h",
        "",
        f"Batches no default was tuned on (`realistic_batch`: Table 4.5's ten applications "
        f"uniformly, 1-12 threads uniformly, run times log-uniform in "
        f"{RUNTIME_RANGE_S[0]:g}-{RUNTIME_RANGE_S[1]:g} s, seeds from 1000), oracle "
        "planning; every policy in one comparison. The lower bound is the best of ours "
        "(longest task, work, and the dual-feasible and wide-task bounds of `lower_bound`) "
        "and the MILP's own; the optimum lies between it and the best schedule, so "
        "\"best above bound\" is the most any policy could still gain. The MILP starts from "
        "the best other schedule (never worse); \"vs its start\" is what HiGHS added.",
        "",
        _common.markdown_table(HELD_OUT_HEADER, held_rows, align="lr" + "r" * 11),
        "",
        _common.markdown_table(HELD_OUT_SUMMARY, held_summary, align="lr" + "r" * 5),
        "",
        f"Total run time {_common.seconds(bench.elapsed())}.",
    ])
    _common.publish(SECTION, body, args.results, quick=args.quick)
    return 0


def _milp_row(mode: str, tasks: int, info: dict[str, Any], runtime: float,
              planned: float, real: float) -> list[object]:
    gap = info.get("gap_percent")
    return [mode, tasks, info.get("formulation", "compact"), info["status"],
            _common.seconds(runtime),
            "-" if info.get("start_s") is None else f"{info['start_s']:.0f}",
            "-" if info.get("objective_s") is None else f"{info['objective_s']:.0f}",
            f"{planned:.0f}", f"{real:.0f}", f"{info['dual_bound_s']:.0f}",
            "n/a" if gap is None else f"{gap:.2f} %",
            f"{info['binaries']} / {info['constraints']}"]


if __name__ == "__main__":
    raise SystemExit(main())
