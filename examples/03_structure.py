# ruff: noqa: E402
# %% [markdown]
# # 03 - Loop structure of a real MPI trace
#
# What `phasekit structure TRACE` does, in Python: turn an MPI execution trace into
# pseudocode of the application's loops, without its source code.
#
# The data: a real Extrae/Paraver trace of LULESH 2.0 on 8 MPI ranks, chopped to its first
# two iterations (`tests/data/paraver/lulesh_7+1_chop8.prv.gz`, with its `.pcf` and `.row`),
# and a real Score-P OTF2 trace of a 2-rank MPI ping-pong (8 sends and 8 receives per rank).
# The truth: LULESH calls `MPI_Allreduce` once per iteration of its main loop, so the main
# loop runs as many times as a rank calls it; the ping-pong loops 8 times.
#
# `python examples/03_structure.py [TRACE]` analyzes your own trace (`.prv`, `.prv.gz`,
# or an OTF2 `traces.otf2`; OTF2 needs `pip install "phasekit[otf2]"`).

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
path = Path(ARGS[0]) if ARGS else DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
trace = pk.read(path)  # a Trace: one row per MPI call
print(trace)
result = pk.structure(trace)  # or pk.structure(path); rank=R for one rank
print(repr(result))

# %% [markdown]
# ## Compare with the truth

# %%
if not ARGS:
    rank0 = trace.for_rank(0)
    allreduces = int((rank0["call"] == "MPI_Allreduce").sum())
    top = result.top_loops
    print(f"main loop: {top[0].it} iterations on ranks {list(top[0].all_ranks())}; "
          f"MPI_Allreduce calls of rank 0: {allreduces}")

# %% [markdown]
# ## The pseudocode table, the clustering figure, the saved result

# %%
print(result.summary().to_string(index=False))

# %%
figure = result.plot()
figure.savefig(OUT / "03_structure.png")

# %%
saved = result.save(OUT / "03_structure.json")
print("saved and loaded back:", repr(pk.load(saved)))

# %% [markdown]
# ## The same on an OTF2 trace (when the `otf2` package is installed)

# %%
if not ARGS:
    try:
        import otf2  # noqa: F401
    except ImportError:
        print("OTF2: not installed (pip install 'phasekit[otf2]'); skipped")
    else:
        ping_pong = pk.structure(DATA / "otf2" / "ping-pong-otf2" / "traces.otf2")
        print(repr(ping_pong))
        print(f"ping-pong loop: {ping_pong.top_loops[0].it} iterations")
