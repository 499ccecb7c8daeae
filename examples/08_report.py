# ruff: noqa: E402
# %% [markdown]
# # 08 - One HTML report of saved results
#
# What `phasekit report RESULT.json ... -o report.html` does, in Python: one
# self-contained page (inline figures and style, no script, no network) with a section per
# result, drawn by the view of its kind.
#
# The results: the analyses of examples 01-03 and 05 on the real data in `tests/data`,
# saved with `result.save(path)` as a script or the CLI (`-o RESULT.json`) would, then read
# back. `python examples/08_report.py [RESULT.json ...]` reports your own saved results.

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

import phasekit as pk
from phasekit.report import ReportItem, write_report

# %% [markdown]
# ## Results, saved
# Each result's `save` writes its versioned JSON; `pk.load` (or `pk.read`) reads it back.

# %%
if ARGS:
    saved = [Path(a) for a in ARGS]
else:
    results = {
        "periodicity": pk.periodicity(DATA / "lulesh_chop8_dram_10ms.csv"),
        "phases": pk.phases(DATA / "real_backtoback_1s.parquet"),
        "structure": pk.structure(DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"),
        "powermodel": pk.powermodel.fit(DATA / "kepler_rapl_kubelet_slice.csv",
                                        target="package_power", split="time"),
    }
    saved = [result.save(OUT / f"08_{name}.json") for name, result in results.items()]
for path in saved:
    print(f"{path}: {pk.load(path)!r}")

# %% [markdown]
# ## The report
# `phasekit.report.write_report` takes the results as stored (their JSON, with the name of
# the file each came from) and writes the page atomically.

# %%
items = [ReportItem(source=path.name, data=json.loads(path.read_text())) for path in saved]
page = write_report(OUT / "report.html", items, title="phasekit examples")
text = page.read_text(encoding="utf-8")
print(f"report: {page} ({len(items)} results, {text.count('<svg')} figures, "
      f"{len(text) // 1024} kB)")
