"""``phasekit synth``: synthetic inputs of every verb, each with its ground truth."""

from __future__ import annotations

import enum
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli.common import check_output, out_console, print_json
from phasekit.errors import UsageError

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


_PERIODIC = (Kind.nemo, Kind.hpcg, Kind.openfoam)
_BENCHES = (Kind.bench_1, Kind.bench_2)
_FOLDERS = (Kind.nodes, Kind.fingerprints)
#: Kinds that take --minutes and --period.
_TIMED = (*_PERIODIC, *_BENCHES, Kind.nodes)
#: The power profiles' grid: a small one (42 configurations) keeps the file under 1 MB.
POWER_CORES = (1, 2, 4, 8, 16, 32)
POWER_FREQS_GHZ = (1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4)
#: Counter tables: one sample every 2 s (phasekit.synth.counters).
COUNTER_SAMPLE_S = 2.0


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
    _check_options(kind, minutes=minutes, repetitions=repetitions, nodes=nodes, pascal=pascal,
                   period=period)
    if kind in _FOLDERS:
        _check_folder(output)
    else:
        suffixes = {Kind.power: ("json",), Kind.counters: ("csv",),
                    Kind.campaign: ("json", "csv", "jsonl")}.get(kind)
        if suffixes is None:
            from phasekit.io import profile_format

            profile_format(output)  # a UsageError for an unknown extension, before any work
        check_output(output, "--output", suffixes)
    if kind in _BENCHES:
        summary = _bench(kind, output, minutes=minutes, repetitions=repetitions, idle=idle,
                         seed=seed, period=1.0 if period is None else period)
    elif kind in _PERIODIC:
        summary = _periodic(kind, output, minutes=10.0 if minutes is None else minutes,
                            seed=seed, period=0.005 if period is None else period)
    else:
        summary = _OTHERS[kind](output, seed=seed, minutes=minutes, nodes=nodes,
                                pascal=pascal, period=period)
    if json_output:
        print_json(summary)
        return
    console = out_console()
    for line in summary.pop("lines"):
        console.print(line, soft_wrap=True)


def _check_options(kind: Kind, *, minutes: float | None, repetitions: int | None,
                   nodes: int | None, pascal: bool, period: float | None) -> None:
    """Options that do not apply to ``kind`` are usage errors, before any work."""
    given = {"--minutes": minutes is not None and kind not in (*_TIMED, Kind.counters),
             "--repetitions": repetitions is not None and kind not in _BENCHES,
             "--nodes": nodes is not None and kind != Kind.nodes,
             "--pascal": pascal and kind != Kind.campaign,
             "--period": period is not None and kind not in _TIMED}
    for option, wrong in given.items():
        if wrong:
            raise UsageError(f"{option} does not apply to {kind.value}")
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise UsageError(f"--minutes must be a positive number, got {minutes}")
    if period is not None and not (math.isfinite(period) and period > 0):
        raise UsageError(f"--period must be a positive number of seconds, got {period}")


def _check_folder(output: Path) -> None:
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output}: exists and is not a folder (nodes and "
                         "fingerprints write a folder of profiles)")


def _write_folder(output: Path, files: dict[str, Callable[[Path], object]]) -> None:
    """Write ``files`` (name -> writer) into a temporary sibling folder, then move them into
    ``output`` (created with its parents): nothing is left behind when a writer fails."""
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent))
    try:
        for name, write in files.items():
            write(staging / name)
        if not output.exists():
            os.replace(staging, output)
            return
        for name in files:
            os.replace(staging / name, output / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _periodic(kind: Kind, output: Path, *, minutes: float, seed: int, period: float
              ) -> dict[str, Any]:
    from phasekit.io import write_profile
    from phasekit.synth import generate, truth_path, write_truth

    profile, truth = generate(kind.value, minutes=minutes, seed=seed, period=period)
    write_profile(profile, output)
    truth_file = write_truth(truth, truth_path(output))
    n = len(truth.labels)
    return {
        "profile": str(output), "truth": str(truth_file), "kind": kind.value, "seed": seed,
        "n_samples": profile.n_samples, "period_s": profile.period,
        "duration_s": profile.duration, "patterns": n,
        "instances": int(truth.instances.size), "coverage": truth.coverage(),
        "lines": [f"wrote profile: {output} ({kind.value}, {profile.n_samples} samples every "
                  f"{profile.period * 1e3:g} ms, {profile.duration:g} s)",
                  f"wrote truth:   {truth_file} ({n} "
                  f"{'periodicity' if n == 1 else 'periodicities'}, {truth.instances.size} "
                  f"instances, {100 * truth.coverage():.1f}% periodic)"],
    }


def _bench(kind: Kind, output: Path, *, minutes: float | None, repetitions: int | None,
           idle: float, seed: int, period: float) -> dict[str, Any]:
    """bench_1/bench_2: --minutes picks the nearest number of repetitions."""
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
        one = nominal_bench_duration(kind.value, idle_s=idle)
        repetitions = max(1, round(minutes * 60.0 / one))
    profile, truth = generate_bench(kind.value, repetitions=repetitions or 1, seed=seed,
                                    period=period, idle_s=idle)
    write_profile(profile, output)
    truth_file = write_phase_truth(truth, truth_path(output))
    summary: dict[str, Any] = {
        "profile": str(output), "truth": str(truth_file), "kind": kind.value, "seed": seed,
        "repetitions": truth.meta["repetitions"], "n_samples": profile.n_samples,
        "period_s": profile.period, "duration_s": profile.duration,
        "metrics": list(profile.metrics), "segments": len(truth.segments),
        "changes": int(truth.change_times_s.size), "labels": list(truth.label_names),
    }
    if kind == Kind.bench_2:
        summary["idle_s"] = idle
    summary["lines"] = [
        f"wrote profile: {output} ({kind.value} x {summary['repetitions']}, "
        f"{profile.n_samples} samples every {profile.period:g} s, {profile.duration:g} s, "
        f"{len(profile.metrics)} counters)",
        f"wrote truth:   {truth_file} ({len(truth.segments)} segments: "
        f"{', '.join(truth.label_names)}; {truth.change_times_s.size} phase changes)"]
    return summary


def _nodes(output: Path, *, seed: int, minutes: float | None, nodes: int | None,
           period: float | None, **_: Any) -> dict[str, Any]:
    """A folder of node profiles of one synthetic NEMO-like job (phasekit analyze DIR)."""
    from phasekit.io import write_profile
    from phasekit.synth import generate_nodes, truth_path
    from phasekit.synth.periodic import write_json_truth

    nodes = 8 if nodes is None else nodes
    outliers = ("slow", "idle") if nodes >= 4 else ()
    profiles, truth = generate_nodes("nemo", n_nodes=nodes, minutes=minutes or 10.0, seed=seed,
                                     period=period or 0.005, outliers=outliers)
    _write_folder(output, {f"{p.node}.parquet": lambda path, p=p: write_profile(p, path)
                           for p in profiles})
    truth_file = write_json_truth(truth.to_dict(), truth_path(output))
    planted = ", ".join(f"{node} {kind}" for node, kind in truth.outliers.items()) or "none"
    return {"folder": str(output), "truth": str(truth_file), "kind": "nodes", "seed": seed,
            "nodes": list(truth.nodes), "outliers": dict(truth.outliers),
            "n_samples": profiles[0].n_samples, "period_s": profiles[0].period,
            "lines": [f"wrote {nodes} node profiles: {output} (NEMO-like, "
                      f"{profiles[0].duration:g} s each)",
                      f"wrote truth:   {truth_file} (outliers: {planted})"]}


def _fingerprints(output: Path, *, seed: int, **_: Any) -> dict[str, Any]:
    """A folder of runs of 4 programs x 3 inputs (phasekit fingerprint)."""
    from phasekit.io import write_profile
    from phasekit.synth import truth_path
    from phasekit.synth.periodic import write_json_truth
    from phasekit.synth.power import generate_fingerprint_runs

    runs = generate_fingerprint_runs(seed=seed)
    names = [f"{r.meta['program']}-{r.meta['input']}.parquet" for r in runs]
    _write_folder(output, {name: lambda path, r=r: write_profile(r, path)
                           for name, r in zip(names, runs, strict=True)})
    table = [{"file": name, "program": r.meta["program"], "input": r.meta["input"]}
             for name, r in zip(names, runs, strict=True)]
    truth_file = write_json_truth({"kind": "fingerprint_truth", "version": 1, "seed": seed,
                                   "runs": table}, truth_path(output))
    programs = sorted({r.meta["program"] for r in runs})
    return {"folder": str(output), "truth": str(truth_file), "kind": "fingerprints",
            "seed": seed, "runs": table,
            "lines": [f"wrote {len(runs)} runs: {output} ({len(programs)} programs x "
                      f"{len(runs) // len(programs)} inputs; instructions, mem_loads, "
                      "mem_stores every 10 ms)",
                      f"wrote truth:   {truth_file} (the program of each run)"]}


def _power(output: Path, *, seed: int, **_: Any) -> dict[str, Any]:
    """Power profiles of one phased program per configuration (phasekit energy phasediv)."""
    import json

    from phasekit.io.atomic import atomic_write_text
    from phasekit.synth import truth_path
    from phasekit.synth.periodic import write_json_truth
    from phasekit.synth.power import generate_power_profiles

    profiles, truth = generate_power_profiles(cores=POWER_CORES, freqs_ghz=POWER_FREQS_GHZ,
                                              work_s=600.0, seed=seed)
    atomic_write_text(output, json.dumps(profiles.to_dict(), separators=(",", ":")) + "\n")
    truth_file = write_json_truth(truth.to_dict(), truth_path(output))
    return {"profiles": str(output), "truth": str(truth_file), "kind": "power", "seed": seed,
            "configs": profiles.n_configs, "segments": list(truth.kinds),
            "optimal_phases": truth.n_phases, "optimal_energy_j": truth.energy_j,
            "lines": [f"wrote power profiles: {output} ({profiles.n_configs} configurations: "
                      f"{len(POWER_CORES)} core counts x {len(POWER_FREQS_GHZ)} frequencies, "
                      "power every 0.5 s)",
                      f"wrote truth:   {truth_file} (segments {', '.join(truth.kinds)}; "
                      f"optimal division: {truth.n_phases} phases, {truth.energy_j:.6g} J)"]}


def _counters(output: Path, *, seed: int, minutes: float | None, **_: Any) -> dict[str, Any]:
    """A counter table with measured power (phasekit powermodel fit)."""
    import numpy as np

    from phasekit.io.atomic import atomic_write_text
    from phasekit.synth import truth_path
    from phasekit.synth.counters import COUNTERS, nonlinear_power_data
    from phasekit.synth.periodic import write_json_truth

    n = max(10, round((30.0 if minutes is None else minutes) * 60.0 / COUNTER_SAMPLE_S))
    data = nonlinear_power_data(n, seed=seed)
    table = data.frame[[*COUNTERS, data.target]].copy()
    table.insert(0, "time_s", COUNTER_SAMPLE_S * np.arange(n))
    atomic_write_text(output, table.to_csv(index=False))
    truth = {"kind": "counter_power_truth", "version": 1, "seed": seed,
             "target": data.target, "features": list(data.features),
             "noise_w": data.noise_w, **dict(data.truth)}
    truth_file = write_json_truth(truth, truth_path(output))
    return {"table": str(output), "truth": str(truth_file), "kind": "counters", "seed": seed,
            "rows": n, "columns": list(table.columns), "expression": data.truth["expression"],
            "lines": [f"wrote counters: {output} ({n} samples every {COUNTER_SAMPLE_S:g} s: "
                      f"time_s, C1..C14, {data.target})",
                      f"wrote truth:   {truth_file} ({data.target} = "
                      f"{data.truth['expression']} + noise of {data.noise_w:g} W)"]}


def _campaign(output: Path, *, seed: int, pascal: bool, **_: Any) -> dict[str, Any]:
    """A PARSEC-like campaign over the thesis's grid (phasekit energy ...)."""
    from phasekit.campaign import write_campaign
    from phasekit.synth import truth_path
    from phasekit.synth.campaigns import realistic_campaign
    from phasekit.synth.periodic import write_json_truth

    synth = realistic_campaign("mixed", seed=seed)
    campaign = synth.campaign
    write_campaign(campaign, output, pascal=pascal)
    truth = {"kind": "campaign_truth", "version": 1, "seed": seed, "program": synth.kind,
             "noise": synth.noise, "params": dict(synth.params),
             "time_s": synth.time_s.ravel().tolist(),
             "energy_j": synth.energy_j.ravel().tolist()}
    truth_file = write_json_truth(truth, truth_path(output))
    freqs = sorted({r.frequency_ghz for r in campaign.runs})
    cores = sorted({r.cores for r in campaign.runs})
    layout = "PaScal Analyzer JSON" if pascal else "campaign"
    return {"campaign": str(output), "truth": str(truth_file), "kind": "campaign",
            "seed": seed, "runs": len(campaign.runs), "inputs": list(campaign.inputs),
            "pascal": pascal,
            "lines": [f"wrote {layout}: {output} ({len(campaign.runs)} runs: {len(freqs)} "
                      f"frequencies x {len(cores)} core counts x inputs "
                      f"{', '.join(campaign.inputs)})",
                      f"wrote truth:   {truth_file} (noiseless time and energy per run)"]}


_OTHERS: dict[Kind, Callable[..., dict[str, Any]]] = {
    Kind.nodes: _nodes, Kind.fingerprints: _fingerprints, Kind.power: _power,
    Kind.counters: _counters, Kind.campaign: _campaign,
}
