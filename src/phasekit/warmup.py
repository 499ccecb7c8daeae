"""Compile phasekit's numba kernels ahead of the first command.

numba compiles a kernel the first time it is called with new argument types and, with
``cache=True``, keeps the machine code in the ``__pycache__`` folder beside the module
(keyed by a stamp of the source file, the numba version, the Python version and the
CPU; the numba used here, 0.68, stamps a source by its content hash, so the cache survives
``pip`` writing the files anew, where an mtime stamp would not). :func:`warm` runs every verb's computation once on a small
synthetic input, so that every kernel a command runs is compiled for the argument types it
gets there (every method and policy a verb offers: ``tests/test_warmup.py`` runs them all
after the warm-up and checks that numba compiles nothing); the package build
(``setup.py``) runs it on the built package, so the wheel
carries the compiled kernels and the first command after ``pip install .`` loads them
instead of compiling for a minute. Where the cache cannot be used (another CPU, another
numba, a read-only install), numba compiles at first use as before: correctness never
depends on the cache.

Run ``python -m phasekit.warmup`` to compile into an installed copy (for example after
upgrading numba); it prints what it ran and how long each part took.
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

__all__ = ["JOBS", "warm"]


def _periodicity(folder: Path) -> None:
    from phasekit.periodicity import analyze
    from phasekit.synth.periodic import generate

    # one short profile, one with enough instances for the nearest-neighbour clustering
    for kind, minutes in (("nemo", 1.0), ("nemo", 4.0), ("hpcg", 2.0)):
        profile, _ = generate(kind, minutes=minutes, seed=0)
        analyze(profile)
    analyze(profile, metrics=[profile.metrics[0]])


def _many_nodes(folder: Path) -> None:
    from phasekit.io import write_profile
    from phasekit.many import periodicity_many
    from phasekit.synth.nodes import generate_nodes

    profiles, _ = generate_nodes("nemo", n_nodes=3, minutes=0.5, seed=0)
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    periodicity_many(sorted(folder.glob("*.parquet")), workers=1)


def _phases(folder: Path) -> None:
    from phasekit.phases import DETECTORS, phases
    from phasekit.synth.periodic import generate
    from phasekit.synth.phases import generate_bench

    profile, _ = generate_bench("bench_1", seed=0, idle_s=5.0)
    for method in [name for name, detector in DETECTORS.items() if detector.online]:
        phases(profile, method=method)  # "phasekit watch" steps the same kernels
    # one series with changes of shape, long enough for the neighbour search
    series, _ = generate("hpcg", minutes=0.5, seed=0)
    phases(series, method="shape")
    # and its approximate neighbours, which searches over long series use
    phases(series, method="shape", detector={"exact_up_to": 1024})


def _phase_division(folder: Path) -> None:
    from phasekit.energy.phasediv import divide_phases
    from phasekit.synth.power import generate_power_profiles

    profiles, _ = generate_power_profiles(cores=[1, 4], freqs_ghz=[1.2, 2.4], seed=0)
    for integrator in ("trapezoid", "zoh"):
        divide_phases(profiles, max_phases=4, grid=50, integrator=integrator)
    divide_phases(profiles, max_phases=3, grid=50, method="ga", population=20, generations=5)


def _schedule(folder: Path) -> None:
    from phasekit.schedule.batch import read_batch, write_batch
    from phasekit.schedule.simulate import DataCenter, schedule_batch
    from phasekit.synth.batches import generate_batch

    # a batch whose Longest-Task-First start is above the lower bound, so that the annealing
    # runs its levels; read back from CSV as the verb reads it; every policy, the MILP too
    path = write_batch(generate_batch(24, seed=0), folder / "batch.csv")
    batch = read_batch(path, columns={"est_time_s": "time", "est_power_w": "power"})
    dc = DataCenter(servers=3, cores=12)
    for estimated in (None, ("est_time_s", "est_power_w")):
        schedule_batch(batch, dc, policies="all", estimated=estimated, time_limit_s=2.0,
                       sa_iterations=3)


def _power_models(folder: Path) -> None:
    from phasekit.signature.powermodels.ge import fit_ge
    from phasekit.synth.counters import ge_power_data

    data = ge_power_data(300, seed=0)
    for validation in (0.2, 0.0):  # without validation rows the expression is always refitted
        fit_ge(data.frame, "power_w", features=list(data.features), generations=3,
               restarts=1, population=20, validation=validation)


#: The computations run, by the verb they stand for.
JOBS: dict[str, Callable[[Path], None]] = {
    "analyze": _periodicity,
    "analyze (many nodes)": _many_nodes,
    "phases": _phases,
    "energy phasediv": _phase_division,
    "schedule": _schedule,
    "powermodel fit --model ge": _power_models,
}


def warm(report: Callable[[str], None] = print) -> dict[str, float | str]:
    """Run every job of :data:`JOBS` (each in its own scratch folder); a job that fails is
    reported and skipped (its kernels compile at first use). Returns seconds per job, or the
    error message."""
    out: dict[str, float | str] = {}
    for name, job in JOBS.items():
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="phasekit-warmup-") as folder, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                job(Path(folder))
            except Exception as exc:  # a build must not fail for a kernel it could not warm
                out[name] = f"{type(exc).__name__}: {exc}"
                report(f"phasekit warm-up: {name}: skipped ({out[name]})")
                continue
        out[name] = time.perf_counter() - start
        report(f"phasekit warm-up: {name}: {out[name]:.1f} s")
    return out


if __name__ == "__main__":
    results = warm()
    sys.exit(0 if all(isinstance(v, float) for v in results.values()) else 1)
