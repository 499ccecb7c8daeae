# ruff: noqa: E402
# %% [markdown]
# # 04 - An energy campaign, to a choice of configuration
#
# What `phasekit energy fit`, `energy choose` and `energy suggest` do, in Python: fit the
# energy model E(f, p, N) of a program (frequency, cores, input) from a few measured
# configurations, choose the minimum-energy configuration for each input, and suggest which
# configurations to measure next.
#
# The data: no real campaign ships with phasekit, so a synthetic one stands in for
# `phasekit campaign run` (phasekit.synth.campaigns: a PARSEC-like program the model does
# not contain, 1.2-2.2 GHz x 1-32 cores x 5 inputs, 1.5 % noise), written to a campaign
# file first as the real one would be. Its noiseless energies are the truth: the true
# regret of a choice is how much more energy it takes than the true best configuration.
#
# `python examples/04_energy.py [CAMPAIGN]` fits your own campaign instead (a
# `phasekit campaign run` file, a CSV table of runs, or PaScal Analyzer JSON).

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

import numpy as np

import phasekit as pk
from phasekit.energy import configurations
from phasekit.energy.suggest import suggest, training_rows

# %% [markdown]
# ## The campaign
# A campaign file as `phasekit campaign run -o FILE` writes it.

# %%
if ARGS:
    path, synthetic = Path(ARGS[0]), None
else:
    from phasekit.campaign import write_campaign
    from phasekit.synth.campaigns import realistic_campaign

    synthetic = realistic_campaign("mixed", seed=1)
    path = Path(tempfile.mkdtemp()) / "campaign.jsonl"
    write_campaign(synthetic.campaign, path)
campaign = pk.read(path)
print(campaign)
table = configurations(campaign)  # one row per (frequency, cores, input)
print(table.head().to_string(index=False))

# %% [markdown]
# ## Fit on 12 configurations
# `train=12`: fit on 12 configurations chosen by a D-optimal design, as if only those had
# been measured; the others score the fit (holdout MPE).

# %%
fit = pk.energy.fit(path, train=12)
print(repr(fit))
print(fit.summary().to_string(index=False))

# %% [markdown]
# ## Choose the minimum-energy configuration of each input

# %%
choice = pk.energy.choose(path, fit=fit)
print(repr(choice))
print(choice.summary().to_string(index=False))

# %% [markdown]
# ## Compare with the truth
# The true (noiseless) energy of each chosen configuration against the true minimum.

# %%
if synthetic is not None:
    truth = table[["frequency_ghz", "cores", "input"]].copy()
    truth["energy_j"] = synthetic.energy_j  # same order: one run per configuration
    regrets = []
    for c in choice.choices:
        rows = truth[truth["input"] == c.input]
        best = rows["energy_j"].min()
        chosen = rows.loc[np.isclose(rows["frequency_ghz"], c.best.frequency_ghz)
                          & (rows["cores"] == c.best.cores), "energy_j"].iloc[0]
        regrets.append(100 * (chosen / best - 1))
        print(f"input {c.input_label}: {c.best.frequency_ghz:g} GHz x {c.best.cores} cores, "
              f"true regret {regrets[-1]:.1f} %")
    print(f"mean true regret of the choices: {np.mean(regrets):.1f} % "
          f"(12 of {len(table)} configurations measured)")

# %% [markdown]
# ## What to measure next
# `phasekit.energy.suggest.suggest` refits the model without one group of the measured
# configurations at a time and suggests the unmeasured configurations the refits disagree
# on most among those that may be the best.

# %%
measured = training_rows(table, fit)  # the 12 configurations the fit was trained on
suggestion = suggest(measured, k=5, reference=table,
                     frequencies_ghz=tuple(np.unique(table["frequency_ghz"].dropna())),
                     cores=tuple(int(c) for c in np.unique(table["cores"])))
print(repr(suggestion))
print(suggestion.summary().to_string(index=False))

# %%
figure = fit.plot()
figure.savefig(OUT / "04_energy_fit.png")
figure = choice.plot()
figure.savefig(OUT / "04_energy_choice.png")
figure = suggestion.plot()
figure.savefig(OUT / "04_energy_suggest.png")

# %%
for name, result in (("fit", fit), ("choice", choice), ("suggest", suggestion)):
    saved = result.save(OUT / f"04_energy_{name}.json")
    print("saved and loaded back:", repr(pk.load(saved)))
