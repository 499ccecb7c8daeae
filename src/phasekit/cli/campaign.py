"""``phasekit campaign``: measurement campaigns (Silva 2024, PaScal Analyzer): run and import."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    check_output,
    err_console,
    parse_duration,
    parse_list,
    print_json,
    sub_app,
)
from phasekit.cli.render import show

campaign_app = sub_app(
    "campaign",
    "Measurement campaigns: run a program over threads, cores, frequencies and inputs "
    "(Silva 2024, PaScal Analyzer), or import PaScal Analyzer output.")

RUN_EPILOG = """\
Example:

\b
    phasekit campaign run --threads 1,2 --inputs "small,large" --reps 3 --idle 5s \\
        -o campaign.json -- ./app {input}
    phasekit campaign run --cores 1,2 --freqs 1.2,2.2 --power-cmd "ipmi-power.sh" \\
        -o c.json -- ./app
    phasekit campaign run --threads 1,2 --inputs 1,2,3 --power-estimate 10,6 \\
        -o vm.json -- ./app {input}
"""

IMPORT_EPILOG = """\
Example:

\b
    phasekit campaign import analyzer-output.json -o campaign.json
    phasekit campaign import analyzer-output.json --json
"""


@campaign_app.command("run", epilog=RUN_EPILOG,
                      context_settings={"allow_interspersed_args": False})
def run(
    command: Annotated[list[str], typer.Argument(
        metavar="-- PROGRAM [ARGS]...", show_default=False,
        help="The program; {input} in its arguments is replaced by each --inputs value.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE", show_default=False,
        help="Campaign file: .json (ours), .csv (tidy table) or .jsonl (the log itself). "
             "Runs are appended to FILE.partial.jsonl as they end; running the same command "
             "again resumes from it.")],
    threads: Annotated[str | None, typer.Option(
        "--threads", metavar="1,2,...", help="OMP_NUM_THREADS values.")] = None,
    cores: Annotated[str | None, typer.Option(
        "--cores", metavar="1,2,...", help="Cores: the program is pinned to the first N "
        "CPUs (affinity).")] = None,
    freqs: Annotated[str | None, typer.Option(
        "--freqs", metavar="GHZ,...", help="CPU frequencies (userspace governor; needs cpufreq "
        "and root, refused up front otherwise).")] = None,
    inputs: Annotated[str | None, typer.Option(
        "--inputs", metavar="A,B,...", help="Program inputs, smallest first.")] = None,
    reps: Annotated[int, typer.Option("--reps", help="Repetitions per configuration.")] = 1,
    idle: Annotated[str | None, typer.Option(
        "--idle", metavar="DURATION", help="Idle time between runs (e.g. 5s; default none).")
                    ] = None,
    timeout: Annotated[str | None, typer.Option(
        "--timeout", metavar="DURATION", help="Stop a run (with every process it started) "
        "after this long; it is recorded as failed.")] = None,
    power_cmd: Annotated[str | None, typer.Option(
        "--power-cmd", metavar="CMD", help="Command printing the power in watts (an IPMI "
        "reader); sampled during each run and integrated. Default: RAPL when present.")] = None,
    power_interval: Annotated[str, typer.Option(
        "--power-interval", metavar="DURATION", help="Sampling of --power-cmd.")] = "1s",
    power_estimate: Annotated[str | None, typer.Option(
        "--power-estimate", metavar="STATIC_W,CORE_W", help="No meter (a virtual machine): "
        "estimate energy as STATIC_W x wall time + CORE_W x the program's CPU time. An "
        "estimate, labelled as such in the campaign.")] = None,
    profile_dir: Annotated[Path | None, typer.Option(
        "--profile-dir", metavar="DIR", help="Also record a full profile of each run with "
        "the recorder, one Parquet file per run.")] = None,
    pascal: Annotated[bool, typer.Option(
        "--pascal", help="Write FILE in PaScal Analyzer's JSON layout.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the campaign as JSON.")
                           ] = False,
) -> None:
    """Run a program once per configuration and repetition, measuring time, energy and the
    regions it marks (phasekit.regions; phasekit_regions.h for C).

    The program gets no standard input and runs in a process group of its own; it stops
    with the campaign, even one killed with SIGKILL. A failed run that a resume runs again
    is replaced by the new run.
    """
    from phasekit.record.api import run_campaign

    check_output(output, "--output")
    console = err_console()

    def progress(done: int, total: int, label: str) -> None:
        if not json_output:
            console.print(f"[{done}/{total}] {label}", soft_wrap=True)

    campaign = run_campaign(
        command, output, threads=parse_list(threads, "--threads", int),
        cores=parse_list(cores, "--cores", int),
        frequencies_ghz=parse_list(freqs, "--freqs", float),
        inputs=tuple(inputs.split(",")) if inputs else (None,), repetitions=reps,
        idle_s=parse_duration(idle, "--idle") if idle else 0.0,
        timeout_s=parse_duration(timeout, "--timeout") if timeout else None,
        power_command=power_cmd, power_interval_s=parse_duration(power_interval,
                                                                 "--power-interval"),
        power_estimate_w=parse_list(power_estimate, "--power-estimate", float)
        if power_estimate else None,
        profile_dir=profile_dir, pascal=pascal, progress=progress)
    if json_output:
        print_json(campaign.to_dict())
        return
    show(campaign.present(), [("campaign", output)])


@campaign_app.command("import", epilog=IMPORT_EPILOG)
def import_(
    source: Annotated[Path, typer.Argument(metavar="FILE.json", show_default=False,
                                           help="PaScal Analyzer JSON (or ours).")],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write it: .json (ours), .csv (tidy table), "
        ".jsonl.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print it as JSON.")] = False,
) -> None:
    """Read a campaign (PaScal Analyzer JSON: frequencies in GHz or kHz, sensors as [value,
    timestamp] pairs) and show or convert it."""
    from phasekit.io.api import read_campaign, write_campaign

    check_output(output, "--output")
    campaign = read_campaign(source)
    if output is not None:
        write_campaign(campaign, output)
    if json_output:
        print_json(campaign.to_dict())
        return
    show(campaign.present(source.name), [("campaign", output)] if output is not None else [])
    sys.stdout.flush()
