# ruff: noqa: E402
# %% [markdown]
# # 05 - A power model from a counter table
#
# What `phasekit powermodel fit TABLE` does, in Python: fit a model of measured power on
# activity counters, and score it on held-out rows.
#
# The data: a real slice of the Kepler model database (`kepler_rapl_kubelet_slice.csv`,
# Apache-2.0): RAPL package power of a node every 3 s with the kubelet's CPU usage and
# memory. phasekit screens the columns itself: power readings other than the target and
# constant columns are left out, the timestamp orders the rows. `split="time"` tests on the
# last 30 % of the rows in time (the model never sees the future). The reference to beat is
# the mean of the training power.
#
# `python examples/05_powermodel.py [TABLE.csv [TARGET]]` fits your own table.

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

import phasekit as pk

# %%
path = Path(ARGS[0]) if ARGS else DATA / "kepler_rapl_kubelet_slice.csv"
target = ARGS[1] if len(ARGS) > 1 else "package_power"
result = pk.powermodel.fit(path, target=target, model="linear", split="time")
print(repr(result))
print("features:", ", ".join(result.model.features))
print("left out:", "; ".join(f"{k} ({v})" for k, v in result.excluded.items()))

# %% [markdown]
# ## Against the mean of the training power

# %%
print(f"test MAE {result.test['mae']:.1f} W against {result.mean_baseline['mae']:.1f} W "
      f"for the mean power ({result.n_test} test rows)")

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "05_powermodel.png")

# %%
saved = result.save(OUT / "05_powermodel.json")
print("saved and loaded back:", repr(pk.load(saved)))
