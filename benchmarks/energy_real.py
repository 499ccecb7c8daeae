"""Energy models on real PaScal campaigns: holdout error from 10 training
configurations, every method on the same points, on every campaign of the real
measurements kept beside the checkout (``energy/pascal_dev``, ``--data DIR`` to point
elsewhere; 22 real campaigns: PARSEC, OpenMC and HPL on
2x Xeon E5-2698 v3, IPMI energy; 5-11 frequencies x 17 core counts x 5 inputs).

For each campaign, each design and each seed, the training configurations are chosen once
(:func:`phasekit.energy.fit.choose_training`: ``doptimal``, the default, for the extended
model with its per-input deviations, the same points for every seed, which then changes the
multi-start only; ``random``, the thesis's, seeds 0-4) and every method learns from them:

- ``extended`` (the default of ``fit_energy``): our model with the robust loss (log residuals,
  over-predictions Cauchy-like: a failed run reads far too little energy);
- ``auto``: the candidate of lowest leave-one-out loss among extended, extended with its
  deviations shrunk, and the thesis's model ``pt`` (``select_model``);
- ``pt (squares)``: the thesis's model (P times T) fitted as the thesis fits it (least squares on
  relative errors, section 4.10; its default); ``pt (robust)``: with the robust loss;
- ``extended (squares)``: our model fitted by least squares, the earlier default;
- ``svr``: scikit-learn's SVR, grid-searched as ``baseline_predictions`` does.

Scoring: MPE (Silva 2024, eq. 4.23) over every other configuration whose reading is a valid run.
PARSEC's fluidanimate runs only on a power-of-two number of threads; its campaigns' readings
at the other core counts (one meter sample, ~0.46 J, where its runs take 4-750 J) are failed
runs, left out of the scoring (and counted: the MPE over every reading is listed for them).
Every other reading of every campaign is scored as measured. Means over campaigns; "worst" is
the worst campaign's mean over its seeds. Fit time: ``fit_energy``'s own clock (the fit,
without reading or scoring), median and maximum over all fits.

Run: ``python benchmarks/energy_real.py [--quick] [--data DIR]`` (``--quick``: 3 campaigns,
2 seeds, no SVR).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import _common

SECTION = "energy_real"
DATA = _common.HERE.parent.parent / "shared" / "data" / "energy" / "pascal_dev"
N_TRAIN = 10
METHODS = ("extended", "auto", "pt (squares)", "pt (robust)", "extended (squares)", "svr")


def valid_runs(name: str, configs: pd.DataFrame) -> np.ndarray:
    """Readings that are runs: all, but fluidanimate's at core counts other than powers of 2."""
    cores = configs["cores"].to_numpy(int)
    if name.startswith("fluid"):
        return (cores & (cores - 1)) == 0
    return np.ones(len(configs), bool)


def evaluate(configs: pd.DataFrame, valid: np.ndarray, design: str, seed: int,
             methods: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Every method on the same training configurations: MPE on the valid holdout, on the
    whole holdout, and fit time."""
    from phasekit.energy.fit import (
        DEVIATION_PENALTY,
        baseline_predictions,
        choose_training,
        fit_energy,
        fit_model,
        frequencies,
        mpe,
    )

    f = frequencies(configs)
    p, n, e = (configs[c].to_numpy(float) for c in ("cores", "input", "energy_j"))
    train = choose_training(configs, N_TRAIN, design=design, seed=seed, model="extended",
                            with_time=False)
    test = np.setdiff1d(np.arange(len(configs)), train)
    good = test[valid[test]]
    out: dict[str, dict[str, float]] = {}

    def score(predict) -> dict[str, float]:  # type: ignore[no-untyped-def]
        return {"mpe": mpe(predict(good), e[good]), "mpe_all": mpe(predict(test), e[test])}

    for method in methods:
        started = time.perf_counter()
        if method in ("extended", "auto"):
            result = fit_energy(configs, model=method, n_train=N_TRAIN, design=design,
                                seed=seed, compare=False, use_time=False)
            model = result.fitted
            row = score(lambda i, m=model: m.predict_energy(f[i], p[i], n[i]))
            row["fit_s"] = result.fit_time_s
            row["suspect"] = len(result.suspect)
            if method == "auto":
                row["chosen"] = result.model + ("*" if result.deviation_penalty > DEVIATION_PENALTY else "")
        elif method == "svr":
            X = np.column_stack([f, np.log2(p), n])
            _, predicted = baseline_predictions(X[train], e[train], X[test], names=("svr",),
                                                seed=seed)["svr"]
            by_index = dict(zip(test.tolist(), predicted, strict=True))
            row = score(lambda i, known=by_index: np.array([known[j] for j in i]))
        else:
            model_name, loss = method.split(" ")
            model = fit_model(f[train], p[train], n[train], e[train], None, model=model_name,
                              seed=seed, loss=loss.strip("()"))
            row = score(lambda i, m=model: m.predict_energy(f[i], p[i], n[i]))
        row.setdefault("fit_s", time.perf_counter() - started)
        out[method] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="3 campaigns, 2 seeds, no SVR")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="folder of the PaScal campaigns (default: the real measurements "
                             "kept beside the checkout)")
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("completo_*.csv"))
    if not files:
        print(f"no PaScal campaigns in {args.data} (the real measurements are kept beside the "
              "checkout, not copied into it): nothing to measure", file=sys.stderr)
        return 0
    from phasekit.energy.fit import configurations

    warnings.simplefilter("ignore")
    bench = _common.Run()
    if args.quick:
        files = files[:3]
    seeds = [0, 1] if args.quick else [0, 1, 2, 3, 4]
    methods = tuple(m for m in METHODS if not (args.quick and m == "svr"))
    records = []
    failed_runs = {}
    for path in files:
        name = path.stem.removeprefix("completo_")
        configs = configurations(pd.read_csv(path), source=str(path))
        valid = valid_runs(name, configs)
        if not valid.all():
            failed_runs[name] = int((~valid).sum())
        for design in ("doptimal", "random"):
            for seed in seeds:
                for method, row in evaluate(configs, valid, design, seed, methods).items():
                    records.append({"campaign": name, "design": design, "seed": seed,
                                    "method": method, **row})
        here = pd.DataFrame([r for r in records if r["campaign"] == name])
        means = here.groupby(["design", "method"])["mpe"].mean().unstack(0)
        print(f"{name}: " + "; ".join(f"{m} {means.loc[m, 'doptimal']:.1f} / "
                                      f"{means.loc[m, 'random']:.1f}" for m in methods),
              file=sys.stderr, flush=True)
    table = pd.DataFrame(records)
    per_campaign = table.groupby(["design", "method", "campaign"])["mpe"].mean()

    summary_header = ["design", "method", "mean MPE (%)", "median campaign (%)",
                      "worst campaign (%)", "worst single fit (%)", "campaigns <= 10 %",
                      "fit time median / max"]
    summary = []
    for design in ("doptimal", "random"):
        for method in methods:
            camp = per_campaign.loc[design, method]
            fits = table[(table.design == design) & (table.method == method)]
            summary.append([
                design, method, f"{camp.mean():.1f}", f"{camp.median():.1f}",
                f"{camp.max():.1f} ({camp.idxmax()})", f"{fits['mpe'].max():.1f}",
                f"{int((camp <= 10).sum())} of {camp.size}",
                f"{_common.seconds(fits['fit_s'].median())} / "
                f"{_common.seconds(fits['fit_s'].max())}"])
    detail_header = ["campaign", *[f"{m} ({d})" for d in ("doptimal", "random")
                                   for m in ("extended", "auto", "pt (squares)", "svr")
                                   if m in methods]]
    detail = []
    for campaign in dict.fromkeys(table["campaign"]):
        detail.append([campaign, *[f"{per_campaign.loc[d, m, campaign]:.1f}"
                                   for d in ("doptimal", "random")
                                   for m in ("extended", "auto", "pt (squares)", "svr")
                                   if m in methods]])
    ext = table[(table.method == "extended")]
    flagged = ext.groupby("campaign")["suspect"].mean()
    auto = table[table.method == "auto"]
    chosen = auto["chosen"].value_counts()
    fluid_all = {c: table[(table.campaign == c) & (table.method == "extended")
                          & (table.design == "doptimal")]["mpe_all"].mean()
                 for c in failed_runs}
    notes = [
        f"- {len(files)} campaigns, {N_TRAIN} training configurations, designs doptimal and "
        f"random, seeds {seeds[0]}-{seeds[-1]}; every method on the same points; MPE on every "
        "other configuration read from a valid run.",
        "- Failed runs left out of the scoring (fluidanimate at core counts that are not "
        "powers of two): " + (", ".join(f"{c} {k}" for c, k in failed_runs.items()) or "none")
        + "; the default's MPE over every reading there (doptimal): "
        + (", ".join(f"{c} {v:.0f} %" for c, v in fluid_all.items()) or "-") + ".",
        "- Training readings the default flagged as probable failed runs (at least 3x below "
        "the fit), mean per fit: " + ", ".join(f"{c} {v:.1f}" for c, v in flagged.items()
                                                if v > 0) + ".",
        "- `auto` chose: " + ", ".join(f"{k} x{v}" for k, v in chosen.items())
        + " (`*`: deviations shrunk, penalty 0.5).",
    ]
    print(_common.text_table(summary_header, summary))
    print()
    print(_common.text_table(detail_header, detail))
    print("\n".join(notes))
    md = "\n".join([
        "## Energy models on real PaScal campaigns (`benchmarks/energy_real.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {bench.elapsed() / 60:.1f} min.",
        *notes,
        "",
        _common.markdown_table(summary_header, summary, "llrrrrrr"),
        "",
        "### Mean MPE (%) per campaign over the seeds",
        "",
        _common.markdown_table(detail_header, detail, "l" + "r" * (len(detail_header) - 1)),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
