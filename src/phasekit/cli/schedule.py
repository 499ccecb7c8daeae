"""``phasekit schedule``: energy-aware batch scheduling (Salinas Hilburg 2020, chapter 5)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from phasekit.cli.common import (
    Output,
    check_outputs,
    figure_file,
    json_file,
    out_console,
    parse_duration,
    print_json,
    print_written,
    progress_reporter,
    write_all,
)
from phasekit.errors import UsageError
from phasekit.schedule.registry import POLICIES

EPILOG = """\
Example:

\b
    phasekit schedule batch.csv --servers 5 --cores 12 --policy all
    phasekit schedule batch.csv --servers 5 --cores 12 --policy sa --seed 3 --json
    phasekit schedule batch.csv --servers 5 --cores 12 --estimated est_time_s,est_power_w
    phasekit schedule synth:small --policy all --plot gantt.png -o result.json
    phasekit schedule synth:large:7 --policy sa --time-limit 30s --save-batch large.csv

\b
BATCH.csv: a header and one row per task with the columns task, threads,
time_s, power_w (the task's mean dynamic power above the idle server, W);
other columns are ignored unless named by --estimated. synth:small[:SEED] and
synth:large[:SEED] generate the thesis's scenarios (66 tasks on 5 x 12 cores,
900 on 50 x 12) with estimated columns est_time_s and est_power_w.
"""

_SYNTH = re.compile(r"synth:(small|large)(?::(\d+))?")
_LABELS = {"rr": "round robin", "heuristic": "LTF heuristic", "sa": "annealing",
           "milp": "MILP"}
#: Seconds of --time-limit kept for drawing --plot's figure (our measure: about 1 s).
PLOT_RESERVE_S = 1.5
#: A process older than this when the verb starts was not started for this command.
STARTUP_MAX_S = 10.0


def _policy_choices() -> tuple[str, ...]:
    """The registered policies (:data:`~phasekit.schedule.registry.POLICIES`) and ``all``."""
    return (*POLICIES, "all")


def _policy_help() -> str:
    """``--policy``'s help: each registered policy with its description, then ``all``."""
    return (", ".join(f"{name} ({policy.description})" for name, policy in POLICIES.items())
            + ", or all (the MILP is left out when too large).")


def _command_started() -> float:
    """The ``time.perf_counter()`` reading at which the command started: the process's
    start when the process is the ``phasekit`` command (its start-up counts against
    --time-limit; from /proc on Linux), else now (the verb called from a Python program)."""
    now = time.perf_counter()
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    if script.name != "phasekit" and script.parts[-3:] != ("phasekit", "cli", "__main__.py"):
        return now
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        start_ticks = int(stat[stat.rindex(b")") + 2:].split()[19])  # field 22, starttime
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - age if 0 <= age <= STARTUP_MAX_S else now


def _estimated(text: str | None) -> tuple[str, str | None, bool] | None:
    """``TIME_COL[,POWER_COL]`` -> (time column, power column, power column given)."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 2 or not all(parts):
        raise UsageError(f"--estimated {text!r}: expected TIME_COLUMN or "
                         "TIME_COLUMN,POWER_COLUMN (e.g. est_time_s,est_power_w)")
    if len(parts) == 2:
        return parts[0].lower(), parts[1].lower(), True
    name = parts[0].lower()
    guess = name[:-len("time_s")] + "power_w" if name.endswith("time_s") else None
    return name, guess, False


def schedule(
    batch_path: Annotated[str, typer.Argument(
        metavar="BATCH.csv", show_default=False,
        help="The batch (CSV: task, threads, time_s, power_w), or synth:small[:SEED] / "
             "synth:large[:SEED] for the thesis's generated scenarios.")],
    servers: Annotated[int | None, typer.Option(
        "--servers", metavar="S", min=1, show_default=False,
        help="Number of servers (default for synth: 5 small, 50 large).")] = None,
    cores: Annotated[int | None, typer.Option(
        "--cores", metavar="C", min=1, show_default=False,
        help="Cores per server (default for synth: 12).")] = None,
    policy: Annotated[str, typer.Option(
        "--policy", metavar="|".join(_policy_choices()), help=_policy_help())] = "all",
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", help="Seed of the annealing (and of a synth: batch without "
        "its own seed).")] = 0,
    time_limit: Annotated[str, typer.Option(
        "--time-limit", metavar="DURATION",
        help="Time limit of the whole command (e.g. 60s, 2m). The annealing gets the work "
             "of half of it (all of it without the MILP), counted in levels at a fixed "
             "speed so that the same seed and limit give the same plan; the MILP solver "
             "gets what is left.")
    ] = "60s",
    estimated: Annotated[str | None, typer.Option(
        "--estimated", metavar="COL[,POWER_COL]", show_default=False,
        help="Plan with these estimated times (and powers; default: the column named like "
             "COL with power_w for time_s, if present, else the true power) and execute the "
             "plans on the true time_s / power_w, as with the signature's estimates.")
    ] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"policy\", \"makespan_s\", \"energy_j\", \"saving_vs_rr\" "
        "(percent), ...} as JSON; a list of them with --policy all.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json",
        help="Write the full result (every task's server, cores, start and end; power "
             "profiles) as JSON.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Write a Gantt chart per server and core, and the "
        "data-center power, of each policy.")] = None,
    save_batch: Annotated[Path | None, typer.Option(
        "--save-batch", metavar="FILE.csv", help="Write the batch used (e.g. a synth: one) "
        "as CSV.")] = None,
) -> None:
    """Schedule a batch of tasks on servers x cores and compare the policies' energy.

    Seed 004, chapter 5: every policy plans the static, non-preemptive batch; a
    discrete-event simulator runs the plan (servers always on, 50 W idle + 16.75 W disks +
    5 fans x 2.79 W per server plus each running task's power, PUE 1.5) and reports the
    makespan, the data-center energy and the saving against round robin (eq. 5.3).
    """
    started = _command_started()
    from phasekit.schedule.batch import read_batch, write_batch
    from phasekit.schedule.simulate import FINISH_RESERVE_S, DataCenter, schedule_batch

    if policy not in _policy_choices():
        raise UsageError(f"--policy {policy!r}: expected one of {', '.join(_policy_choices())}")
    limit = parse_duration(time_limit, "--time-limit")
    est = _estimated(estimated)
    check_outputs(output, plot, ("--save-batch", save_batch, None))

    synth = _SYNTH.fullmatch(batch_path.strip())
    if synth is not None and not Path(batch_path).exists():
        from phasekit.synth.batches import SCENARIOS, scenario_batch

        name, own_seed = synth.group(1), synth.group(2)
        batch, _ = scenario_batch(name, seed=int(own_seed) if own_seed else seed)
        servers = SCENARIOS[name].servers if servers is None else servers
        cores = SCENARIOS[name].cores if cores is None else cores
        if est is not None and est[1] is not None and not est[2] and est[1] not in batch.extra:
            est = (est[0], None, False)
    else:
        if servers is None or cores is None:
            raise UsageError("give --servers and --cores (the data center to schedule on)")
        columns: dict[str, str] = {}
        optional: dict[str, str] = {}
        if est is not None:
            columns[est[0]] = "time"
            if est[1] is not None:
                (columns if est[2] else optional)[est[1]] = "power"
        batch = read_batch(batch_path, columns=columns, optional_columns=optional)
        if est is not None and est[1] is not None and est[1] not in batch.extra:
            est = (est[0], None, False)
    dc = DataCenter(servers=servers, cores=cores)
    batch.check_fits(dc.cores)

    with progress_reporter(policy == "all" or POLICIES[policy].long_running,
                           "scheduling") as progress:
        result = schedule_batch(batch, dc, policies=policy, seed=seed, time_limit_s=limit,
                                estimated=None if est is None else (est[0], est[1]),
                                progress=progress, started=started,
                                reserve_s=FINISH_RESERVE_S + (PLOT_RESERVE_S if plot else 0))

    def draw(path: Path) -> None:
        from phasekit.plot.schedule import plot_schedule

        plot_schedule(result, path)

    written = write_all(
        None if save_batch is None else Output("batch", save_batch,
                                               lambda path: write_batch(batch, path)),
        json_file(output, result.saved_dict), figure_file(plot, draw))
    if json_output:
        summaries = result.summaries()
        print_json(summaries if policy == "all" else summaries[0])
        return
    console = out_console()
    console.print(_table(result, batch_path))
    lines = [f"{_LABELS[p.policy]}: {_detail(dict(p.info), p.policy)}"
             for p in result.policies if p.policy in ("sa", "milp")]
    lines += [f"planned with {result.planned_with}; executed on the true times and powers"
             if result.planned_with != "oracle" else
             "planned and executed with the true times and powers (oracle)",
             f"lower bound on the makespan {result.lower_bound_s:.6g} s (longest task, work "
             "over the cores, wide tasks that cannot share a server)",
             f"energy: {result.datacenter.servers} servers always on at "
             f"{result.datacenter.static_w:.2f} W + the running tasks' power, PUE "
             f"{result.datacenter.pue:g}"]
    lines += [f"note: {n}" for n in result.notes]
    for line in lines:
        console.print(line, soft_wrap=True)
    print_written(console, written)


def _detail(info: dict[str, Any], policy: str) -> str:
    if policy == "sa":
        text = (f"seed {info.get('seed')}, {info.get('levels')} levels x "
                f"{info.get('moves_per_level')} moves, T0 {info.get('t0', 0):.4g} s, planned "
                f"makespan {info.get('initial_makespan_s', float('nan')):.6g} -> "
                f"{info.get('best_planned_makespan_s', float('nan')):.6g} s")
        if info.get("cut_by") == "lower bound":
            text += f"; stopped: {info['stopped']}"
        elif info.get("stopped"):
            text += f"; {info['stopped']}"
        return text
    if policy == "milp":
        if info.get("fallback"):
            return str(info["fallback"])
        if str(info.get("solver", "")).startswith("none"):
            return (f"the start schedule ({info.get('start_s') or 0:.6g} s) ends at the lower "
                    "bound: optimal, HiGHS not run")
        gap = info.get("gap_percent")
        gap_text = "n/a" if gap is None else f"{gap:.2f} %"
        start = info.get("start_s")
        start_text = "" if start is None else f"started from {start:.6g} s, "
        return (f"{info.get('status')}, {start_text}best {info.get('objective_s') or 0:.6g} s "
                f"(with d gaps), gap {gap_text}, bound "
                f"{info.get('dual_bound_s') or float('nan'):.6g} s, "
                f"{info.get('solve_time_s', 0):.1f} s, {info.get('formulation', 'compact')} "
                "formulation")
    return ""


def _table(result: Any, name: str) -> Table:
    dc = result.datacenter
    table = Table(title=f"{name}: {result.n_tasks} tasks, {dc.servers} x {dc.cores} cores "
                        "(Salinas Hilburg 2020, Table 5.1)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("policy", no_wrap=True)
    for column in ("makespan (s)", "energy (MJ)", "saving", "planned (s)", "time (s)"):
        table.add_column(column, justify="right", no_wrap=True)
    for p in result.policies:
        table.add_row(_LABELS.get(p.policy, p.policy), f"{p.makespan_s:.6g}",
                      f"{p.energy_j / 1e6:.4g}", f"{p.saving_vs_rr:.2f} %",
                      f"{p.planned_makespan_s:.6g}", f"{p.runtime_s:.2f}")
    return table
