# ruff: noqa: E402
# %% [markdown]
# # 06 - Schedule a batch of tasks for energy
#
# What `phasekit schedule BATCH --servers S --cores C` does, in Python: plan a batch of
# multi-threaded tasks on a small data center with each policy (round robin, the greedy
# heuristic, simulated annealing, and the MILP when it fits), execute the plans on the true
# task times, and compare makespan and energy.
#
# The data: no real batch ships with phasekit, so the thesis's "small" scenario is
# generated (phasekit.synth.batches: 66 tasks of NPB, Dgemm and Stream inputs with 1-6
# threads, 5 servers x 12 cores) and written to a batch CSV first, as a user's would be.
# The truth to hold a plan to: no plan can finish before the lower bound of the makespan
# (the total core-seconds over the cores, or the longest task).
#
# `python examples/06_schedule.py [BATCH.csv SERVERS CORES]` schedules your own batch
# (columns name, threads, time_s, power_w).

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
    path, servers, cores = Path(ARGS[0]), int(ARGS[1]), int(ARGS[2])
else:
    from phasekit.schedule.batch import write_batch
    from phasekit.synth.batches import scenario_batch

    batch, scenario = scenario_batch("small", seed=0)
    path = Path(tempfile.mkdtemp()) / "batch.csv"
    write_batch(batch, path)
    servers, cores = scenario.servers, scenario.cores

# %% [markdown]
# The MILP is left out here to keep the example to a second (`policies="all"` includes it;
# `time_limit_s` bounds it).

# %%
result = pk.schedule(path, servers=servers, cores=cores, policies=("rr", "heuristic", "sa"),
                     seed=0)
print(repr(result))

# %%
best = min(result.policies, key=lambda p: p.energy_j)
print(f"best policy: {best.policy}, makespan {best.makespan_s:.0f} s "
      f"({100 * (best.makespan_s / result.lower_bound_s - 1):.1f} % over the lower bound "
      f"{result.lower_bound_s:.0f} s), energy {best.saving_vs_rr:.1f} % below round robin")

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "06_schedule.png")

# %%
saved = result.save(OUT / "06_schedule.json")
print("saved and loaded back:", repr(pk.load(saved)))
