"""``phasekit synth``: a synthetic profile with its ground truth."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import check_output, out_console, print_json
from phasekit.errors import UsageError

EPILOG = """\
Example:

\b
    phasekit synth nemo --minutes 5 --seed 1 -o nemo.parquet
    phasekit synth hpcg --minutes 10 -o hpcg.csv   # and hpcg.csv.truth.json
    phasekit synth bench_2 --repetitions 5 --seed 1 -o bench2.parquet   # seed 001 counters
"""


class Kind(enum.StrEnum):
    """The synthetic applications of phasekit.synth (seed 000's shapes, seed 001's benches)."""

    nemo = "nemo"
    hpcg = "hpcg"
    openfoam = "openfoam"
    bench_1 = "bench_1"
    bench_2 = "bench_2"


_BENCHES = (Kind.bench_1, Kind.bench_2)


def synth(
    kind: Annotated[Kind, typer.Argument(
        metavar="KIND", show_default=False,
        help="Application shape: nemo (one periodicity, ~77 %), hpcg (two initialization "
             "periodicities then one compute periodicity), openfoam (one periodicity and "
             "aperiodic checkpoint I/O): an IPC profile with periodicity truth; bench_1 "
             "(NPB MG, BT, EP, IS, CG back to back), bench_2 (the same with idle periods "
             "between them): seed 001's counter profiles with phase truth.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Profile to write: .csv, .tsv, .csv.gz or .parquet; the truth goes to "
             "FILE.truth.json.", show_default=False)],
    minutes: Annotated[float | None, typer.Option(
        "--minutes", show_default=False,
        help="Duration in minutes (default 10). For bench_1/bench_2: the number of "
             "repetitions closest to it (at least 1).")] = None,
    repetitions: Annotated[int | None, typer.Option(
        "--repetitions", min=1, show_default=False,
        help="bench_1/bench_2 only: runs of the whole sequence (default 1; seed 001: 5 for "
             "bench_2).")] = None,
    idle: Annotated[float, typer.Option(
        "--idle", help="bench_2 only: idle seconds after every workload (seed 001: 30).")
                    ] = 30.0,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same profile).")
                    ] = 0,
    period: Annotated[float | None, typer.Option(
        "--period", show_default=False,
        help="Sampling period in seconds (default: 0.005, seed 000; 1 for bench_1/bench_2, "
             "seed 001).")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write a synthetic profile with known periodicities or phases, and its ground truth.

    The truth (instance boundaries and labels, templates; or workload segments and change
    times for bench_1/bench_2) goes beside the profile as FILE.truth.json. The format of FILE
    follows its extension.
    """
    from phasekit.io import profile_format

    profile_format(output)  # a UsageError for an unknown extension, before any work
    check_output(output, "--output")
    if kind in _BENCHES:
        _bench(kind, output, minutes=minutes, repetitions=repetitions, idle=idle, seed=seed,
               period=1.0 if period is None else period, json_output=json_output)
        return
    if repetitions is not None:
        raise UsageError(f"--repetitions applies to bench_1 and bench_2, not to {kind.value}")
    _periodic(kind, output, minutes=10.0 if minutes is None else minutes, seed=seed,
              period=0.005 if period is None else period, json_output=json_output)


def _periodic(kind: Kind, output: Path, *, minutes: float, seed: int, period: float,
              json_output: bool) -> None:
    from phasekit.io import write_profile
    from phasekit.synth import generate, truth_path, write_truth

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


def _bench(kind: Kind, output: Path, *, minutes: float | None, repetitions: int | None,
           idle: float, seed: int, period: float, json_output: bool) -> None:
    """seed 001's bench_1/bench_2: --minutes picks the nearest number of repetitions."""
    from phasekit.io import write_profile
    from phasekit.synth import (
        generate_bench,
        nominal_bench_duration,
        truth_path,
        write_phase_truth,
    )

    if minutes is not None and repetitions is not None:
        raise UsageError("give --minutes or --repetitions, not both")
    if minutes is not None:
        if not (math.isfinite(minutes) and minutes > 0):
            raise UsageError(f"--minutes must be a positive number, got {minutes}")
        one = nominal_bench_duration(kind.value, idle_s=idle)
        repetitions = max(1, round(minutes * 60.0 / one))
    profile, truth = generate_bench(kind.value, repetitions=repetitions or 1, seed=seed,
                                    period=period, idle_s=idle)
    write_profile(profile, output)
    truth_file = write_phase_truth(truth, truth_path(output))
    summary = {
        "profile": str(output), "truth": str(truth_file), "kind": kind.value, "seed": seed,
        "repetitions": truth.meta["repetitions"], "n_samples": profile.n_samples,
        "period_s": profile.period, "duration_s": profile.duration,
        "metrics": list(profile.metrics), "segments": len(truth.segments),
        "changes": int(truth.change_times_s.size), "labels": list(truth.label_names),
    }
    if kind == Kind.bench_2:
        summary["idle_s"] = idle
    if json_output:
        print_json(summary)
        return
    console = out_console()
    console.print(f"wrote profile: {output} ({kind.value} x {summary['repetitions']}, "
                  f"{profile.n_samples} samples every {profile.period:g} s, "
                  f"{profile.duration:g} s, {len(profile.metrics)} counters)", soft_wrap=True)
    console.print(f"wrote truth:   {truth_file} ({len(truth.segments)} segments: "
                  f"{', '.join(truth.label_names)}; {truth.change_times_s.size} phase changes)",
                  soft_wrap=True)
