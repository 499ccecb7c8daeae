# ruff: noqa: E402
# %% [markdown]
# # 07 - Many node profiles at once
#
# What `phasekit analyze node*.parquet` does with several files, in Python: analyze each
# node's profile, then check that the nodes of one run agree (the same patterns, DTW per
# associated point within 1 % of the pattern's mean) and name the nodes that stand out.
#
# `pk.periodicity_many(paths, workers=..., client=...)` takes files, folders or glob
# patterns and runs one analysis per file: serially (`workers=1`), on local processes
# (`workers=N`, None: one per core) or on a Dask cluster (`client=` a
# `dask.distributed.Client`, or `scheduler="tcp://..."`). A file that fails becomes one of
# the result's `errors`; it never stops the others.
#
# The data: no real multi-node run ships with phasekit, so 6 nodes of a synthetic NEMO-like
# run are generated (phasekit.synth.generate_nodes, 2 minutes at 5 ms each), one of them
# planted as a slow outlier, and written as Parquet files first. The truth: which node is
# the outlier, and why.
#
# `python examples/07_many_nodes.py [PROFILE ...]` compares your own node profiles.

# %%
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

import phasekit as pk

# %%
if ARGS:
    paths, truth = [Path(a) for a in ARGS], None
else:
    from phasekit.io import write_profile
    from phasekit.synth import generate_nodes

    profiles, truth = generate_nodes("nemo", n_nodes=6, minutes=2, seed=0, outliers=("slow",))
    folder = Path(tempfile.mkdtemp())
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    paths = [folder]  # a folder: its profiles
    print(len(profiles), "profiles in", folder)

# %% [markdown]
# ## One analysis per file, then the comparison
# `workers=1` keeps this example to a few seconds on a small machine. Local processes are
# started with `spawn`: in a script (not in a notebook), call `periodicity_many` with
# `workers` > 1 under `if __name__ == "__main__":`, or each worker re-runs the script.

# %%
result = pk.periodicity_many(paths, workers=1)
print(repr(result))
for node in result.nodes:
    period = f"{node.patterns[0].period_s:.3f} s" if node.patterns else "none"
    print(f"{node.node}: coverage {100 * node.coverage:.1f} %, period {period}")
for error in result.errors:
    print(f"failed: {error.file}: {error.message}")

# %% [markdown]
# ## Do the nodes agree? Which stand out?

# %%
agreement = result.agreement
print(f"reference node {agreement.reference}: {agreement.n_agree} of {agreement.n_nodes} "
      f"nodes agree {agreement.explanation}".rstrip())
for outlier in result.outliers:
    print(f"outlier {outlier.node}: {', '.join(outlier.reasons)}: {'; '.join(outlier.details)}")
if truth is not None:
    print("planted outliers:", ", ".join(f"{node} ({kind})"
                                         for node, kind in truth.outliers.items()))

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "07_many_nodes.png")

# %%
saved = result.save(OUT / "07_many_nodes.json")
print("saved and loaded back:", repr(pk.load(saved)))
