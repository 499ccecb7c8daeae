"""``phasekit synth``: a synthetic profile with its ground truth."""

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
"""


class Kind(enum.StrEnum):
    """The synthetic applications of phasekit.synth (shaped like seed 000's)."""

    nemo = "nemo"
    hpcg = "hpcg"
    openfoam = "openfoam"


def synth(
    kind: Annotated[Kind, typer.Argument(
        metavar="KIND", show_default=False,
        help="Application shape: nemo (one periodicity, ~77 %), hpcg (two initialization "
             "periodicities then one compute periodicity), openfoam (one periodicity and "
             "aperiodic checkpoint I/O).")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Profile to write: .csv, .tsv, .csv.gz or .parquet; the truth goes to "
             "FILE.truth.json.", show_default=False)],
    minutes: Annotated[float, typer.Option("--minutes", help="Duration in minutes.")] = 10.0,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same profile).")
                    ] = 0,
    period: Annotated[float, typer.Option(
        "--period", help="Sampling period in seconds (seed 000: 5 ms).")] = 0.005,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write a synthetic IPC profile with known periodicities, and its ground truth.

    The truth (instance boundaries and labels, templates) goes beside the profile as
    FILE.truth.json. The format of FILE follows its extension.
    """
    from phasekit.io import profile_format, write_profile
    from phasekit.synth import generate, truth_path, write_truth

    profile_format(output)  # a UsageError for an unknown extension, before any work
    check_output(output, "--output")
    profile, truth = generate(kind.value, minutes=minutes, seed=seed, period=period)
    write_profile(profile, output)
    truth_file = write_truth(truth, truth_path(output))
    summary = {
        "profile": str(output), "truth": str(truth_file), "kind": kind.value, "seed": seed,
        "n_samples": profile.n_samples, "period_s": profile.period,
        "duration_s": profile.duration, "patterns": len(truth.labels),
        "instances": int(truth.instances.size), "coverage": truth.coverage(),
    }
    if json_output:
        print_json(summary)
        return
    console = out_console()
    console.print(f"wrote profile: {output} ({kind.value}, {profile.n_samples} samples every "
                  f"{profile.period * 1e3:g} ms, {profile.duration:g} s)", soft_wrap=True)
    console.print(f"wrote truth:   {truth_file} ({len(truth.labels)} "
                  f"{'periodicity' if len(truth.labels) == 1 else 'periodicities'}, "
                  f"{truth.instances.size} instances, {100 * truth.coverage():.1f}% periodic)",
                  soft_wrap=True)
