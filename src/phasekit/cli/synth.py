"""``phasekit synth``: synthetic inputs of every verb, each with its ground truth."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import check_output, out_console, print_json

EPILOG = """\
Example:

\b
    phasekit synth nemo --minutes 5 --seed 1 -o nemo.parquet
    phasekit synth hpcg --minutes 10 -o hpcg.csv   # and hpcg.csv.truth.json
    phasekit synth bench_2 --repetitions 5 --seed 1 -o bench2.parquet
    phasekit synth nodes --nodes 8 --minutes 2 -o runs/job42/   # for analyze DIR
    phasekit synth power --seed 1 -o profiles.json              # for energy phasediv
    phasekit synth counters --seed 1 -o counters.csv            # for powermodel fit
    phasekit synth campaign --seed 1 -o campaign.json           # for energy fit/choose
    phasekit synth fingerprints --seed 1 -o runs/               # for fingerprint
"""


class Kind(enum.StrEnum):
    """What ``phasekit synth`` writes (see :func:`synth`)."""

    nemo = "nemo"
    hpcg = "hpcg"
    openfoam = "openfoam"
    bench_1 = "bench_1"
    bench_2 = "bench_2"
    nodes = "nodes"
    power = "power"
    counters = "counters"
    campaign = "campaign"
    fingerprints = "fingerprints"


_FOLDERS = (Kind.nodes, Kind.fingerprints)


def synth(
    kind: Annotated[Kind, typer.Argument(
        metavar="KIND", show_default=False,
        help="nemo (one periodicity, ~77 %), hpcg (two initialization periodicities then one "
             "compute periodicity), openfoam (one periodicity and aperiodic checkpoint I/O): "
             "an IPC profile with periodicity truth (Phase-TA); bench_1 (NPB MG, BT, EP, IS, "
             "CG back to back), bench_2 (the same with idle periods between them): counter "
             "profiles with phase truth (Tsafack Chetsa et al.); nodes: a folder of node "
             "profiles of one job, a slow and an idle node planted (phasekit analyze DIR); "
             "power: power profiles per configuration, JSON (phasekit energy phasediv); "
             "counters: a CSV of counters C1..C14 and power_w (phasekit powermodel fit); "
             "campaign: a PARSEC-like campaign over frequencies, cores and inputs (phasekit "
             "energy fit, choose, suggest, plot); fingerprints: a folder of runs of 4 "
             "programs x 3 inputs (phasekit fingerprint).")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE",
        help="What to write: a profile (.csv, .tsv, .csv.gz, .parquet), a folder for nodes "
             "and fingerprints, .json for power, .csv for counters, .json/.csv/.jsonl for "
             "campaign. The truth goes to FILE.truth.json (beside a folder).",
        show_default=False)],
    minutes: Annotated[float | None, typer.Option(
        "--minutes", show_default=False,
        help="Duration in minutes (default 10; counters: 30, one sample every 2 s). For "
             "bench_1/bench_2: the number of repetitions closest to it (at least 1).")] = None,
    repetitions: Annotated[int | None, typer.Option(
        "--repetitions", min=1, show_default=False,
        help="bench_1/bench_2 only: runs of the whole sequence (default 1; the paper: 5 for "
             "bench_2).")] = None,
    idle: Annotated[float, typer.Option(
        "--idle", help="bench_2 only: idle seconds after every workload (the paper: 30).")
                    ] = 30.0,
    nodes: Annotated[int | None, typer.Option(
        "--nodes", min=1, show_default=False,
        help="nodes only: the number of nodes (default 8; a slow and an idle one are planted "
             "from 4 nodes on).")] = None,
    pascal: Annotated[bool, typer.Option(
        "--pascal", help="campaign only: write PaScal Analyzer's JSON layout.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same data).")
                    ] = 0,
    period: Annotated[float | None, typer.Option(
        "--period", show_default=False,
        help="Sampling period in seconds (default 0.005 as Phase-TA; 1 for bench_1/bench_2 "
             "as Tsafack Chetsa et al.).")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write synthetic data with known ground truth, for any verb to try without measurements.

    The truth (instance boundaries and templates; workload segments and change times; planted
    outlier nodes; optimal phase division; power expression; noiseless time and energy per
    run) goes beside the output as FILE.truth.json.
    """
    if kind not in _FOLDERS:
        suffixes = {Kind.power: ("json",), Kind.counters: ("csv",),
                    Kind.campaign: ("json", "csv", "jsonl")}.get(kind)
        check_output(output, "--output", suffixes)
    from phasekit.synth.api import synth as write

    summary = write(kind.value, output, minutes=minutes, repetitions=repetitions, idle=idle,
                    nodes=nodes, pascal=pascal, seed=seed, period=period)
    if json_output:
        print_json(summary)
        return
    console = out_console()
    for line in summary.pop("lines"):
        console.print(line, soft_wrap=True)
