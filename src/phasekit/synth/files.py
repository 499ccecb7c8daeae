"""Synthetic inputs written with their ground truth: what ``phasekit synth`` writes
(:func:`phasekit.synth.api.synth` is the public door).

Each kind is written with its truth beside it, ``FILE.truth.json``: instance boundaries and
templates of a periodic profile (Phase-TA), workload segments and change times of a benchmark
sequence (Tsafack Chetsa et al.), planted outlier nodes, the optimal phase division of power
profiles, the power expression of a counter table, the noiseless time and energy of each run
of a campaign, the program of each fingerprint run.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasekit.errors import UsageError

__all__ = ["APPLIES", "KINDS", "write_synthetic"]

#: Periodic IPC profiles with periodicity truth (Phase-TA).
PERIODIC = ("nemo", "hpcg", "openfoam")
#: Counter profiles of NPB kernels back to back, with phase truth (Tsafack Chetsa et al.).
BENCHES = ("bench_1", "bench_2")
#: Kinds written as a folder of profiles.
FOLDERS = ("nodes", "fingerprints")
#: Every kind, in the order ``phasekit synth`` lists them.
KINDS = (*PERIODIC, *BENCHES, "nodes", "power", "counters", "campaign", "fingerprints")
#: Kinds that take ``minutes`` and ``period``.
TIMED = (*PERIODIC, *BENCHES, "nodes")
#: Each option of :func:`write_synthetic` and the kinds it applies to.
APPLIES: dict[str, tuple[str, ...]] = {
    "minutes": (*TIMED, "counters"), "repetitions": BENCHES, "nodes": ("nodes",),
    "pascal": ("campaign",), "period": TIMED,
}
#: The power profiles' grid: a small one (42 configurations) keeps the file under 1 MB.
POWER_CORES = (1, 2, 4, 8, 16, 32)
POWER_FREQS_GHZ = (1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4)
#: Counter tables: one sample every 2 s (phasekit.synth.counters).
COUNTER_SAMPLE_S = 2.0


def write_synthetic(kind: str, output: str | os.PathLike[str], *, minutes: float | None = None,
                    repetitions: int | None = None, idle: float = 30.0,
                    nodes: int | None = None, pascal: bool = False, seed: int = 0,
                    period: float | None = None) -> dict[str, Any]:
    """Write synthetic data of ``kind`` to ``output`` and its truth to
    ``OUTPUT.truth.json``; returns what was written (:func:`phasekit.synth.api.synth`)."""
    if kind not in KINDS:
        raise UsageError(f"expected one of {', '.join(KINDS)}", parameter="kind", value=kind)
    given = {"minutes": minutes is not None, "repetitions": repetitions is not None,
             "nodes": nodes is not None, "pascal": pascal, "period": period is not None}
    for name, wrong in given.items():
        if wrong and kind not in APPLIES[name]:
            raise UsageError(f"does not apply to {kind}", parameter=name)
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise UsageError("expected a positive number", parameter="minutes", value=minutes)
    if period is not None and not (math.isfinite(period) and period > 0):
        raise UsageError("expected a positive number of seconds", parameter="period",
                         value=period)
    if minutes is not None and repetitions is not None:
        raise UsageError("give minutes or repetitions, not both", parameter="repetitions")
    if repetitions is not None and repetitions < 1:
        raise UsageError("expected at least 1", parameter="repetitions", value=repetitions)
    if nodes is not None and nodes < 1:
        raise UsageError("expected at least 1", parameter="nodes", value=nodes)
    output = Path(output)
    if kind in FOLDERS and output.exists() and not output.is_dir():
        raise UsageError("exists and is not a folder (nodes and fingerprints write a folder "
                         "of profiles)", parameter="output", value=str(output))
    if kind in (*PERIODIC, *BENCHES):
        from phasekit.io import profile_format

        profile_format(output)  # a UsageError for an unknown extension, before any work
    if kind in BENCHES:
        return _bench(kind, output, minutes=minutes, repetitions=repetitions, idle=idle,
                      seed=seed, period=1.0 if period is None else period)
    if kind in PERIODIC:
        return _periodic(kind, output, minutes=10.0 if minutes is None else minutes,
                         seed=seed, period=0.005 if period is None else period)
    return _OTHERS[kind](output, seed=seed, minutes=minutes, nodes=nodes, pascal=pascal,
                         period=period)


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


def _periodic(kind: str, output: Path, *, minutes: float, seed: int, period: float
              ) -> dict[str, Any]:
    from phasekit.io import write_profile
    from phasekit.synth import generate, truth_path, write_truth

    profile, truth = generate(kind, minutes=minutes, seed=seed, period=period)
    write_profile(profile, output)
    truth_file = write_truth(truth, truth_path(output))
    n = len(truth.labels)
    return {
        "profile": str(output), "truth": str(truth_file), "kind": kind, "seed": seed,
        "n_samples": profile.n_samples, "period_s": profile.period,
        "duration_s": profile.duration, "patterns": n,
        "instances": int(truth.instances.size), "coverage": truth.coverage(),
        "lines": [f"wrote profile: {output} ({kind}, {profile.n_samples} samples every "
                  f"{profile.period * 1e3:g} ms, {profile.duration:g} s)",
                  f"wrote truth:   {truth_file} ({n} "
                  f"{'periodicity' if n == 1 else 'periodicities'}, {truth.instances.size} "
                  f"instances, {100 * truth.coverage():.1f}% periodic)"],
    }


def _bench(kind: str, output: Path, *, minutes: float | None, repetitions: int | None,
           idle: float, seed: int, period: float) -> dict[str, Any]:
    """bench_1/bench_2: --minutes picks the nearest number of repetitions."""
    from phasekit.io import write_profile
    from phasekit.synth import (
        generate_bench,
        nominal_bench_duration,
        truth_path,
        write_phase_truth,
    )

    if minutes is not None:
        one = nominal_bench_duration(kind, idle_s=idle)
        repetitions = max(1, round(minutes * 60.0 / one))
    profile, truth = generate_bench(kind, repetitions=repetitions or 1, seed=seed,
                                    period=period, idle_s=idle)
    write_profile(profile, output)
    truth_file = write_phase_truth(truth, truth_path(output))
    summary: dict[str, Any] = {
        "profile": str(output), "truth": str(truth_file), "kind": kind, "seed": seed,
        "repetitions": truth.meta["repetitions"], "n_samples": profile.n_samples,
        "period_s": profile.period, "duration_s": profile.duration,
        "metrics": list(profile.metrics), "segments": len(truth.segments),
        "changes": int(truth.change_times_s.size), "labels": list(truth.label_names),
    }
    if kind == "bench_2":
        summary["idle_s"] = idle
    summary["lines"] = [
        f"wrote profile: {output} ({kind} x {summary['repetitions']}, "
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


_OTHERS: dict[str, Callable[..., dict[str, Any]]] = {
    "nodes": _nodes, "fingerprints": _fingerprints, "power": _power,
    "counters": _counters, "campaign": _campaign,
}
