# ruff: noqa: E402
# %% [markdown]
# # 02 - Phases of a real counter series
#
# What `phasekit phases PROFILE` does, in Python: detect where the behaviour of a node
# changes, and which phases recur (the same id).
#
# The data: a real recording of this project's 2-core VM (`phasekit record`, 1 s sampling,
# software counters and /proc) while real programs ran back to back: numpy matrix products,
# idle, gzip, dd, idle, sort, array copies, numpy, gzip, idle, dd. The driver logged when
# each started; that log is the truth (`real_backtoback_1s.parquet.truth.json`).
#
# `python examples/02_phases.py [PROFILE]` analyzes your own profile instead.

# %%
import json
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

# %%
path = Path(ARGS[0]) if ARGS else DATA / "real_backtoback_1s.parquet"
profile = pk.read(path)
print(profile)
result = pk.phases(profile)  # method="auto": several sensors -> the online detector "ev"
print(repr(result))

# %% [markdown]
# ## Compare with the truth
# A change is found when a detected phase starts within 1 s (one sample) of a program's
# start or end.

# %%
if not ARGS:
    truth = json.loads(path.with_name(path.name + ".truth.json").read_text())
    true_changes = np.array(truth["change_times_s"], float)
    detected = np.array([phase.start_s for phase in result.phases[1:]], float)
    near = np.abs(detected[:, None] - true_changes[None, :]) <= 1.0
    found = int(near.any(axis=0).sum())
    false = int((~near.any(axis=1)).sum())
    print(f"changes found: {found} of {true_changes.size} within 1 s, "
          f"{false} false changes")
    labels = [s["label"] for s in truth["segments"]]
    print("programs:", " ".join(labels))
    print("phase ids:", " ".join(str(phase.id) for phase in result.phases))

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "02_phases.png")

# %%
saved = result.save(OUT / "02_phases.json")
print("saved and loaded back:", repr(pk.load(saved)))
