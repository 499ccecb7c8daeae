# ruff: noqa: E402
# %% [markdown]
# # 10 - Phase division and fingerprints
#
# What `phasekit energy phasediv` and `phasekit fingerprint` do, in Python (Silva 2024,
# chapter 5): divide a run into phases, each at its minimum-energy configuration, from one
# power profile per configuration; and cluster runs by the shape of their instructions over
# memory instructions.
#
# The data: no real per-configuration power profiles or counter runs ship with phasekit, so
# phasekit's synthetic generators stand in, written to files first as a user's would be:
#
# - `phasekit.synth.power.generate_power_profiles`: a program of 6 segments of different
#   character (compute-bound, memory-bound, serial, mixed) run once per configuration
#   (7 core counts x 5 frequencies = 35), power sampled every 0.5 s with 2 % noise. Its
#   truth: the noiseless energy of each segment in each configuration, hence the energy and
#   the breakpoints of the optimal division.
# - `phasekit.synth.power.generate_fingerprint_runs`: 24 runs of 4 programs x 3 inputs x 2
#   repetitions, each program's ratio series one shape, stretched in time per input, with
#   noise and outlier spikes. Its truth: which program made each run.
#
# `python examples/10_phase_division.py [PROFILES.json [RUN ...]]` divides your own power
# profiles (phasekit power-profiles JSON or PaScal Analyzer JSON) and, given two or more
# runs (CSV, Parquet, perf stat, LIKWID, recordings with an instruction and a
# memory-instruction counter), fingerprints them.

# %%
import json
import sys
import tempfile
from pathlib import Path

if "__file__" in globals():  # run as a script: no display, file arguments
    import matplotlib

    matplotlib.use("Agg")
    HERE, ARGS = Path(__file__).resolve().parent, sys.argv[1:]
else:  # opened as a notebook (Jupytext, VS Code) from examples/
    HERE, ARGS = Path.cwd(), []
OUT = Path("phasekit-examples")
OUT.mkdir(exist_ok=True)

import numpy as np

import phasekit as pk
from phasekit.energy.fingerprint import cluster_fingerprints, fingerprint_profiles, ratio_series
from phasekit.energy.phasediv import divide_phases, power_profiles_from_dict
from phasekit.metrics import labels_ari

# %% [markdown]
# ## The power profiles
# A power-profiles JSON file as `phasekit energy phasediv` reads it (`pk.read` does not
# read this input format; `power_profiles_from_dict` does, and PaScal Analyzer JSON too).

# %%
SCRATCH = Path(tempfile.mkdtemp())
if ARGS:
    path, truth = Path(ARGS[0]), None
else:
    from phasekit.synth.power import generate_power_profiles

    synthetic, truth = generate_power_profiles(cores=(1, 2, 4, 8, 16, 24, 32),
                                               freqs_ghz=(1.2, 1.5, 1.8, 2.1, 2.4), seed=0)
    path = SCRATCH / "profiles.json"
    path.write_text(json.dumps(synthetic.to_dict()), encoding="utf-8")
profiles = power_profiles_from_dict(json.loads(path.read_text(encoding="utf-8")),
                                    source=str(path))
print(f"{profiles.n_configs} configurations: {', '.join(profiles.labels[:5])}, ...")

# %% [markdown]
# ## Divide into 1..12 phases
# The exact optimum for every number of phases K by dynamic programming, breakpoints on a
# grid of 1000 steps, the trapezoidal integrator (the CLI's defaults, but K <= 12). Without
# a cost per switch the energy only falls with K, and every extra phase that gains from the
# noise is taken: the best K is the largest.

# %%
free = divide_phases(profiles, max_phases=12, grid=1000, integrator="trapezoid")
print(repr(free))
print("energy against the number of phases (J):",
      ", ".join(f"{k}: {free.energy(k):.0f}" for k in range(1, free.max_phases + 1)))

# %% [markdown]
# ## With a cost per switch
# A switch of configuration costs something (here 50 J, about 0.1 % of the run's energy:
# our choice for the example): the best division keeps the phases whose gain pays for
# their switch. `summary()` is the division the CLI prints, one row per phase.

# %%
division = divide_phases(profiles, max_phases=12, grid=1000, integrator="trapezoid",
                         switch_cost_j=50.0)
print(repr(division))
print(division.summary().to_string(index=False))
print(f"best: {division.best_k} phases, {division.energy_j:.6g} J (switches included), "
      f"{100 * division.savings:.1f} % below the best single configuration "
      f"{division.labels[division.single_config]} ({division.single_energy_j:.6g} J)")

# %% [markdown]
# ## Compare with the truth
# The truth's optimal division: each of the generator's segments at its noiseless
# minimum-energy configuration, consecutive segments with the same best configuration
# merged.

# %%
if truth is not None:
    raw_j = division.energy_j - (division.best_k - 1) * division.switch_cost_j
    found = np.asarray(division.best.breakpoints)
    expected = truth.phase_breakpoints()
    offset = (float(np.abs(found - expected).max()) if found.size == expected.size
              else float("nan"))
    print(f"best division: {division.best_k} phases (truth {truth.n_phases}), "
          f"{raw_j:.6g} J without the switch costs against the truth's {truth.energy_j:.6g} J "
          f"(difference {100 * (raw_j / truth.energy_j - 1):+.2f} %); breakpoints at most "
          f"{offset:.3f} from the truth's")
    print(f"savings against the best single configuration: {100 * division.savings:.1f} % "
          "with the switch costs "
          f"(truth {100 * (1 - truth.energy_j / truth.single_energy_j):.1f} %)")

# %%
figure = division.plot()
figure.savefig(OUT / "10_phase_division.png")
saved = division.save(OUT / "10_phase_division.json")
print("saved and loaded back:", repr(pk.load(saved)))

# %% [markdown]
# ## Fingerprints
# The runs as profile files, as `phasekit fingerprint run*.parquet` reads them. Each run's
# instructions over memory instructions goes through a median filter, B-spline resampling
# onto 0..100 % of the execution, Savitzky-Golay smoothing and 0..100 % normalization; runs
# are compared with the Canberra distance and clustered with Ward's linkage.

# %%
if len(ARGS) >= 3:
    run_paths = [Path(a) for a in ARGS[1:]]
else:
    from phasekit.io import write_profile
    from phasekit.synth.power import generate_fingerprint_runs

    run_paths = []
    for run in generate_fingerprint_runs(programs=4, inputs=3, repetitions=2, seed=0):
        meta = run.meta
        run_paths.append(SCRATCH / f"{meta['program']}_{meta['input']}_{meta['repetition']}"
                                   ".parquet")
        write_profile(run, run_paths[-1])
runs = [pk.read(p) for p in run_paths]
print(runs[0])

# %% [markdown]
# What the CLI does: the runs' metadata name their programs, so the number of clusters is
# the one that best groups the runs of a program (`k_rule` "programs-ari"). Blind, as for
# runs of unknown programs: the same fingerprints clustered with the number of clusters of
# the best mean silhouette, the programs not used.

# %%
fingerprints = fingerprint_profiles(runs, names=[p.name for p in run_paths])
print(repr(fingerprints), f"(number of clusters: {fingerprints.k_rule})")
print(fingerprints.summary().to_string(index=False))
blind = cluster_fingerprints([ratio_series(r)[0] for r in runs],
                             names=[p.name for p in run_paths])
print(repr(blind), f"(number of clusters: {blind.k_rule})")

# %%
if len(ARGS) < 3:
    programs = [str(r.meta["program"]) for r in runs]
    print(f"fingerprint clusters: {blind.n_clusters} by silhouette (programs not used), "
          f"adjusted Rand index with the {len(set(programs))} programs "
          f"{labels_ari(programs, blind.clusters):.3f}; {fingerprints.n_clusters} with the "
          f"programs known, ARI {fingerprints.ari:.3f}")

# %%
figure = fingerprints.plot()
figure.savefig(OUT / "10_fingerprints.png")
saved = fingerprints.save(OUT / "10_fingerprints.json")
print("saved and loaded back:", repr(pk.load(saved)))
