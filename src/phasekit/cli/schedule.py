"""``phasekit schedule``: energy-aware batch scheduling (Salinas Hilburg 2020, chapter 5)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    Output,
    check_outputs,
    figure_file,
    json_file,
    parse_duration,
    print_json,
    progress_reporter,
    write_all,
)
from phasekit.cli.render import show
from phasekit.errors import UsageError
from phasekit.schedule.api import policies

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
#: Seconds of --time-limit kept for drawing --plot's figure (our measure: about 1 s).
PLOT_RESERVE_S = 1.5
#: A process older than this when the verb starts was not started for this command.
STARTUP_MAX_S = 10.0


def _policy_choices() -> tuple[str, ...]:
    """The registered policies (:func:`phasekit.schedule.api.policies`) and ``all``."""
    return (*policies(), "all")


def _policy_help() -> str:
    """``--policy``'s help: each registered policy with its description, then ``all``."""
    return (", ".join(f"{name} ({policy.description})" for name, policy in policies().items())
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
        "--servers", metavar="S", show_default=False,
        help="Number of servers (default for synth: 5 small, 50 large).")] = None,
    cores: Annotated[int | None, typer.Option(
        "--cores", metavar="C", show_default=False,
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

    Salinas Hilburg 2020, chapter 5: every policy plans the static, non-preemptive batch; a
    discrete-event simulator runs the plan (servers always on, 50 W idle + 16.75 W disks +
    5 fans x 2.79 W per server plus each running task's power, PUE 1.5) and reports the
    makespan, the data-center energy and the saving against round robin (eq. 5.3).
    """
    started = _command_started()
    from phasekit.schedule.api import figure, read_batch, scenario, write_batch
    from phasekit.schedule.api import schedule as schedule_verb

    limit = parse_duration(time_limit, "--time-limit")
    est = _estimated(estimated)
    check_outputs(output, plot, ("--save-batch", save_batch, None))

    synth = _SYNTH.fullmatch(batch_path.strip())
    if synth is not None and not Path(batch_path).exists():
        name, own_seed = synth.group(1), synth.group(2)
        batch, its_servers, its_cores = scenario(name, seed=int(own_seed) if own_seed else seed)
        servers = its_servers if servers is None else servers
        cores = its_cores if cores is None else cores
        if est is not None and est[1] is not None and not est[2] and est[1] not in batch.extra:
            est = (est[0], None, False)
    else:
        columns: dict[str, str] = {}
        optional: dict[str, str] = {}
        if est is not None:
            columns[est[0]] = "time"
            if est[1] is not None:
                (columns if est[2] else optional)[est[1]] = "power"
        batch = read_batch(batch_path, columns=columns, optional_columns=optional)
        if est is not None and est[1] is not None and est[1] not in batch.extra:
            est = (est[0], None, False)

    long_running = any(p.long_running for name, p in policies().items()
                       if policy in ("all", name))
    with progress_reporter(long_running, "scheduling") as progress:
        result = schedule_verb(batch, servers=servers, cores=cores, policies=policy, seed=seed,
                               time_limit_s=limit,
                               estimated=None if est is None else (est[0], est[1]),
                               progress=progress, started=started,
                               extra_reserve_s=PLOT_RESERVE_S if plot else 0.0)
    written = write_all(
        None if save_batch is None else Output("batch", save_batch,
                                               lambda path: write_batch(batch, path)),
        json_file(output, result.saved_dict), figure_file(plot, lambda path: figure(result, path)))
    if json_output:
        summaries = result.summaries()
        print_json(summaries if policy == "all" else summaries[0])
        return
    show(result.present(batch_path), written)
