# ruff: noqa: E402
# %% [markdown]
# # 11 - The signature of a C program: its time and energy from short partial runs
#
# What `phasekit signature build` and `phasekit signature run --compare` do, in Python
# (Salinas Hilburg's thesis, chapters 2 and 4): find the program's independent execution
# paths from its call graph (Doxygen), build one executable per path, count each one's
# instructions exactly (valgrind's callgrind), run every path for p % of its work, and
# reconstruct the whole program's time and energy; then run the whole program to compare.
#
# The data: a tiny C program written here (two kernels, a sum of squares and a 3-point
# smoothing, each repeating STEPS times: two paths from `main`). It runs in the
# "simulated" mode: every run, partial or whole, goes under callgrind's cache and branch
# simulation of a fixed reference machine and is timed by its cycle estimate at 2 GHz. That
# does not measure this machine (the output says so) but is deterministic, where this
# virtual machine's CPU time varies by tens of percent from run to run; the whole program
# simulated the same way is the truth the estimate is compared with.
#
# `python examples/11_signature.py PROGRAM.c [ARGS ...]` builds the signature of your own
# program instead (its last argument the trip count, as STEPS here), in the "auto" mode
# (hardware counters where there are any, else CPU time). Needs a C compiler, Doxygen and
# valgrind (`apt-get install doxygen valgrind`).

# %%
import shutil
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
from phasekit.signature.paths import build_signature

MISSING = [tool for tool in ("cc", "doxygen", "valgrind") if not shutil.which(tool)]
if MISSING:
    print(f"needs cc, doxygen and valgrind: {', '.join(MISSING)} not installed")
    sys.exit(0)

# %% [markdown]
# ## The program
# Each kernel prints its own result, so that no path's work is dead code once the other
# path's call is removed, and needs no data another path computes (the method's
# assumption). Its instructions are linear in STEPS, the program's second argument.

# %%
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) void sum_squares(const double *x, long n, int steps) {
    double t = 0.0;
    for (int s = 0; s < steps; s++)
        for (long i = 0; i < n; i++) t += x[i] * x[i];
    printf("sum of squares %.6e\n", t);
}

static __attribute__((noinline)) void smooth(const double *x, long n, int steps) {
    double *y = calloc(n, sizeof *y);
    for (int s = 0; s < steps; s++)
        for (long i = 1; i + 1 < n; i++)
            y[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1] + 1e-3 * y[i];
    printf("smoothed %.6e\n", y[n / 2]);
    free(y);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    double *x = malloc(n * sizeof *x);
    for (long i = 0; i < n; i++) x[i] = 1.0 + (double)(i % 13) * 0.1;
    sum_squares(x, n, steps);
    smooth(x, n, steps);
    free(x);
    return 0;
}
"""
SCRATCH = Path(tempfile.mkdtemp())
if ARGS:
    source, args, mode = Path(ARGS[0]), ARGS[1:], "auto"
else:
    source, args, mode = SCRATCH / "tiny.c", ["12000", "300"], "simulated"
    source.write_text(PROGRAM, encoding="utf-8")

# %% [markdown]
# ## Build the signature
# What `phasekit signature build tiny.c -o tiny.sig -- 12000 300` does: the call graph,
# the paths, one executable per path and their exact instruction counts (at 1 and 2
# steps, extrapolated to the real arguments). The signature is a directory that `pk.read`
# and `pk.signature` read back.

# %%
signature = build_signature(source, SCRATCH / "tiny.sig", args=args,
                            steps_arg=len(args) if args else None)
print(repr(signature))
for unit in signature.units:
    print(f"  {unit.label}: {unit.status}" + (f" ({unit.reason})" if unit.reason else ""))
print(repr(pk.read(SCRATCH / "tiny.sig")))

# %% [markdown]
# ## Run it and compare with the whole program
# `pk.signature` runs every path for p = 10 % of its work, reconstructs the time and energy
# (power: by default an assumed 6 W per busy core, said), and with `compare=True` runs the
# whole program the same way. `interval=0.001`: 1 ms samples, fine enough for these
# runs of a few hundredths of a (simulated) second.

# %%
estimate = pk.signature(SCRATCH / "tiny.sig", p=10.0, interval=0.001, compare=True, mode=mode)
print(repr(estimate))
for line in estimate.unmeasured:
    print("not measured:", line)
for line in estimate.notes:
    print("note:", line)

# %%
if estimate.compared:
    print(f"estimated time {estimate.time_s:.5f} s against the full run's "
          f"{estimate.program_time_s:.5f} s ({estimate.time_error:.2f} % off); instructions "
          f"{estimate.instructions:.4g} against {estimate.program_instructions:.4g} "
          f"({estimate.instruction_error:.2f} % off); energy {estimate.energy_error:.2f} % "
          f"off; the partial runs take 1/{estimate.cr:.1f} of the program's time "
          f"({estimate.mode} mode)")

# %% [markdown]
# ## The segments table, the figure, the saved result

# %%
print(estimate.summary().to_string(index=False))

# %%
figure = estimate.plot()
figure.savefig(OUT / "11_signature.png")

# %%
saved = estimate.save(OUT / "11_signature.json")
print("saved and loaded back:", repr(pk.load(saved)))
