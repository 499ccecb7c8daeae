"""Regret of `energy choose` on the 22 real PaScal campaigns: measured energy of the
chosen configuration / the lowest measured energy of its input - 1, mean and worst over the
5 inputs, then the mean over the campaigns.

The model (``fit_model``'s default at the time of the run) is fitted on (a) every
configuration and (b) 10 training configurations: the ``doptimal`` design and ``random``
ones (seeds 0-4); from each 10-configuration start, 1 to 4 rounds of
:func:`phasekit.energy.suggest.suggest` each measure 5 more configurations (read from the
campaign, which measured all), against 5 random ones per round. Baselines: "maximum
frequency, all cores" and "the best core count at the maximum frequency" (both measured),
and a smoothed oracle (:func:`smoothed_oracle`: the regret's noise floor).
The campaigns are the real measurements kept beside the checkout (``energy/pascal_dev``; no
license to copy them into it); the script says so and stops when they are absent. The
fluidanimate campaigns (fluid*) hold failed runs at core counts that are not powers of two
(fluidanimate needs a power-of-two thread count; those runs read ~0.46 J, one meter sample):
only the power-of-two core counts are kept, for fitting and for scoring.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

import _common

SECTION = "energy_choose"
DATA = _common.HERE.parent.parent / "shared" / "data" / "energy" / "pascal_dev"
ROUNDS = 4
PER_ROUND = 5
POWERS_OF_TWO = (1, 2, 4, 8, 16, 32)


def load(path: Path):  # type: ignore[no-untyped-def]
    import pandas as pd

    from phasekit.energy.fit import configurations

    configs = configurations(pd.read_csv(path), source=str(path))
    if path.stem.startswith("completo_fluid"):
        configs = configs[configs["cores"].isin(POWERS_OF_TWO)].reset_index(drop=True)
    return configs


def grid(configs):  # type: ignore[no-untyped-def]
    return {"frequencies_ghz": tuple(np.unique(configs["frequency_ghz"])),
            "cores": tuple(int(c) for c in np.unique(configs["cores"]))}


def regrets(model, configs, rows=None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Mean and worst regret (%) over the inputs of the choice of ``model``; with ``rows``
    (the configurations it was fitted on) the choice keeps their measured energies
    (``choose(trusted=...)``, as the CLI does), less the readings the fit flagged."""
    from phasekit.energy.choose import choose

    trusted = None
    if rows is not None:
        trusted = rows.drop(index=rows.index[list(model.suspect)])
    result = choose(model, sorted(configs["input"].unique()), measured=configs,
                    trusted=trusted, **grid(configs))
    return result.mean_regret, result.worst_regret


def baselines(configs) -> dict[str, tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Measured regret of "maximum frequency, all cores" and "best core count at the maximum
    frequency"."""
    out: dict[str, list[float]] = {"max f, all cores": [], "best cores at max f": []}
    fmax, pmax = configs["frequency_ghz"].max(), configs["cores"].max()
    for _, rows in configs.groupby("input"):
        low = rows["energy_j"].min()
        at_max = rows[np.isclose(rows["frequency_ghz"], fmax)]
        out["max f, all cores"].append(
            100 * (at_max[at_max["cores"] == pmax]["energy_j"].iloc[0] / low - 1))
        out["best cores at max f"].append(100 * (at_max["energy_j"].min() / low - 1))
    return {k: (float(np.mean(v)), float(np.max(v))) for k, v in out.items()}


def smoothed_oracle(configs) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Regret of a choice that knows every reading but smooths them: per input, the
    configuration whose reading and its grid neighbours' (one frequency step and one core
    count step either way) have the lowest median. It measures how far below the readings
    of the best region the lowest single reading lies: the noise floor of the regret of any
    choice that does not measure the configuration it picks."""
    out = []
    for _, rows in configs.groupby("input"):
        table = rows.pivot_table(index="frequency_ghz", columns="cores", values="energy_j")
        energy = table.to_numpy(float)
        smoothed = np.full_like(energy, np.inf)
        for i in range(energy.shape[0]):
            for j in range(energy.shape[1]):
                smoothed[i, j] = np.nanmedian(energy[max(0, i - 1):i + 2, max(0, j - 1):j + 2])
        i, j = np.unravel_index(np.nanargmin(smoothed), smoothed.shape)
        out.append(100 * (energy[i, j] / np.nanmin(energy) - 1))
    return float(np.mean(out)), float(np.max(out))


def loop(configs, train: np.ndarray, seed: int, by: str, rounds: int
         ) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Mean regret after 1..rounds rounds of PER_ROUND new measurements (suggested or
    random): of the model's choice, and of the choice that keeps the measured energies."""
    from phasekit.energy.suggest import suggest

    index = {key: i for i, key in enumerate(zip(configs["frequency_ghz"].round(9),
                                                configs["cores"].astype(int),
                                                configs["input"].round(9), strict=True))}
    chosen = list(train)
    rng = np.random.default_rng(1000 + seed)
    out = []
    for _ in range(rounds):
        if by == "suggest":
            result = suggest(configs.iloc[chosen], k=PER_ROUND, seed=seed, **grid(configs))
            chosen += [index[(round(s.frequency_ghz, 9), s.cores, round(s.input, 9))]
                       for s in result.suggestions]
        else:
            rest = np.setdiff1d(np.arange(len(configs)), chosen)
            chosen += list(rng.choice(rest, PER_ROUND, replace=False))
        rows = configs.iloc[chosen]
        fitted = fit(rows, seed)
        out.append((regrets(fitted, configs)[0], regrets(fitted, configs, rows)[0]))
    return out


def fit(rows, seed: int):  # type: ignore[no-untyped-def]
    from phasekit.energy.fit import fit_model

    with_time = bool(np.isfinite(rows["time_s"]).all())
    return fit_model(rows["frequency_ghz"], rows["cores"], rows["input"], rows["energy_j"],
                     rows["time_s"] if with_time else None, seed=seed)


def cell(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.1f} / {pair[1]:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="two campaigns, one random seed, one round "
                                               "(smoke test)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: the pascal_dev campaigns are not in {DATA} (they are read from "
              "the real measurements beside the checkout, never copied into it)")
        return 0
    warnings.simplefilter("ignore")
    from phasekit.energy.fit import choose_training

    bench = _common.Run()
    paths = sorted(DATA.glob("completo_*.csv"))
    if args.quick:
        paths = [p for p in paths if p.stem in ("completo_canneal_1", "completo_fluid_3")]
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    rounds = 1 if args.quick else ROUNDS
    header = ["campaign", "all configs", "doptimal 10", "random 10",
              *[f"+{PER_ROUND * r} suggested" for r in range(1, rounds + 1)],
              f"+{PER_ROUND * rounds} random", "doptimal 10, measured kept",
              *[f"+{PER_ROUND * r} suggested, measured kept" for r in range(1, rounds + 1)],
              f"+{PER_ROUND * rounds} random, measured kept",
              "max f, all cores", "best cores at max f", "smoothed oracle"]
    rows, table = [], []
    for path in paths:
        configs = load(path)
        everything = regrets(fit(configs, 0), configs)
        starts = [("doptimal", 0)] + [("random", s) for s in seeds]
        ten: dict[str, list[tuple[float, float]]] = {"doptimal": [], "random": []}
        ten_kept: list[tuple[float, float]] = []
        suggested: list[list[tuple[float, float]]] = []
        random_more: list[tuple[float, float]] = []
        for design, seed in starts:
            train = choose_training(configs, 10, design=design, seed=seed)
            fitted = fit(configs.iloc[train], seed)
            ten[design].append(regrets(fitted, configs))
            if design == "doptimal":
                ten_kept.append(regrets(fitted, configs, configs.iloc[train]))
            suggested.append(loop(configs, train, seed, "suggest", rounds))
            random_more.append(loop(configs, train, seed, "random", rounds)[-1])
        base = baselines(configs)
        random10 = (float(np.mean([r[0] for r in ten["random"]])),
                    float(np.mean([r[1] for r in ten["random"]])))
        after = np.mean(suggested, axis=0)  # (rounds, 2): model's choice, measured kept
        more = np.mean(random_more, axis=0)
        name = path.stem.removeprefix("completo_") + (" (2^k cores)" if "fluid" in path.stem
                                                      else "")
        values = [everything, ten["doptimal"][0], random10, *[(v, np.nan) for v in after[:, 0]],
                  (float(more[0]), np.nan), ten_kept[0],
                  *[(v, np.nan) for v in after[:, 1]], (float(more[1]), np.nan),
                  base["max f, all cores"], base["best cores at max f"],
                  smoothed_oracle(configs)]
        table.append(values)
        rows.append([name, *[cell(v) if np.isfinite(v[1]) else f"{v[0]:.1f}" for v in values]])
        print(_common.text_table(header, rows[-1:]), flush=True)
    means = [(float(np.mean([t[i][0] for t in table])), float(np.mean([t[i][1] for t in table])))
             for i in range(len(header) - 1)]
    rows.append(["**mean over campaigns**",
                 *[cell(m) if np.isfinite(m[1]) else f"{m[0]:.1f}" for m in means]])
    print()
    print(_common.text_table(header, rows))
    md = [
        "## Regret of `energy choose` on the real PaScal campaigns "
        "(`benchmarks/energy_choose.py`)", "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}; total {_common.seconds(bench.elapsed())}.",
        f"- {len(paths)} campaigns of `pascal_dev` (energy only, every "
        "configuration measured: 5 inputs x 5-11 frequencies x 17 core counts). Regret = "
        "measured energy of the chosen configuration / the lowest measured energy of its "
        "input - 1, in %; cells `mean / worst` over the 5 inputs, single numbers are means "
        "over the inputs; the last row is the mean over the campaigns.",
        "- `all configs`: the model (`fit_model`'s default at the time of the run) fitted on "
        "every configuration; `doptimal 10`: on the 10 of the D-optimal design; `random 10`: "
        f"on 10 random ones, mean over seeds {', '.join(map(str, seeds))}. `+N suggested`: "
        f"from each of those {1 + len(seeds)} starts, rounds of `energy suggest` measure "
        f"{PER_ROUND} more configurations each (taken from the campaign), the model is refitted "
        "on all measured so far and chosen again, mean over the starts; `+N random` adds "
        f"{PER_ROUND} random configurations per round instead. `measured kept`: the same fits, "
        "the choice keeping the measured energy of every configuration the model was fitted "
        "on (less the readings it flagged as failed runs), as `phasekit energy choose` does. "
        "`max f, all cores` (what "
        "`energy choose` once picked on black_2) and `best cores at max f` are measured "
        "baselines (the latter needs every core count measured at the maximum frequency). "
        "`smoothed oracle`: knows every reading and picks, per input, the configuration whose "
        "reading and its grid neighbours' (one step of frequency and of core count) have the "
        "lowest median; its regret is how far the lowest single reading lies below the "
        "readings of the best region, a floor for any choice that does not measure what it "
        "picks.",
        "- fluid* (fluidanimate needs a power-of-two thread count; the other core counts hold "
        "failed runs of ~0.46 J): only 1, 2, 4, 8, 16, 32 cores are kept, for fitting and for "
        "scoring.", "",
        _common.markdown_table(header, rows),
    ]
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
