"""Energy-model fitting: fit time, holdout MPE of the thesis's model (``pt``) and ours against
SVR/MLP/KNN/tree from 10 training configurations, random against designed training sets, and
a learning curve.

Campaigns: the synthetic thesis-model campaign (:func:`phasekit.synth.campaigns.seed_campaign`,
1 % noise) and the realistic generator (:func:`~phasekit.synth.campaigns.realistic_campaign`,
its four PARSEC-like archetypes), each on the thesis's grid (11 frequencies x 17 core counts x
5 inputs = 935 configurations), one campaign per seed (the seed draws the noise and, for the
realistic generator, the per-input deviations; for the random design also the training set).
Every method is trained on the same 10 configurations and scored on the 925 others (MPE,
Silva 2024 eq. 4.23). With the input fixed, each input's 187
configurations separately: 10 random ones train, the other 177 score, mean over the inputs.
Fit time: :func:`~phasekit.energy.fit.fit_model` (8 starts) on 10
configurations, median over the runs, and once on all 935. Targets: a fit in
<= 1 s; <= 10 % MPE from 10 configurations on campaigns the thesis's model misses.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import warnings

import numpy as np

import _common

SECTION = "energy_fit"
METHODS = ("pt", "extended", "svr", "mlp", "knn", "tree")


def campaigns(quick: bool, seeds: list[int]):  # type: ignore[no-untyped-def]
    from phasekit.energy.fit import configurations
    from phasekit.synth.campaigns import PROGRAMS, realistic_campaign, seed_campaign

    kinds = [("thesis model (1 % noise)", lambda s: seed_campaign(seed=s))]
    programs = ["mixed"] if quick else list(PROGRAMS)
    kinds += [(f"realistic: {p}", lambda s, p=p: realistic_campaign(p, seed=s))
              for p in programs]
    for name, make in kinds:
        yield name, {s: configurations(make(s).campaign) for s in seeds}


def evaluate(configs, design: str, seed: int, baselines):  # type: ignore[no-untyped-def]
    from phasekit.energy.fit import fit_energy

    result = fit_energy(configs, model="extended", n_train=10, design=design, seed=seed,
                        baselines=baselines)
    scores = {"extended": result.mpe_holdout, "pt": result.other_models["pt"]["mpe_holdout"]}
    scores.update({k: v["mpe_holdout"] for k, v in result.baselines.items()})
    return scores


def per_input(configs, seed: int, baselines):  # type: ignore[no-untyped-def]
    """Holdout MPE with the input fixed: for each input N, 10 random configurations of that
    input train, the other configurations of that input score; the mean over inputs per
    method. Input k draws its training set with seed ``10 * seed + k`` (independent draws)."""
    from phasekit.energy.fit import fit_energy

    scores: dict[str, list[float]] = {}
    for k, level in enumerate(sorted(configs["input"].unique())):
        sub = configs[configs["input"] == level].reset_index(drop=True)
        result = fit_energy(sub, model="extended", n_train=10, design="random",
                            seed=10 * seed + k, baselines=baselines)
        found = {"extended": result.mpe_holdout,
                 "pt": result.other_models["pt"]["mpe_holdout"]}
        found.update({b: v["mpe_holdout"] for b, v in result.baselines.items()})
        for method, value in found.items():
            scores.setdefault(method, []).append(value)
    return {method: float(np.mean(values)) for method, values in scores.items()}


def fit_times(configs) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    from phasekit.energy.fit import choose_training, fit_model

    times = {"pt": [], "extended": []}
    for s in range(5):
        train = configs.iloc[choose_training(configs, 10, seed=s)]
        for model in times:
            start = time.perf_counter()
            fit_model(train.frequency_ghz, train.cores, train.input, train.energy_j,
                      train.time_s, model=model, seed=s)
            times[model].append(time.perf_counter() - start)
    start = time.perf_counter()
    fit_model(configs.frequency_ghz, configs.cores, configs.input, configs.energy_j,
              configs.time_s, model="extended")
    whole = time.perf_counter() - start
    return statistics.median(times["pt"]), statistics.median(times["extended"]), whole


def cell(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{np.mean(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="tiny sizes (smoke test)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    bench = _common.Run()
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    designs = ("random", "doptimal") if args.quick else ("random", "maximin", "doptimal")
    baselines = ("knn", "tree") if args.quick else ("svr", "mlp", "knn", "tree")
    methods = [m for m in METHODS if m in ("pt", "extended") or m in baselines]

    fixed_baselines = () if args.quick else ("svr",)
    fixed_methods = ["pt", "extended", *fixed_baselines]
    fixed_header = ["campaign", *[f"{m} {where}" for m in fixed_methods
                                  for where in ("across inputs", "input fixed")]]
    rows = []
    fixed_rows: list[list[str]] = []
    across: dict[str, list[float]] = {}
    realistic: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in fixed_methods}
    timing = None
    floors = []
    for name, by_seed in campaigns(args.quick, seeds):
        if timing is None:
            timing = fit_times(by_seed[seeds[0]])
        for design in designs:
            scores: dict[str, list[float]] = {m: [] for m in methods}
            for s in seeds:
                for method, value in evaluate(by_seed[s], design, s, baselines).items():
                    scores[method].append(value)
            rows.append([name, design, *[cell(scores[m]) for m in methods]])
            print(_common.text_table(["campaign", "design", *methods], rows[-1:]), flush=True)
            if design == "random":
                across = scores
        fixed: dict[str, list[float]] = {m: [] for m in fixed_methods}
        for s in seeds:
            for method, value in per_input(by_seed[s], s, fixed_baselines).items():
                fixed[method].append(value)
        fixed_rows.append([name, *[c for m in fixed_methods
                                   for c in (cell(across[m]), cell(fixed[m]))]])
        if name.startswith("realistic"):
            for m in fixed_methods:
                realistic[m][0].append(float(np.mean(across[m])))
                realistic[m][1].append(float(np.mean(fixed[m])))
        print(_common.text_table(fixed_header, fixed_rows[-1:]), flush=True)
        if not args.quick:
            from phasekit.energy.fit import fit_energy

            whole = by_seed[seeds[0]]
            floor = [fit_energy(whole, model=m, baselines=(), compare=False).mpe_train
                     for m in ("pt", "extended")]
            floors.append([name, *(f"{v:.1f}" for v in floor)])

    from phasekit.energy.fit import learning_curve
    from phasekit.synth.campaigns import realistic_campaign

    sizes = [10, 20] if args.quick else [10, 20, 40, 80, 160, 320]
    curve_seeds = [0] if args.quick else [0, 1, 2]
    from phasekit.energy.fit import configurations

    curve_configs = configurations(realistic_campaign("mixed", seed=0).campaign)
    curve = learning_curve(curve_configs, sizes, models=("extended", "pt"),
                           baselines=("svr",), seeds=curve_seeds)
    table = curve.groupby(["size", "method"]).mpe_holdout.mean().unstack()
    cost = curve.groupby("size").train_energy_j.mean()
    curve_rows = [[size, *(f"{table.loc[size, m]:.1f}" for m in ("extended", "pt", "svr")),
                   f"{cost[size] / cost[sizes[0]]:.1f}x"] for size in sizes]

    assert timing is not None
    t_seed, t_ext, t_all = timing
    time_rows = [["pt", "10", _common.seconds(t_seed), "meets" if t_seed <= 1 else "**misses**"],
                 ["extended", "10", _common.seconds(t_ext), "meets" if t_ext <= 1 else
                  "**misses**"],
                 ["extended", "935", _common.seconds(t_all), "meets" if t_all <= 1 else
                  "**misses**"]]
    header = ["campaign", "training set", *[f"{m} MPE %" for m in methods]]
    print()
    print(_common.text_table(header, rows))
    print()
    print(_common.text_table(fixed_header, fixed_rows))
    print()
    print(_common.text_table(["model", "configs", "fit time", "<= 1 s"], time_rows))
    print()
    curve_header = ["training configs", "extended", "pt", "SVR", "training energy"]
    print(_common.text_table(curve_header, curve_rows))
    seed_note = ("mean (min-max) over " + str(len(seeds)) + " campaigns (seeds " +
                 ", ".join(map(str, seeds)) + ")") if len(seeds) > 1 else "seed 0"
    md = [
        "## Energy-model fitting (`benchmarks/energy_fit.py`)", "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
        f"; total {_common.seconds(bench.elapsed())}.",
        "- Campaigns on the thesis's grid (935 configurations); every method trained on the "
        f"same 10 configurations and scored on the 925 others; holdout MPE in %, {seed_note}. "
        "Training sets: `random` (the thesis; drawn per seed), `maximin` (space filling) and "
        "`doptimal` (locally D-optimal for the extended model), both balanced over the 5 "
        "inputs. Baselines learn log(E) from standardized (f, log2 p, N), hyper-parameters by "
        "cross-validated grid search (`phasekit.energy.fit`).",
        "- `pt` is the thesis's model (eqs. 4.14-4.22); `extended` adds a "
        "frequency-insensitive share, a contention term, an input-dependent serial share and "
        "per-input deviations (`phasekit.energy.models`). The realistic generator is our "
        "construction (memory share with bandwidth saturation and contention, NUMA, socket "
        "power step, minimum voltage, input reading, irregular inputs); the extended model "
        "was designed knowing those effects, so its margin here is an upper bound of what "
        "to expect on real campaigns, which remain to be measured.", "",
        _common.markdown_table(header, rows, "ll" + "r" * len(methods)), "",
    ]
    summary = "; ".join(
        f"{m} {np.mean(realistic[m][0]):.1f} % across inputs, {np.mean(realistic[m][1]):.1f} % "
        "with the input fixed" for m in fixed_methods if realistic[m][0])
    md += [
        "With the input fixed (on real campaigns the thesis's model "
        "misses by about 18 % from 10 random configurations across inputs, about 11 % when the "
        "input is fixed): for each campaign and each input N separately, 10 configurations of "
        "that input drawn at random train the model (`fit_energy` on that input's 187 "
        "configurations; input k drawn with seed 10 x seed + k) and the other 177 of that "
        "input score it; the cell is the mean holdout MPE % over the 5 inputs, then "
        f"{'mean (min-max) over the seeds' if len(seeds) > 1 else 'seed 0'}; `across inputs` "
        "repeats the `random` row above (10 configurations from all 935). With one input the "
        "input law (d2, per-input deviations) is not fitted; it only has to interpolate over "
        "frequency and cores. Mean over the realistic campaigns: " + summary + ".", "",
        _common.markdown_table(fixed_header, fixed_rows), ""]
    if floors:
        md += ["Fitted on all 935 configurations (the model's floor on seed 0's campaign, MPE %):",
               "", _common.markdown_table(["campaign", "pt", "extended"], floors), ""]
    md += ["Fit time (8 starts, median of 5 fits on 10 configurations; once on all 935):", "",
           _common.markdown_table(["model", "configs", "fit time", "<= 1 s"], time_rows), "",
           f"Learning curve (realistic `mixed`, random training sets, mean holdout MPE % over "
           f"{len(curve_seeds)} seed(s); training energy: energy spent measuring the training "
           "configurations, relative to 10):", "",
           _common.markdown_table(curve_header, curve_rows)]
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
