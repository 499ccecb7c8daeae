# ruff: noqa: E402
# %% [markdown]
# # 09 - Record a run on this machine, then find its period
#
# What `phasekit sources`, `phasekit record -- COMMAND` and `phasekit analyze` do, in Python:
# list what this machine can measure (and why not the rest), record a command with the
# compiled sampler, read the recording back and find its periodicity.
#
# The data: recorded here and now. The command is a small Python child that alternates
# 0.3 s of busy-waiting and 0.7 s of sleep for 6 s, on absolute deadlines: its period is
# 1 s whatever the machine's speed or load, which is the truth the analysis is compared
# with. The busy and idle parts differ in length on purpose: with halves of 0.5 s, the
# context switches at the two transitions of each cycle are 0.5 s apart, a period of their
# own that a loaded machine (where they become the most periodic metric) sometimes shows. It is recorded in the child's process scope, every 5 ms (the recorder's default):
# the software counters then count the child itself, not whatever else runs on the node.
#
# `python examples/09_recording.py [COMMAND ...]` records your own command instead (e.g.
# `python examples/09_recording.py ./app input.dat`). Hardware counters and RAPL energy
# need a PMU and /sys/class/powercap: where they are absent (a virtual machine), the
# recorder says why and records what it can.

# %%
import sys
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
from phasekit.record import builtin_sources, probe_all

# %% [markdown]
# ## What this machine can measure
# `probe_all` is what `phasekit sources` prints: each source, whether it can run here, and
# for what it cannot measure, the reason.

# %%
for availability in probe_all(builtin_sources()):
    if availability.available:
        print(f"{availability.name}: can measure "
              + ", ".join(m.name for m in availability.metrics))
    else:
        print(f"{availability.name}: cannot run here: {availability.reason}")
        continue
    for metric, why in availability.unavailable_metrics.items():
        print(f"  {metric}: not measured here ({why})")

# %% [markdown]
# ## Record the command
# `pk.record` starts the command held until every source is open, samples until it exits,
# and writes the profile (Parquet here) with its metadata; it returns the recording's
# summary. `sources=None`: every source that can run here.

# %%
PERIOD_S, BUSY_S, CYCLES = 1.0, 0.3, 6
CHILD = f"""
import time
start = time.monotonic()
for k in range({CYCLES}):
    busy_until = start + k * {PERIOD_S} + {BUSY_S}
    while time.monotonic() < busy_until:
        pass
    time.sleep(max(0.0, start + (k + 1) * {PERIOD_S} - time.monotonic()))
"""
command = ARGS or [sys.executable, "-c", CHILD]
path = OUT / "09_recording.parquet"
recording = pk.record(command, output=path, interval=0.005, scope="process")
print(repr(recording))
print(f"recorded {recording.n_samples} samples in {recording.duration:.2f} s with the "
      f"{recording.sampler} sampler; achieved interval {1e3 * recording.achieved_interval:.3f}"
      f" ms, jitter p99 {1e3 * recording.jitter_p99:.2f} ms, {recording.missed_ticks} missed "
      f"ticks; sources {', '.join(recording.sources)}; exit code {recording.exit_code}")
for source, why in recording.dropped.items():
    print(f"source {source} dropped during the recording: {why}")

# %% [markdown]
# ## Read it back and analyze it
# No metric named: the analysis chooses the most periodic one itself (there is no IPC
# without hardware counters) and says why.

# %%
profile = pk.read(path)
print(profile)
result = pk.periodicity(profile)
print(repr(result))
choice = result.params.get("metric_choice", {})
print(f"metric chosen: {'+'.join(result.metrics)} ({choice.get('reason', '')})")

# %% [markdown]
# ## Compare with the truth
# The child's period is 1 s by construction.

# %%
if not ARGS:
    found_s = result.patterns[0].period_s if result.patterns else float("nan")
    instances = result.patterns[0].n_instances if result.patterns else 0
    print(f"period found: {found_s:.3f} s; the child's period: {PERIOD_S:.3f} s "
          f"(difference {100 * (found_s / PERIOD_S - 1):+.1f} %, {instances} instances "
          f"of {CYCLES} cycles)")

# %% [markdown]
# ## The Table II summary, the figure, the saved result

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "09_recording.png")

# %%
saved = result.save(OUT / "09_recording.json")
again = pk.load(saved)
print("saved and loaded back:", repr(again))
