"""Batch scheduling (issue 7 section 3, seed 004 ch. 5): the thesis's Table 5.1 on our
synthetic scenarios, the annealing's time on 900 tasks (target <= 30 s) and the MILP on 66
tasks within a 60 s limit with its gap.

Input: :func:`phasekit.synth.batches.scenario_batch` (seed 0): ``small`` = 66 tasks on 5
servers x 12 cores, ``large`` = 900 tasks on 50 x 12, tasks from Table 4.5's applications
with 1, 2, 4 or 6 threads and estimated times/powers with Table 4.5's errors. Every policy
plans with the true values (oracle) or the estimates, and its plan is executed on the truth
by the simulator; savings against round robin (eq. 5.3). The MILP runs on the small
scenario only (as in the thesis), started from the best other schedule. Wall times on one
core (run it with taskset -c 1); the machine may be shared, see the load averages.
"""

from __future__ import annotations

import time

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
LABELS = {"rr": "round robin", "heuristic": "LTF heuristic", "sa": "annealing",
          "milp": "MILP"}


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="tiny batches, few annealing levels, 2 s MILP "
                                               "(smoke test)")
    args = parser.parse_args(argv)
    from phasekit.schedule import DataCenter, schedule_batch
    from phasekit.schedule.policies import simulated_annealing
    from phasekit.synth.batches import generate_batch, scenario_batch

    bench = _common.Run()
    if args.quick:
        scenarios = {"small": (generate_batch(16, seed=0), DataCenter(2, 12)),
                     "large": (generate_batch(120, seed=0), DataCenter(8, 12))}
        limit, sa_iter, seeds = 2.0, 3, [0, 1]
    else:
        scenarios = {name: (b, DataCenter(sc.servers, sc.cores))
                     for name in ("small", "large")
                     for b, sc in [scenario_batch(name, seed=0)]}
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
            results[name, mode] = schedule_batch(batch, dc, policies, estimated=est, seed=0,
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
                "-" if thesis is None else f"{thesis[2]} / {thesis[3]}"])
        rows.append([name, "lower bound", "", "", f"{oracle.lower_bound_s:.0f}", "", "",
                     ""])
    header = ["scenario", "policy", "saving oracle (%)", "saving estimated (%)",
              "makespan oracle (s)", "makespan estimated (s)",
              "thesis saving oracle / signature", "thesis makespan"]
    print()
    print(_common.text_table(header, rows))

    # the annealing on the large batch, the MILP on the small one
    sa = results["large", "oracle"].get("sa")
    sa_info = dict(sa.info)
    sa_row = [len(scenarios["large"][0]), f"{sa_info['levels']} x {sa_info['moves_per_level']}",
              sa_info["evaluations"], _common.seconds(sa.runtime_s),
              f"{1e6 * sa.runtime_s / max(sa_info['evaluations'], 1):.0f} us",
              f"{sa_info['initial_makespan_s']:.0f} -> {sa_info['best_planned_makespan_s']:.0f}",
              "meets" if sa.runtime_s <= 30 else "**misses**"]
    sa_header = ["tasks", "levels x moves", "evaluations", "time", "per evaluation",
                 "makespan (LTF start -> best)", "<= 30 s"]
    print()
    print(_common.text_table(sa_header, [sa_row]))
    milp_rows = []
    for mode in ("oracle", "estimated"):
        m = results["small", mode].get("milp")
        info = dict(m.info)
        gap = info.get("gap_percent")
        milp_rows.append([mode, len(scenarios["small"][0]), info["status"],
                          _common.seconds(m.runtime_s), f"{info['time_limit_s']:g} s",
                          "-" if info.get("start_s") is None else f"{info['start_s']:.0f}",
                          "-" if info.get("objective_s") is None
                          else f"{info['objective_s']:.0f}",
                          f"{m.planned_makespan_s:.0f}", f"{m.makespan_s:.0f}",
                          f"{info['dual_bound_s']:.0f}",
                          "n/a" if gap is None else f"{gap:.2f} %",
                          f"{info['binaries']} / {info['constraints']}"])
    milp_header = ["planned with", "tasks", "status", "time", "limit", "start (s)",
                   "best C, with d gaps (s)", "plan run on its times (s)",
                   "plan run on the truth (s)", "bound (s)", "gap", "binaries / rows"]
    print()
    print(_common.text_table(milp_header, milp_rows))

    # several seeds of the small scenario (fast policies): mean and range of the savings
    seed_rows = []
    per: dict[str, dict[str, list[float]]] = {k: {"oracle": [], "estimated": []}
                                              for k in ("heuristic", "sa")}
    for s in seeds:
        if args.quick:
            batch, dc = generate_batch(16, seed=s), DataCenter(2, 12)
        else:
            batch, sc = scenario_batch("small", seed=s)
            dc = DataCenter(sc.servers, sc.cores)
        for mode, est in (("oracle", None), ("estimated", ("est_time_s", "est_power_w"))):
            r = schedule_batch(batch, dc, ["heuristic", "sa"], estimated=est, seed=0,
                               time_limit_s=limit, sa_iterations=sa_iter)
            for p in r.policies:
                if p.policy in per:
                    per[p.policy][mode].append(p.saving_vs_rr)
    for k, modes in per.items():
        o, e = np.array(modes["oracle"]), np.array(modes["estimated"])
        seed_rows.append([LABELS[k], f"{o.mean():.1f} ({o.min():.1f}-{o.max():.1f})",
                          f"{e.mean():.1f} ({e.min():.1f}-{e.max():.1f})",
                          f"{np.abs(o - e).max():.1f}"])
    seed_header = ["policy", f"saving oracle, mean (range) over {len(seeds)} seeds (%)",
                   "saving estimated (%)", "largest oracle - estimated gap (points)"]
    print()
    print(_common.text_table(seed_header, seed_rows))

    dcs = scenarios["small"][1]
    body = "\n".join([
        "## Batch scheduling (seed 004, chapter 5)",
        "",
        *_common.machine_lines(bench),
        f"- Scenarios: {', '.join(f'{k} = {len(b)} tasks on {d.servers} x {d.cores} cores' for k, (b, d) in scenarios.items())}"
        f" (synthetic, seed 0; `phasekit.synth.batches`); servers always on at "
        f"{dcs.static_w:.2f} W (P_idle 50 W + disks 16.75 W + fan 2.79 W) plus the running "
        f"tasks' dynamic power, PUE {dcs.pue:g}; savings vs round robin (eq. 5.3).",
        "- Oracle: planned with the true times and powers; estimated: planned with "
        "`est_time_s` / `est_power_w` (Table 4.5's errors), executed on the truth.",
        "- Annealing: "
        + ("the default number of temperature levels (50 000 schedules, 60-1000 levels)"
           if sa_iter is None else f"{sa_iter} temperature levels")
        + " x n moves, seed 0, started from the Longest-Task-First order; MILP: HiGHS, "
        f"{limit:g} s limit, started from the best other schedule.",
        "",
        "### Table 5.1 on our scenarios (thesis values for reference, its own batches)",
        "",
        _common.markdown_table(header, rows, align="ll" + "r" * 6),
        "",
        "### Annealing on the large batch (target <= 30 s)",
        "",
        _common.markdown_table(sa_header, [sa_row]),
        "",
        f"### MILP on the small batch ({limit:g} s limit)",
        "",
        _common.markdown_table(milp_header, milp_rows, align="lr" + "l" + "r" * 9),
        "",
        "### Small scenario over several batches (seeds)",
        "",
        _common.markdown_table(seed_header, seed_rows),
        "",
        f"Total run time {_common.seconds(bench.elapsed())}.",
    ])
    _common.publish(SECTION, body, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
