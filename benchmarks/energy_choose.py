"""How good and how sure the choices of `energy choose` are on the 22 real PaScal campaigns,
against Gaussian-process Bayesian optimization with the same start and budget.

Every campaign measured every configuration of its grid once, so a choice can be scored:
its *regret* is the measured energy of the chosen configuration / the lowest measured energy
of its input - 1, and its *denoised regret* the same on the denoised energies (each
configuration's median over its neighbouring frequency and core-count steps, or its
frequency steps at the same core count where the campaign's energy is rough across core
counts, :func:`phasekit.energy.noise.smooth_across_cores`,
:func:`phasekit.energy.noise.denoised_energy`), which one lucky reading does not set. Means
are over the 5 inputs of a campaign, then over the campaigns.

Scenarios, each as a user would run it:

- the loop: the 10 configurations of the D-optimal design (``energy fit --train 10``), then
  rounds of ``energy suggest -k 5`` over the campaign's full grid, each suggestion "measured"
  by reading the campaign; after 0, 5, 10 and 20 more runs ``energy choose`` on the file of
  what was measured so far (``fit_then_choose`` of those rows), scored against the whole
  campaign. ``+20 random``: 20 random configurations instead of suggested ones.
- every reading: the model fitted on the 10 D-optimal configurations, then ``energy choose
  --fit`` on the whole campaign (every reading is the user's).
- whole file: ``energy choose`` on the whole campaign with no saved fit, the first command a
  user with a finished campaign runs (the model fitted on every reading).
- Bayesian optimization (``_bo.py``): a Gaussian process on (frequency, log cores, log input)
  with expected improvement per input, batches of 5 (kriging believer), from the same 10
  configurations, 5, 10 and 20 more runs; it recommends per input whichever of its two
  rules (the lowest reading, the posterior-mean minimum) scores better on the campaign, a
  choice generous to it.
- baselines (measured): the maximum frequency at all cores, and at the best core count.

Calibration of "sure": the loop is run from three starts (the D-optimal design and two
random draws of 10) and every reading from the same three fits, so that each row of the
calibration table counts 330 choices (22 campaigns x 5 inputs x 3 starts). Of the choices
called sure, the share within 5 % denoised regret; of those that lose more than 10 %
denoised, the share called not sure.

Where the minimum lies in frequency: the share of choices (the loop after 10 more runs) at
the grid's maximum frequency against the share of denoised minima there, and the mean
difference of their frequencies.

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
PER_ROUND = 5
BUDGETS = (0, 5, 10, 20)
BO_BUDGETS = (5, 10, 20)
POWERS_OF_TWO = (1, 2, 4, 8, 16, 32)
STARTS = (("doptimal", 0), ("random", 0), ("random", 1))
LOSS, LOST = 5.0, 10.0


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


class Campaign:
    """One campaign with its denoised energies and a lookup from configuration to row."""

    def __init__(self, path: Path) -> None:
        from phasekit.energy.noise import denoised_energy, reading_noise, smooth_across_cores

        self.name = path.stem.removeprefix("completo_")
        self.configs = load(path)
        self.grid = grid(self.configs)
        self.energy = self.configs["energy_j"].to_numpy(float)
        self.across_cores = smooth_across_cores(self.configs)
        self.denoised = denoised_energy(self.configs, across_cores=self.across_cores)
        self.frequency = self.configs["frequency_ghz"].to_numpy(float)
        self.inputs = self.configs["input"].to_numpy(float)
        noise = reading_noise(self.configs)
        self.threshold = noise.threshold()
        #: the median reading in meter steps (inf where the readings show no step)
        self.steps_per_reading = (float(np.median(self.energy)) / noise.step_j
                                  if noise.step_j else float("inf"))
        self.grid_f = np.searchsorted(np.unique(self.frequency), self.frequency)
        cores = self.configs["cores"].to_numpy(float)
        self.grid_p = np.searchsorted(np.unique(cores), cores)
        self.row = {key: i for i, key in enumerate(zip(
            self.configs["frequency_ghz"].round(9), self.configs["cores"].astype(int),
            self.configs["input"].round(9), strict=True))}

    def index(self, frequency: float, cores: int, n: float) -> int:
        return self.row[(round(frequency, 9), int(cores), round(n, 9))]

    def score(self, row: int) -> tuple[float, float]:
        """(regret, denoised regret) in percent of the configuration at ``row``."""
        same = np.isclose(self.inputs, self.inputs[row])
        return (100 * (self.energy[row] / self.energy[same].min() - 1),
                100 * (self.denoised[row] / self.denoised[same].min() - 1))

    def below_maximum(self) -> list[bool]:
        """Per input whose denoised minimum lies below the maximum frequency: whether the
        maximum frequency at the same core count is worse beyond the noise."""
        out = []
        fmax = self.frequency.max()
        cores = self.configs["cores"].to_numpy()
        for n in np.unique(self.inputs):
            same = np.flatnonzero(np.isclose(self.inputs, n))
            best = same[np.argmin(self.denoised[same])]
            if self.frequency[best] < fmax:
                top = same[(cores[same] == cores[best]) & np.isclose(self.frequency[same], fmax)]
                out.append(bool(top.size and self.denoised[top[0]]
                                > (1 + self.threshold) * self.denoised[best]))
        return out

    def steps(self, a: int, b: int) -> int:
        """Grid steps between rows ``a`` and ``b`` (the larger of frequency and core steps)."""
        return int(max(abs(self.grid_f[a] - self.grid_f[b]), abs(self.grid_p[a] - self.grid_p[b])))

    def best_row(self, n: float) -> int:
        same = np.flatnonzero(np.isclose(self.inputs, n))
        return int(same[np.argmin(self.denoised[same])])

    def best_frequency(self, n: float) -> float:
        same = np.flatnonzero(np.isclose(self.inputs, n))
        return float(self.frequency[same[np.argmin(self.denoised[same])]])


def judged(campaign: Campaign, result, rows) -> list[dict]:  # type: ignore[no-untyped-def]
    """Each choice of ``result`` scored: regrets, sure, the chosen and the best frequency,
    and whether a configuration among the measured ``rows`` of its input is better beyond
    the noise (denoised, by more than the campaign's noise threshold)."""
    out = []
    for choice in result.choices:
        row = campaign.index(choice.best.frequency_ghz, choice.best.cores, choice.input)
        raw, denoised = campaign.score(row)
        mine = [r for r in rows if np.isclose(campaign.inputs[r], choice.input)]
        beaten = bool(mine) and bool(campaign.denoised[row] > (1 + campaign.threshold)
                                     * campaign.denoised[mine].min())
        u = choice.uncertainty
        best = campaign.best_row(choice.input)
        out.append({"regret": raw, "denoised": denoised,
                    "best_measured": min(campaign.score(r)[1] for r in mine) if mine else np.nan,
                    "near": bool(mine) and min(campaign.steps(r, best) for r in mine) <= 1,
                    "sure": None if u is None else u.sure,
                    "chance": np.nan if u is None else u.loss_probability,
                    "f": choice.best.frequency_ghz,
                    "f_best": campaign.best_frequency(choice.input), "beaten": beaten})
    return out


def choose_on(campaign: Campaign, rows: list[int], seed: int):  # type: ignore[no-untyped-def]
    """``energy choose`` on the file of the measured ``rows``, over the full grid."""
    from phasekit.energy.workflow import fit_then_choose

    return fit_then_choose(campaign.configs.iloc[rows], frequencies=campaign.grid[
        "frequencies_ghz"], cores=campaign.grid["cores"], seed=seed).result


def loop(campaign: Campaign, start: list[int], seed: int) -> dict[str, list[dict]]:
    """The suggest loop from ``start``: the judged choices after each budget, and after as
    many random runs as the largest budget."""
    from phasekit.energy.suggest import suggest

    chosen = list(start)
    out = {}
    for budget in BUDGETS:
        while len(chosen) < len(start) + budget:
            found = suggest(campaign.configs.iloc[chosen], k=PER_ROUND, seed=seed,
                            **campaign.grid)
            chosen += [campaign.index(s.frequency_ghz, s.cores, s.input)
                       for s in found.suggestions]
        out[f"+{budget} suggested"] = judged(campaign, choose_on(campaign, chosen, seed),
                                             chosen)
    rest = np.setdiff1d(np.arange(len(campaign.configs)), start)
    extra = list(np.random.default_rng(1000 + seed).choice(rest, max(BUDGETS), replace=False))
    picked = list(start) + extra
    out[f"+{max(BUDGETS)} random"] = judged(campaign, choose_on(campaign, picked, seed), picked)
    return out


def every_reading(campaign: Campaign, design: str, seed: int) -> list[dict]:
    """The model fitted on 10 configurations, then `energy choose --fit` on every reading."""
    from phasekit.energy.fit import fit_energy
    from phasekit.energy.workflow import fit_then_choose

    fit = fit_energy(campaign.configs, n_train=10, design=design, seed=seed, compare=False)
    return judged(campaign, fit_then_choose(campaign.configs, fit=fit, seed=seed).result,
                  list(range(len(campaign.configs))))


def whole_file(campaign: Campaign, seed: int) -> list[dict]:
    """`energy choose` on the whole campaign with no saved fit: fitted on every reading."""
    from phasekit.energy.workflow import fit_then_choose

    return judged(campaign, fit_then_choose(campaign.configs, seed=seed).result,
                  list(range(len(campaign.configs))))


def bayesian(campaign: Campaign, start: list[int], seed: int) -> dict[str, tuple[float, float]]:
    """BO's mean (regret, denoised regret) after each budget, the better of its two
    recommendation rules (by mean denoised regret)."""
    import _bo

    measured = _bo.bo_run(campaign.configs, np.asarray(start), max(BO_BUDGETS), seed=seed)
    out = {}
    for budget in BO_BUDGETS:
        seen = measured[:len(start) + budget]
        scores = []
        for rule in _bo.RULES:
            picks = _bo.bo_choice(campaign.configs, seen, recommend=rule)
            pairs = [campaign.score(row) for row in picks.values()]
            scores.append((float(np.mean([p[0] for p in pairs])),
                           float(np.mean([p[1] for p in pairs]))))
        out[f"BO +{budget}"] = min(scores, key=lambda pair: pair[1])
    return out


def baselines(campaign: Campaign) -> dict[str, tuple[float, float]]:
    """(regret, denoised regret) of the maximum frequency at all cores and at the best
    core count (the best by its reading)."""
    configs = campaign.configs
    fmax, pmax = configs["frequency_ghz"].max(), configs["cores"].max()
    out: dict[str, list[tuple[float, float]]] = {"max f, all cores": [],
                                                 "max f, best cores": []}
    for n in np.unique(campaign.inputs):
        frequency = np.flatnonzero(np.isclose(campaign.inputs, n)
                                & np.isclose(campaign.frequency, fmax))
        cores = configs["cores"].to_numpy()[frequency]
        out["max f, all cores"].append(campaign.score(int(frequency[cores == pmax][0])))
        out["max f, best cores"].append(campaign.score(int(frequency[np.argmin(
            campaign.energy[frequency])])))
    return {k: (float(np.mean([p[0] for p in v])), float(np.mean([p[1] for p in v])))
            for k, v in out.items()}


def mean_pair(choices: list[dict]) -> tuple[float, float]:
    return (float(np.mean([c["regret"] for c in choices])),
            float(np.mean([c["denoised"] for c in choices])))


def cell(pair: tuple[float, float]) -> str:
    """``denoised (raw)``."""
    return f"{pair[1]:.1f} ({pair[0]:.1f})"


def calibration_row(name: str, choices: list[dict]) -> list[str]:
    sure = [c for c in choices if c["sure"]]
    lost = [c for c in choices if c["denoised"] > LOST]
    within = (f"{100 * np.mean([c['denoised'] <= LOSS for c in sure]):.0f} %" if sure
              else "-")
    unsure = (f"{100 * np.mean([not c['sure'] for c in lost]):.0f} %" if lost else "-")
    return [name, str(len(choices)), str(len(sure)), within, str(len(lost)), unsure,
            f"{np.mean([c['denoised'] for c in sure]):.1f}" if sure else "-",
            f"{np.mean([c['denoised'] for c in choices if not c['sure']]):.1f}"
            if len(sure) < len(choices) else "-", str(sum(c["beaten"] for c in choices))]


#: Bins of the stated chance of losing more than 5 % (the reliability table).
CHANCE_BINS = ((0.0, 0.10), (0.10, 0.25), (0.25, 0.50), (0.50, 1.0))


def reliability(choices: list[dict]) -> list[list[str]]:
    """Per bin of the stated chance of losing more than 5 %: the choices, the mean stated
    chance and the share that did lose more than 5 % (denoised)."""
    out = []
    for low, high in CHANCE_BINS:
        inside = [c for c in choices if (low < c["chance"] <= high)
                  or (low == 0.0 and c["chance"] == 0.0)]
        if not inside:
            continue
        out.append([f"{100 * low:.0f}-{100 * high:.0f} %", str(len(inside)),
                    f"{100 * np.mean([c['chance'] for c in inside]):.0f} %",
                    f"{100 * np.mean([c['denoised'] > LOSS for c in inside]):.0f} %"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="two campaigns, the D-optimal start only, "
                                               "no Bayesian optimization (smoke test)")
    parser.add_argument("--no-bo", action="store_true",
                        help="leave out the Bayesian-optimization baseline (minutes)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: the pascal_dev campaigns are not in {DATA} (they are read from "
              "the real measurements beside the checkout, never copied into it)")
        return 0
    warnings.simplefilter("ignore")
    from phasekit.energy.fit import choose_training
    from phasekit.energy.noise import COARSE_STEP

    bench = _common.Run()
    paths = sorted(DATA.glob("completo_*.csv"))
    starts = STARTS
    if args.quick:
        paths = [p for p in paths if p.stem in ("completo_canneal_1", "completo_fluid_3")]
        starts = STARTS[:1]
    loop_names = [f"+{b} suggested" for b in BUDGETS] + [f"+{max(BUDGETS)} random"]
    columns = ["10 D-optimal" if n == "+0 suggested" else n for n in loop_names]
    bo_names = [] if args.quick or args.no_bo else [f"BO +{b}" for b in BO_BUDGETS]
    header = ["campaign", *columns, *bo_names, "every reading", "whole file",
              "max f, all cores", "max f, best cores"]
    pooled: dict[str, list[dict]] = {name: [] for name in [*loop_names, "every reading",
                                                           "whole file"]}
    rows, table, coarse, per_reading, rough = [], [], [], [], []
    frequency: list[dict] = []
    below: list[bool] = []
    minima = 0
    for path in paths:
        campaign = Campaign(path)
        if not campaign.across_cores:
            rough.append(campaign.name)
        below += campaign.below_maximum()
        minima += len(np.unique(campaign.inputs))
        values: dict[str, tuple[float, float]] = {}
        for design, seed in starts:
            start = [int(i) for i in choose_training(campaign.configs, 10, design=design,
                                                     seed=seed)]
            found = loop(campaign, start, seed)
            found["every reading"] = every_reading(campaign, design, seed)
            found["whole file"] = whole_file(campaign, seed)
            for name, choices in found.items():
                pooled[name] += choices
            if design == "doptimal":
                values.update({name: mean_pair(choices) for name, choices in found.items()})
                frequency += found["+10 suggested"]
                if bo_names:
                    values.update(bayesian(campaign, start, seed))
        values.update(baselines(campaign))
        ordered = [values[n] for n in [*loop_names, *bo_names, "every reading",
                                       "whole file", "max f, all cores",
                                       "max f, best cores"]]
        table.append(ordered)
        coarse.append(campaign.steps_per_reading <= 1 / COARSE_STEP)
        per_reading.append(campaign.steps_per_reading)
        rows.append([campaign.name + (" (2^k cores)" if "fluid" in campaign.name else ""),
                     *[cell(v) for v in ordered]])
        print(_common.text_table(header, rows[-1:]), flush=True)
    means = [(float(np.mean([t[i][0] for t in table])), float(np.mean([t[i][1] for t in table])))
             for i in range(len(header) - 1)]
    rows.append(["**mean over campaigns**", *[cell(m) for m in means]])
    calibration_header = ["scenario", "choices", "called sure", "sure within 5 %",
                          "losing > 10 %", "of those, not sure", "mean of sure",
                          "mean of not sure", "worse than a measured one"]
    calibration = [calibration_row(name if name != "+0 suggested" else "10 measured", choices)
                   for name, choices in pooled.items()]
    everything = [c for v in pooled.values() for c in v]
    calibration.append(calibration_row("**all**", everything))
    reliability_header = ["stated chance of losing > 5 %", "choices", "mean stated",
                          "lost > 5 %"]
    reliable = reliability(everything)
    print()
    print(_common.text_table(header, rows))
    print()
    print(_common.text_table(calibration_header, calibration))
    print()
    print(_common.text_table(reliability_header, reliable))
    chosen_f = np.array([c["f"] for c in frequency])
    best_f = np.array([c["f_best"] for c in frequency])
    frequency_line = (
        f"- Where the minimum lies in frequency (the loop after 10 more runs, D-optimal start, "
        f"{len(frequency)} choices): mean chosen frequency - denoised minimum's "
        f"{np.mean(chosen_f - best_f):+.3f} GHz (mean |difference| "
        f"{np.mean(np.abs(chosen_f - best_f)):.3f} GHz); chosen above the denoised minimum's "
        f"frequency {100 * np.mean(chosen_f > best_f + 1e-9):.0f} %, below "
        f"{100 * np.mean(chosen_f < best_f - 1e-9):.0f} %. The denoised minimum lies below "
        f"the maximum frequency in {len(below)} of {minima} inputs; in {sum(below)} of them "
        "the maximum frequency at the same core count is worse beyond the noise (2.83 x the "
        "campaign's reading noise).")
    pooled_10 = pooled["+10 suggested"]
    near = [c for c in pooled_10 if c["near"]]
    far = [c for c in pooled_10 if not c["near"]]
    exploration_line = (
        f"- Where the regret comes from (the loop after 10 more runs, {len(starts)} start(s), "
        f"{len(pooled_10)} choices): the best configuration the loop had measured loses "
        f"{np.mean([c['best_measured'] for c in pooled_10]):.1f} % on average (denoised) "
        f"against {np.mean([c['denoised'] for c in pooled_10]):.1f} % for the choice. "
        f"{len(near)} inputs had a measured configuration within one grid step of the "
        f"denoised best: their choices lost {np.mean([c['denoised'] for c in near]):.1f} %; "
        f"the other {len(far)}, {np.mean([c['denoised'] for c in far]):.1f} % (the best "
        f"measured there {np.mean([c['best_measured'] for c in far]):.1f} %).")
    stepped = np.array(coarse, bool)
    meter_line = ""
    if stepped.any() and not stepped.all():
        def split_mean(i: int) -> str:
            there = [t[i][1] for t, c in zip(table, stepped, strict=True) if c]
            elsewhere = [t[i][1] for t, c in zip(table, stepped, strict=True) if not c]
            return f"{header[1 + i]} {np.mean(there):.1f} ({np.mean(elsewhere):.1f})"

        finest = max(s for s, c in zip(per_reading, coarse, strict=True) if c)
        shown = [i for i, name in enumerate(header[1:])
                 if name in ("10 D-optimal", "+10 suggested", "+20 suggested", "BO +10")]
        meter_line = (
            f"- Where the meter is coarse: in {int(stepped.sum())} of {len(table)} campaigns "
            f"the median reading is at most {1 / COARSE_STEP:g} meter steps (the step found "
            "on the whole campaign, `phasekit.energy.noise.meter_step`; `energy choose` says "
            "so in its noise line): one step is "
            f"{100 / finest:.0f} % or more of a reading, and readings of neighbouring "
            "configurations differ by whole steps. Mean denoised regret there (elsewhere), "
            "D-optimal start: " + ", ".join(split_mean(i) for i in shown) + " %.")
    print(frequency_line)
    print(exploration_line)
    print(meter_line)
    md = [
        "## Choices of `energy choose` on the real PaScal campaigns: regret, calibration of "
        "\"sure\", against Bayesian optimization (`benchmarks/energy_choose.py`)", "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}; total {_common.seconds(bench.elapsed())}.",
        f"- {len(paths)} campaigns of `pascal_dev` (energy only, every configuration measured "
        "once: 5 inputs x 5-11 frequencies x 17 core counts). Cells: mean denoised regret "
        "(mean regret against the single lowest reading), % over the 5 inputs; the last row "
        "is the mean over the campaigns. Denoised: each configuration's median over its "
        "neighbouring frequency and core-count steps, or its frequency steps at the same core "
        "count where energy is rough across core counts (neighbouring core counts differ "
        "beyond the noise): " + (", ".join(rough) or "none") + ".",
        "- `10 D-optimal`, `+N suggested`: the 10 configurations of the D-optimal design, then "
        f"rounds of `energy suggest -k {PER_ROUND}` over the campaign's full grid, then "
        "`energy choose` on the file of what was measured; `+20 random`: 20 random runs "
        "instead. `BO +N`: Gaussian-process Bayesian optimization with expected improvement "
        "(`benchmarks/_bo.py`) from the same 10, N more runs in batches of 5, the better of "
        "its two recommendation rules per campaign. `every reading`: fitted on the 10, "
        "`energy choose --fit` on the whole campaign. `whole file`: `energy choose` on the "
        "whole campaign with no saved fit (the model fitted on every reading; the seed "
        "changes only the uncertainty's refits). `max f, ...`: measured baselines.",
        "- fluid* (fluidanimate needs a power-of-two thread count; the other core counts hold "
        "failed runs of ~0.46 J): only 1, 2, 4, 8, 16, 32 cores are kept.", "",
        _common.markdown_table(header, rows), "",
        "### Calibration of \"sure\"", "",
        "A choice is sure when the chance that it loses more than 5 % against the best, under "
        "the model's out-of-sample error and the readings' noise, is at most 10 %. Each row "
        f"pools the choices of {len(starts)} start(s) (the D-optimal design and random draws "
        "of 10 configurations). `sure within 5 %`: of the choices called sure, the share "
        "within 5 % denoised regret; `of those, not sure`: of the choices losing more than "
        "10 % denoised, the share called not sure; means are denoised regrets, %. `worse than "
        "a measured one`: choices whose denoised energy exceeds that of a configuration the "
        "user had measured (same input) by more than the campaign's noise threshold (2.83 x "
        "its reading noise).", "",
        _common.markdown_table(calibration_header, calibration), "",
        "The stated chance against what happened (all the choices above, binned by the chance "
        "`energy choose` printed):", "",
        _common.markdown_table(reliability_header, reliable), "",
        frequency_line,
        exploration_line,
        *([meter_line] if meter_line else []),
    ]
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
