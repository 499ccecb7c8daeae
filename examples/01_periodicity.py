# ruff: noqa: E402
# %% [markdown]
# # 01 - Periodicity of a real profile
#
# What `phasekit analyze PROFILE` does, in Python: find the periodic behaviours of a
# node-level profile, how much of the run they cover, and one representative pattern each.
#
# The data: DRAM reads and writes per 10 ms bin of a real LULESH 2.0 run (8 MPI ranks,
# two iterations), summed over the memory controllers by the uncore sampling of the
# Extrae trace `tests/data/paraver/lulesh_7+1_chop8.prv.gz`. The trace of the same run
# gives the truth: the time between the two `MPI_Allreduce` calls of a rank (one per
# iteration) is the iteration period.
#
# Run it as `python examples/01_periodicity.py [PROFILE]`: with a profile of your own
# (CSV, Parquet, a `phasekit record` file, `perf stat -I -x,` or `likwid-perfctr -t`
# output) it analyzes that instead. Outputs go to `./phasekit-examples/`.

# %%
import sys
from pathlib import Path

if "__file__" in globals():  # run as a script: no display, file arguments
    import matplotlib

    matplotlib.use("Agg")
    HERE, ARGS = Path(__file__).resolve().parent, sys.argv[1:]
else:  # opened as a notebook (Jupytext, VS Code) from examples/
    HERE, ARGS = Path.cwd(), []
DATA = HERE.parent / "tests" / "data"
OUT = Path("phasekit-examples")
OUT.mkdir(exist_ok=True)

import numpy as np

import phasekit as pk

# %% [markdown]
# ## Read and analyze
# `pk.read` recognizes the file by its content; `pk.periodicity` takes the profile (or its
# path) and keyword options (`metrics=`, `window=(start_s, end_s)`, ...).

# %%
path = Path(ARGS[0]) if ARGS else DATA / "lulesh_chop8_dram_10ms.csv"
profile = pk.read(path)
print(profile)
result = pk.periodicity(profile)
print(repr(result))
print(result.explanation)

# %% [markdown]
# ## Compare with the truth
# The iteration period from the trace of the same run: consecutive `MPI_Allreduce` calls
# of rank 1.

# %%
if not ARGS:
    trace = pk.read(DATA / "paraver" / "lulesh_7+1_chop8.prv.gz")
    calls = trace.for_rank(1)
    allreduce = calls.loc[calls["call"] == "MPI_Allreduce", "time_s"].to_numpy()
    truth_s = float(np.diff(allreduce).mean())
    found_s = result.patterns[0].period_s if result.patterns else float("nan")
    print(f"period found: {found_s:.3f} s; iteration in the trace: {truth_s:.3f} s "
          f"(difference {100 * (found_s / truth_s - 1):+.1f} %)")

# %% [markdown]
# ## The Table II summary, the figure, the saved result

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "01_periodicity.png")

# %%
saved = result.save(OUT / "01_periodicity.json")
again = pk.load(saved)
print("saved and loaded back:", repr(again))
