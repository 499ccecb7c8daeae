"""Choosing configurations (Silva 2024, section 4.12): the optimizer against the closed form
f* = (c3 / (2 c1 p))^(1/3) and brute force, limits, the Pareto frontier against a naive
dominance check, the ondemand baseline's savings (eq. 4.24), campaigns without frequency
control, the regret against measured energies and the ensemble's uncertainty, and
the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.helpers import run

from phasekit.campaign import Campaign, Run, write_campaign
from phasekit.energy.choose import (
    ChoiceResult,
    Ensemble,
    choose,
    fit_ensemble,
    grid_correlation,
    loss_chance,
    pareto_front,
)
from phasekit.energy.fit import FittedModel, choose_training, configurations, fit_energy
from phasekit.energy.models import optimal_frequency, pt_energy, pt_time
from phasekit.errors import InputError, UsageError
from phasekit.present import View
from phasekit.synth.campaigns import seed_campaign

SEED_PARAMS = {"c1": 0.3, "c2": 0.5, "c3": 90.0, "d1": 400.0, "d2": 1.2, "w": 0.97}
MODEL = FittedModel(model="pt", params=SEED_PARAMS)
FREQS = np.round(np.arange(1.2, 2.21, 0.1), 2)
CORES = (1, 2, 4, 8, 16, 32)


@pytest.mark.parametrize("p", [1, 4, 16, 32])
def test_continuous_optimum_is_the_closed_form(p: int) -> None:
    closed = float(optimal_frequency(SEED_PARAMS["c1"], SEED_PARAMS["c3"], p))
    low, high = 0.5 * closed, 2.0 * closed
    result = choose(MODEL, [3], frequencies_ghz=np.linspace(low, high, 7), cores=[p])
    assert result.choices[0].continuous_frequency_ghz == pytest.approx(closed, rel=1e-4)


def test_grid_minimum_is_brute_force_and_the_frontier_is_the_non_dominated_set() -> None:
    result = choose(MODEL, [2], frequencies_ghz=FREQS, cores=CORES)
    choice = result.choices[0]
    grid = [(f, p) for f in FREQS for p in CORES]
    energies = [float(pt_energy(f, p, 2, **SEED_PARAMS)) for f, p in grid]
    f_best, p_best = grid[int(np.argmin(energies))]
    assert (choice.best.frequency_ghz, choice.best.cores) == (pytest.approx(f_best), p_best)
    assert choice.best.energy_j == pytest.approx(min(energies))
    times = [float(pt_time(f, p, 2, SEED_PARAMS["d1"], SEED_PARAMS["d2"], SEED_PARAMS["w"]))
             for f, p in grid]
    naive = {grid[i] for i in range(len(grid))
             if not any((times[j] <= times[i] and energies[j] < energies[i])
                        or (times[j] < times[i] and energies[j] <= energies[i])
                        for j in range(len(grid)))}
    front = {(round(c.frequency_ghz, 6), c.cores) for c in choice.pareto}
    assert front == {(round(f, 6), p) for f, p in naive}
    assert [c.time_s for c in choice.pareto] == sorted(c.time_s for c in choice.pareto)
    assert choice.pareto[-1].energy_j == pytest.approx(choice.best.energy_j)


def test_pareto_front_keeps_the_lower_energy_of_equal_times() -> None:
    assert pareto_front(np.array([1.0, 1.0, 2.0, 3.0]),
                        np.array([5.0, 4.0, 4.0, 1.0])).tolist() == [1, 3]


def test_limits_are_respected_and_an_impossible_limit_is_said() -> None:
    free = choose(MODEL, [4], frequencies_ghz=FREQS, cores=CORES).choices[0].best
    for limit, max_cores, min_f in ((0.9 * free.time_s, None, 1.5), (None, 16, None),
                                    (2.0 * free.time_s, 8, 1.3)):
        limited = choose(MODEL, [4], frequencies_ghz=FREQS, cores=CORES, max_time_s=limit,
                         max_cores=max_cores, min_frequency_ghz=min_f).choices[0]
        feasible = [(f, p) for f in FREQS for p in CORES
                    if f >= (min_f or 0) and p <= (max_cores or 99)
                    and pt_time(f, p, 4, 400.0, 1.2, 0.97) <= (limit or np.inf)]
        energies = [float(pt_energy(f, p, 4, **SEED_PARAMS)) for f, p in feasible]
        assert limited.best.energy_j == pytest.approx(min(energies))
        assert limited.best.time_s <= (limit or np.inf) and limited.best.cores <= (max_cores
                                                                                   or 99)
        assert limited.best.frequency_ghz >= (min_f or 0)
        assert limited.feasible == len(feasible)
        assert limited.best.energy_j > free.energy_j
    impossible = choose(MODEL, [4], frequencies_ghz=FREQS, cores=CORES, max_time_s=1.0)
    assert impossible.choices[0].best is None
    assert "no configuration meets the time limit of 1 s" in impossible.choices[0].reason
    with pytest.raises(UsageError, match="limits leave no frequency"):
        choose(MODEL, [4], frequencies_ghz=FREQS, cores=CORES, max_frequency_ghz=1.0)


def test_savings_against_ondemand_worst_random_best_and_measured() -> None:
    result = choose(MODEL, [1], frequencies_ghz=FREQS, cores=CORES)
    choice = result.choices[0]
    at_max = np.array([float(pt_energy(2.2, p, 1, **SEED_PARAMS)) for p in CORES])
    e = choice.best.energy_j
    for policy, baseline in (("worst", at_max.max()), ("random", at_max.mean()),
                             ("best", at_max.min())):
        assert choice.savings_predicted[policy] == pytest.approx(100 * (baseline - e)
                                                                 / baseline)
    assert choice.savings_measured == {}
    # Measured energies 10 % above the model everywhere: measured savings equal predicted.
    measured = pd.DataFrame([{"frequency_ghz": f, "cores": p, "input": 1.0,
                              "energy_j": 1.1 * float(pt_energy(f, p, 1, **SEED_PARAMS)),
                              "time_s": 1.0} for f in FREQS for p in CORES])
    again = choose(MODEL, [1], frequencies_ghz=FREQS, cores=CORES, measured=measured,
                   user_cores=8).choices[0]
    assert again.best.measured_energy_j == pytest.approx(1.1 * e)
    user = float(pt_energy(2.2, 8, 1, **SEED_PARAMS))
    assert again.savings_predicted == {"user": pytest.approx(100 * (user - e) / user)}
    assert again.savings_measured["user"] == pytest.approx(again.savings_predicted["user"])
    with pytest.raises(UsageError, match=r"^user_cores=3: not among the core counts"):
        choose(MODEL, [1], frequencies_ghz=FREQS, cores=CORES, user_cores=3)


def _threads_campaign(noise: float = 0.0) -> Campaign:
    """No frequency (a VM): T = 2 N (0.2 + 0.8 / p), P = 10 + 6 p (W)."""
    rng = np.random.default_rng(0)
    runs = []
    for p in (1, 2, 4):
        for n in (1, 2, 3):
            t = 2.0 * n * (0.2 + 0.8 / p) * (1 + noise * rng.standard_normal())
            runs.append(Run(threads=p, input=str(n), time_s=t, energy_j=(10 + 6 * p) * t))
    return Campaign(runs=tuple(runs), program="app", inputs=("1", "2", "3"))


def test_a_campaign_without_frequency_fits_and_chooses_over_cores() -> None:
    configs = configurations(_threads_campaign())
    assert configs["frequency_ghz"].isna().all()
    fitted = fit_energy(configs, model="pt")
    assert not fitted.frequency_controlled and {"c2"} <= set(fitted.fixed)
    assert "frequency not controlled" in fitted.explanation
    assert fitted.mpe_train < 0.5 and fitted.mpe_time_train < 0.5
    result = choose(fitted.fitted, [1, 2, 3], frequencies_ghz=[], cores=[1, 2, 4],
                    frequency_controlled=False, measured=configs)
    energies = {p: (10 + 6 * p) * (0.2 + 0.8 / p) for p in (1, 2, 4)}
    best_p = min(energies, key=energies.get)
    assert all(c.best.cores == best_p and np.isnan(c.best.frequency_ghz)
               for c in result.choices)
    assert np.isnan(result.choices[0].continuous_frequency_ghz)
    assert result.choices[0].savings_measured["worst"] == pytest.approx(
        100 * (max(energies.values()) - energies[best_p]) / max(energies.values()), rel=1e-3)


@pytest.fixture(scope="module")
def campaign_file(seed_campaign_file: Callable[..., Path]) -> Path:
    return seed_campaign_file(seed=0)


def test_cli_choose_json_matches_the_library(campaign_file: Path, tmp_path: Path) -> None:
    fit_path = tmp_path / "fit.json"
    code, _, err = run("energy", "fit", str(campaign_file), "--model", "pt", "--train", "10",
                       "--no-baselines", "-o", str(fit_path))
    assert code == 0, err
    code, out, err = run("energy", "choose", str(campaign_file), "--fit", str(fit_path),
                         "--input", "2,9", "--max-cores", "16", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "energy_choice" and data["model"] == "pt"
    first, extrapolated = data["choices"]
    assert first["input_label"] == "2" and not first["extrapolated"]
    assert extrapolated["extrapolated"] and extrapolated["best"]["cores"] <= 16
    from phasekit.energy.api import choose as choose_verb

    expected = choose_verb(campaign_file, fit=fit_path, inputs=["2", "9"], max_cores=16)
    assert first["best"] == pytest.approx(expected.choices[0].best.to_dict(), nan_ok=True)
    assert data["noise"]["relative"] == pytest.approx(expected.noise["relative"])
    assert set(first["savings_measured"]) == {"worst", "random", "best"}
    figure = tmp_path / "choice.png"
    code, text, _ = run("energy", "choose", str(campaign_file), "--fit", str(fit_path),
                        "--input", "3", "--plot", str(figure))
    assert code == 0 and "Pareto frontier" in text and "Savings vs ondemand" in text
    assert figure.read_bytes().startswith(b"\x89PNG") and "wrote figure" in text


def test_cli_choose_bad_input(campaign_file: Path, tmp_path: Path) -> None:
    code, _, err = run("energy", "choose", str(campaign_file), "--input", "huge")
    assert code == 2 and "--input huge: not an input of the campaign" in err
    stale = tmp_path / "old.json"
    stale.write_text(json.dumps({"kind": "energy_fit", "version": 99}))
    code, _, err = run("energy", "choose", str(campaign_file), "--fit", str(stale))
    assert code not in (0, 2) and "old.json" in err and "version" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    vm = tmp_path / "vm.json"
    write_campaign(_threads_campaign(), vm)
    code, _, err = run("energy", "choose", str(vm), "--freqs", "1.2,2.0")
    assert code == 2 and "did not control the frequency" in err
    no_energy = tmp_path / "time-only.json"
    write_campaign(Campaign(runs=(Run(threads=1, input="1", time_s=1.0),)), no_energy)
    code, _, err = run("energy", "choose", str(no_energy))
    assert code not in (0, 2) and "measured no energy" in err and "power_estimate_w" in err


# --- regret ------------------------------------------------------------------------------------
def _measured_table(scale: dict[tuple[float, int], float], inputs: tuple[int, ...] = (1, 2)
                    ) -> pd.DataFrame:
    """Energies of the thesis's model times a factor per (f, p) (1 where not given)."""
    return pd.DataFrame([{"frequency_ghz": f, "cores": p, "input": float(n),
                          "energy_j": scale.get((f, p), 1.0)
                          * float(pt_energy(f, p, n, **SEED_PARAMS)), "time_s": 1.0}
                         for n in inputs for f in (1.2, 1.6, 2.2) for p in (1, 4, 16)])


def test_regret_matches_a_naive_computation() -> None:
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    chosen = choose(MODEL, [1, 2], frequencies_ghz=freqs, cores=cores).choices[0].best
    # the measurement makes another configuration half as costly as the model says
    other = min(((f, p) for f in freqs for p in cores
                 if (f, p) != (round(chosen.frequency_ghz, 6), chosen.cores)),
                key=lambda fp: float(pt_energy(*fp, 1, **SEED_PARAMS)))
    measured = _measured_table({other: 0.5})
    for limit in (4, None):
        result = choose(MODEL, [1, 2], frequencies_ghz=freqs, cores=cores, measured=measured,
                        max_cores=limit)
        for choice in result.choices:
            rows = measured[(measured["input"] == choice.input)
                            & (measured["cores"] <= (limit or 99))]
            at = rows[np.isclose(rows["frequency_ghz"], choice.best.frequency_ghz)
                      & (rows["cores"] == choice.best.cores)]["energy_j"].iloc[0]
            naive = 100 * (at / rows["energy_j"].min() - 1)
            assert choice.regret == pytest.approx(naive)
            assert choice.best_measured.measured_energy_j == pytest.approx(
                rows["energy_j"].min())
        assert result.mean_regret == pytest.approx(np.mean([c.regret for c in result.choices]))
        assert result.worst_regret == max(c.regret for c in result.choices)
    assert result.choices[0].regret > 0  # unconstrained: the cheaper one is feasible
    exact = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=_measured_table({}))
    assert exact.choices[0].regret == pytest.approx(0.0, abs=1e-9)
    partial = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores,
                     measured=_measured_table({}).iloc[1:])
    assert np.isnan(partial.choices[0].regret) and partial.choices[0].best_measured is None
    assert np.isnan(partial.mean_regret)


def test_choice_result_round_trips_through_json() -> None:
    configs = configurations(seed_campaign(seed=1, cores=(1, 4, 16, 32),
                                           inputs=(1, 2)).campaign)
    fitted = fit_energy(configs, model="pt", n_train=10, seed=1, design="random", baselines=(),
                        compare=False)
    train = configs.iloc[choose_training(configs, 10, seed=1)]
    ensemble = fit_ensemble(train["frequency_ghz"], train["cores"], train["input"],
                            train["energy_j"], train["time_s"], model="pt",
                            fitted=fitted.fitted)
    result = choose(fitted.fitted, [1, 2], frequencies_ghz=FREQS, cores=(1, 4, 16, 32),
                    measured=configs, ensemble=ensemble)
    data = json.loads(json.dumps(result.to_dict()))
    again = ChoiceResult.from_dict(data)
    assert again.to_dict() == data
    assert again.choices[0].uncertainty == result.choices[0].uncertainty
    assert np.isfinite(again.choices[0].regret) and again.choices[0].uncertainty.members == 10
    with pytest.raises(InputError, match="malformed energy_choice"):
        ChoiceResult.from_dict({**data, "choices": [{"input": 1}]})


# --- uncertainty -------------------------------------------------------------------------------
def _ensemble_widths(noise: float, size: int, seed: int) -> tuple[float, float, float]:
    """Over the grid: the mean jackknife standard error of log energy (the model's
    uncertainty), the mean log width of the 90 % prediction interval (the model's and the
    measurement noise's), and the mean |log error| of the full fit against the truth."""
    from phasekit.synth.campaigns import SEED_PARAMS as TRUTH

    configs = configurations(seed_campaign(noise=noise, seed=seed, cores=(1, 2, 4, 8, 16, 32),
                                           inputs=(1, 3)).campaign)
    train = configs.iloc[choose_training(configs, size, seed=seed)]
    ensemble = fit_ensemble(train["frequency_ghz"], train["cores"], train["input"],
                            train["energy_j"], train["time_s"], model="pt", seed=seed)
    f, p, n = (configs[c].to_numpy(float) for c in ("frequency_ghz", "cores", "input"))
    low, high = ensemble.interval(f, p, n)
    error = np.abs(np.log(ensemble.model.predict_energy(f, p, n) / pt_energy(f, p, n,
                                                                               **TRUTH)))
    return (float(np.mean(ensemble.spread(f, p, n))), float(np.mean(np.log(high / low))),
            float(np.mean(error)))


def test_uncertainty_shrinks_with_more_and_cleaner_data() -> None:
    seeds = range(3)
    few, many, clean = (np.mean([_ensemble_widths(noise, size, s) for s in seeds], axis=0)
                        for noise, size in ((0.04, 10), (0.04, 40), (0.005, 40)))
    assert many[0] < 0.7 * few[0] and clean[0] < 0.3 * many[0]    # the model's uncertainty
    assert clean[1] < 0.3 * many[1]            # the interval: noise dominates, cleaner data
    for spread, _, error in (few, many, clean):  # the standard error is the error's size
        assert 0.3 * spread < error < 3 * spread


def test_interval_covers_held_out_measurements_and_the_ensemble_shape() -> None:
    configs = configurations(seed_campaign(noise=0.02, seed=4, cores=(1, 2, 4, 8, 16, 32),
                                           inputs=(1, 3)).campaign)
    index = choose_training(configs, 20, seed=4)
    train = configs.iloc[index]
    ensemble = fit_ensemble(train["frequency_ghz"], train["cores"], train["input"],
                            train["energy_j"], train["time_s"], model="pt", seed=4)
    assert ensemble.method == "cv+" and ensemble.size == 10
    assert np.bincount(ensemble.group).tolist() == [2] * 10
    rest = configs.drop(configs.index[index])
    low, high = ensemble.interval(rest["frequency_ghz"], rest["cores"], rest["input"])
    inside = np.mean((rest["energy_j"] >= low) & (rest["energy_j"] <= high))
    assert 0.75 <= inside <= 1.0
    narrow_low, narrow_high = ensemble.interval(rest["frequency_ghz"], rest["cores"],
                                                rest["input"], level=0.5)
    assert np.all(narrow_high - narrow_low <= high - low + 1e-12)
    few = fit_ensemble(train["frequency_ghz"][:6], train["cores"][:6], train["input"][:6],
                       train["energy_j"][:6], train["time_s"][:6], model="pt")
    assert few.method == "jackknife+" and few.size == 6
    with pytest.raises(UsageError, match="too few training configurations"):
        fit_ensemble(train["frequency_ghz"][:3], train["cores"][:3], train["input"][:3],
                     train["energy_j"][:3], None, model="pt", fitted=MODEL)


def test_the_refits_figures_are_those_of_a_naive_computation() -> None:
    """The refits' regret and agreement, kept for reference, are those of a naive
    computation; "sure" follows the chance of a loss, not them."""
    flat = FittedModel(model="pt", params={**SEED_PARAMS, "c1": 0.31})
    members = (MODEL, MODEL, flat, MODEL)
    ensemble = Ensemble(model=MODEL, members=members, group=np.arange(4),
                        residuals=np.full(4, 0.01), train=np.zeros((4, 3)))
    result = choose(MODEL, [2], frequencies_ghz=FREQS, cores=CORES, ensemble=ensemble,
                    tolerance=0.5)
    u = result.choices[0].uncertainty
    F, P = (a.ravel() for a in np.meshgrid(FREQS, CORES, indexing="ij"))
    j = int(np.flatnonzero(np.isclose(F, result.choices[0].best.frequency_ghz)
                           & np.equal(P, result.choices[0].best.cores))[0])
    naive = []
    agree = 0
    for m in members:
        e = m.predict_energy(F, P, 2.0)
        naive.append(100 * (e[j] / e.min() - 1))
        agree += int(np.argmin(e) == j)
    assert u.expected_regret == pytest.approx(np.mean(naive))
    assert u.worst_regret == pytest.approx(max(naive))
    assert u.agreement == pytest.approx(agree / 4)
    assert u.sure == (u.loss_probability <= u.risk)


def test_the_chance_of_a_loss_follows_the_normal_law() -> None:
    """Two configurations whose true log energies are their estimates plus independent
    normal errors: the first loses more than 5 % when their difference, normal with mean
    -gap and variance 2 sigma^2, exceeds log 1.05."""
    from statistics import NormalDist

    for gap, sigma in ((0.0, 0.02), (0.03, 0.05), (0.1, 0.05), (-0.02, 0.1)):
        chance, rival = loss_chance(np.array([0.0, gap]), np.full(2, sigma), 0, 5.0,
                                    draws=40000)
        expected = 1 - NormalDist(-gap, np.sqrt(2) * sigma).cdf(np.log(1.05))
        assert chance == pytest.approx(expected, abs=0.01)
        assert rival == (1 if chance > 0 else -1)
    # neighbours one grid step apart: correlated exp(-1/2), the difference's variance shrinks
    F, P = np.array([1.2, 1.6]), np.array([4, 4])
    rho = np.exp(-0.5)
    for gap, sigma in ((0.0, 0.05), (0.03, 0.08)):
        chance, _ = loss_chance(np.array([0.0, gap]), np.full(2, sigma), 0, 5.0, draws=40000,
                                correlation=grid_correlation(F, P))
        expected = 1 - NormalDist(-gap, sigma * np.sqrt(2 * (1 - rho))).cdf(np.log(1.05))
        assert chance == pytest.approx(expected, abs=0.01)


def test_refits_that_agree_do_not_make_a_choice_sure_when_the_model_errs() -> None:
    """Identical refits (agreement 1, expected regret 0) with large out-of-sample residuals:
    the model's error on unseen configurations leaves the choice unsure, and says what to
    measure next; with small residuals it is sure."""
    def sureness(residual: float):  # type: ignore[no-untyped-def]
        same = Ensemble(model=MODEL, members=(MODEL,) * 3, group=np.arange(3),
                        residuals=np.full(3, residual), train=np.zeros((3, 3)))
        return choose(MODEL, [2], frequencies_ghz=FREQS, cores=CORES,
                      ensemble=same).choices[0]

    good = sureness(0.002)
    assert good.uncertainty.sure and good.uncertainty.agreement == 1.0
    assert good.uncertainty.energy_low_j == pytest.approx(good.best.energy_j * np.exp(-0.002))
    bad = sureness(0.3)
    u = bad.uncertainty
    assert u.agreement == 1.0 and u.expected_regret == 0.0
    assert not u.sure and u.loss_probability > 0.5
    assert u.model_error == pytest.approx(1.4826 * 0.3)
    assert u.next_cores in CORES and (u.next_frequency_ghz, u.next_cores) != (
        bad.best.frequency_ghz, bad.best.cores)


@pytest.mark.slow
def test_regret_of_a_real_pascal_campaign_against_a_naive_computation(
        external_data: Callable[[str], Path]) -> None:
    path = external_data("energy/pascal_dev/completo_canneal_3.csv")
    configs = configurations(pd.read_csv(path))
    fitted = fit_energy(configs, baselines=(), compare=False)
    result = choose(fitted.fitted, sorted(configs["input"].unique()),
                    frequencies_ghz=np.unique(configs["frequency_ghz"]),
                    cores=np.unique(configs["cores"]).astype(int), measured=configs)
    for choice in result.choices:
        rows = configs[configs["input"] == choice.input]
        at = rows[np.isclose(rows["frequency_ghz"], choice.best.frequency_ghz)
                  & (rows["cores"] == choice.best.cores)]["energy_j"].iloc[0]
        assert choice.regret == pytest.approx(100 * (at / rows["energy_j"].min() - 1))


# --- CLI ---------------------------------------------------------------------------------------
def test_cli_choose_reports_regret_and_uncertainty(campaign_file: Path) -> None:
    code, out, err = run("energy", "choose", str(campaign_file), "--model", "pt", "--train",
                         "10", "--seed", "2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["regret"]) == {"mean", "worst", "mean_denoised"}
    for choice in data["choices"]:
        u = choice["uncertainty"]
        assert u["method"] == "jackknife+" and u["members"] == 10
        assert u["energy_low_j"] <= choice["best"]["energy_j"] <= u["energy_high_j"]
        assert 0 <= u["agreement"] <= 1 and u["expected_regret"] >= 0
        assert choice["regret"] >= 0
    assert data["regret"]["mean"] == pytest.approx(np.mean([c["regret"]
                                                            for c in data["choices"]]))
    code, text, err = run("energy", "choose", str(campaign_file), "--model", "pt", "--train",
                          "10", "--design", "random", "--seed", "2", "--tolerance", "0")
    assert code == 0, err
    assert "How sure" in text and "regret %" in text and "mean" in text
    assert "not sure" in text and "measure next" in text and "likeliest better" in text
    code, out, err = run("energy", "choose", str(campaign_file), "--model", "pt", "--train",
                         "10", "--no-uncertainty", "--json")
    assert code == 0, err
    assert all(c["uncertainty"] is None for c in json.loads(out)["choices"])
    code, _, err = run("energy", "choose", str(campaign_file), "--tolerance", "-1")
    assert code == 2 and "--tolerance -1" in err and len(err.strip().splitlines()) == 1


def test_cli_fit_baselines_on_request(campaign_file: Path) -> None:
    code, out, err = run("energy", "fit", str(campaign_file), "--model", "pt", "--train",
                         "10", "--json")
    assert code == 0, err
    assert json.loads(out)["baselines"] == {}
    code, out, err = run("energy", "fit", str(campaign_file), "--model", "pt", "--train",
                         "10", "--baselines", "knn,tree", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["baselines"]) == {"knn", "tree"}
    alone = fit_energy(configurations(seed_campaign(seed=0).campaign), model="pt",
                       n_train=10, design="doptimal", baselines=("knn",), compare=False)
    assert data["baselines"]["knn"]["mpe_holdout"] == pytest.approx(
        alone.baselines["knn"]["mpe_holdout"])
    for args, message in ((("--train", "10", "--baselines", "svr,forest"),
                           "unknown baseline(s) forest"),
                          (("--baselines", "knn"), "needs --train N"),
                          (("--train", "10", "--baselines", "knn", "--no-baselines"),
                           "give one of them")):
        code, out, err = run("energy", "fit", str(campaign_file), *args)
        assert code == 2 and message in err and out == ""
        assert len(err.strip().splitlines()) == 1


def test_measured_energies_of_trusted_configurations_stand_in_for_the_model() -> None:
    """A configuration the user measured at half the model's energy is chosen (basis
    "measured", regret 0); one measured above the model's minimum is not."""
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    chosen = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores).choices[0].best
    other = min(((f, p) for f in freqs for p in cores
                 if (f, p) != (round(chosen.frequency_ghz, 6), chosen.cores)),
                key=lambda fp: float(pt_energy(*fp, 1, **SEED_PARAMS)))
    measured = _measured_table({other: 0.5})
    ran = measured[(measured["input"] == 1) & np.isclose(measured["frequency_ghz"], other[0])
                   & (measured["cores"] == other[1])]
    result = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=measured,
                    trusted=ran)
    pick = result.choices[0]
    assert (round(pick.best.frequency_ghz, 6), pick.best.cores) == other
    assert pick.basis == "measured" and pick.regret == pytest.approx(0.0)
    dear = _measured_table({other: 3.0})
    ran_dear = dear[(dear["input"] == 1) & np.isclose(dear["frequency_ghz"], other[0])
                    & (dear["cores"] == other[1])]
    kept = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=dear,
                  trusted=ran_dear).choices[0]
    assert (kept.best.frequency_ghz, kept.best.cores, kept.basis) == (
        chosen.frequency_ghz, chosen.cores, "model")
    assert ChoiceResult.from_dict(json.loads(json.dumps(result.to_dict()))).choices[0].basis \
        == "measured"


def test_sureness_counts_the_readings_a_choice_keeps() -> None:
    """Where every configuration was measured, the choice is the lowest reading and every
    refit agrees (regret 0, sure) however the refits predict; with one reading kept, the
    members' regret is a naive computation over that reading and their predictions."""
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    flat = FittedModel(model="pt", params={**SEED_PARAMS, "c1": 0.31})
    members = (MODEL, flat, flat, MODEL)
    ensemble = Ensemble(model=MODEL, members=members, group=np.arange(4),
                        residuals=np.full(4, 0.01), train=np.zeros((4, 3)))
    everything = _measured_table({})
    everywhere = everything[everything["input"] == 1]
    full = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=everything,
                  trusted=everywhere, ensemble=ensemble, tolerance=0.5).choices[0]
    assert full.basis == "measured" and full.uncertainty.sure
    assert (full.uncertainty.expected_regret, full.uncertainty.agreement) == (0.0, 1.0)
    F, P = (a.ravel() for a in np.meshgrid(freqs, cores, indexing="ij"))
    one = (F[0], P[-1])
    measured = _measured_table({one: 0.8})
    kept = measured[(measured["input"] == 1) & np.isclose(measured["frequency_ghz"], one[0])
                    & (measured["cores"] == one[1])]
    pick = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=measured,
                  trusted=kept, ensemble=ensemble, tolerance=0.5).choices[0]
    j = int(np.flatnonzero(np.isclose(F, pick.best.frequency_ghz)
                           & np.equal(P, pick.best.cores))[0])
    reading = float(kept["energy_j"].iloc[0])
    naive = []
    for m in members:
        e = m.predict_energy(F, P, 1.0)
        e[np.isclose(F, one[0]) & np.equal(P, one[1])] = reading
        naive.append(100 * (e[j] / e.min() - 1))
    assert pick.uncertainty.expected_regret == pytest.approx(np.mean(naive))
    assert pick.uncertainty.worst_regret == pytest.approx(max(naive))


@pytest.mark.slow
def test_cli_choose_keeps_measurements_but_not_failed_runs(tmp_path: Path) -> None:
    """Fitted on every configuration, the choice is a measured configuration within the
    readings' noise of its input's lowest reading, and never a reading the fit flags as a
    failed run (one meter sample)."""
    table = configurations(seed_campaign(seed=1).campaign)[
        ["frequency_ghz", "cores", "input", "energy_j"]]
    failed = table.index[(table["input"] == 2) & (table["cores"] == 8)
                         & np.isclose(table["frequency_ghz"], 1.6)][0]
    table.loc[failed, "energy_j"] = 0.46
    path = tmp_path / "campaign.csv"
    table.to_csv(path, index=False)
    code, out, err = run("energy", "choose", str(path), "--no-uncertainty", "--json")
    assert code == 0, err
    result = json.loads(out)
    threshold = result["noise"]["threshold"]
    for choice in result["choices"]:
        rows = table[(table["input"] == choice["input"]) & (table.index != failed)]
        assert choice["basis"] == "measured"
        assert choice["best"]["measured_energy_j"] > 0.46
        assert choice["best"]["measured_energy_j"] <= (1 + threshold) * rows["energy_j"].min()


def test_failed_readings_are_neither_regret_references_nor_chosen_by_their_time() -> None:
    """A reading the model predicts 3x higher (a failed run) is left out of the regret; a
    trusted configuration is feasible under a time limit by its measured time."""
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    measured = _measured_table({(1.2, 4): 1e-3})
    result = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=measured)
    assert result.failed_readings == 2  # (1.2 GHz, 4 cores) of both inputs
    assert result.choices[0].regret == pytest.approx(0.0, abs=1e-9)
    cheap = min(((f, p) for f in freqs for p in cores),
                key=lambda fp: float(pt_energy(*fp, 1, **SEED_PARAMS)))
    slow = _measured_table({cheap: 0.5})
    slow.loc[:, "time_s"] = [float(pt_time(f, p, n, **{k: SEED_PARAMS[k] for k in
                                                      ("d1", "d2", "w")}))
                             for f, p, n in zip(slow.frequency_ghz, slow.cores, slow.input,
                                                strict=True)]
    row = slow[(slow["input"] == 1) & np.isclose(slow["frequency_ghz"], cheap[0])
               & (slow["cores"] == cheap[1])]
    slow.loc[row.index, "time_s"] = 1e6
    limit = float(slow["time_s"].nsmallest(len(slow) - 1).max())
    pick = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=slow,
                  trusted=slow.loc[row.index], max_time_s=limit).choices[0]
    assert (round(pick.best.frequency_ghz, 6), pick.best.cores) != cheap


def test_a_configuration_that_failed_is_never_chosen() -> None:
    """The model's own minimum, measured as a failed run (PaScal's fluidanimate at a core
    count it cannot run on, the fit's suspect), is not advised: the next best is; where every
    configuration failed, the choice says so."""
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    free = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores).choices[0].best
    best = (round(free.frequency_ghz, 6), free.cores)
    failed = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores,
                    failed_runs=[(*best, 1.0)])
    pick = failed.choices[0]
    assert (round(pick.best.frequency_ghz, 6), pick.best.cores) != best
    assert pick.feasible == len(freqs) * len(cores) - 1 and failed.ruled_out == 1
    assert ChoiceResult.from_dict(failed.to_dict()).ruled_out == 1
    everything = [(f, c, 1.0) for f in freqs for c in cores]
    none = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores,
                  failed_runs=everything).choices[0]
    assert none.best is None and "probable failed run" in none.reason


# --- outputs only on success, options before the fit ---------------------------------------
@pytest.mark.slow
def test_cli_choose_whose_plot_fails_writes_no_result(campaign_file: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise UsageError("the figure cannot be drawn")

    monkeypatch.setattr("phasekit.plot.energy.plot_choice", broken)
    code, _, err = run("energy", "choose", str(campaign_file), "--no-uncertainty",
                       "--plot", str(tmp_path / "p.png"), "-o", str(tmp_path / "c.json"))
    assert code == 2 and "the figure cannot be drawn" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "expected"), [
    (["--input", "large"], "--input large: not an input of the campaign"),
    (["--user-cores", "3"], "--user-cores 3: not among the core counts"),
    (["--max-cores", "0"], "--max-cores 0: expected at least 1"),
    (["--min-freq", "9"], "the limits leave no frequency or no core count"),
    (["--plot", "choice.txt"], "cannot tell the format from the name"),
])
@pytest.mark.parametrize("verb", ["choose", "suggest"])
def test_cli_options_are_checked_before_the_fit(verb: str, args: list[str], expected: str,
                                                campaign_file: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if verb == "suggest" and args[0] == "--user-cores":
        return  # an option of choose only
    if verb == "suggest" and args[0] == "--plot":
        args, expected = ["-o", "."], "is a directory"

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was fitted")

    for fitting in ("phasekit.energy.fit.fit_energy", "phasekit.energy.suggest.fit_model",
                    "phasekit.energy.choose.fit_model"):  # the library checks, then fits
        monkeypatch.setattr(fitting, never)
    monkeypatch.chdir(tmp_path)
    code, out, err = run("energy", verb, str(campaign_file), *args)
    assert code == 2 and out == "" and expected in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_cli_choose_titles_are_whole_lines(campaign_file: Path) -> None:
    code, out, err = run("energy", "choose", str(campaign_file), "--no-uncertainty")
    assert code == 0, err
    assert ("Savings vs ondemand (maximum frequency) at the worst, a random, the best core "
            "count, %: predicted (measured)") in out.splitlines()


def test_savings_the_same_for_every_input_are_one_row_that_says_why() -> None:
    """The thesis's model scales energy with the input by one factor, so its predicted
    savings are the same for every input: one row, with the reason in the title; savings
    that differ keep a row per input."""
    def savings_view(result: ChoiceResult) -> View:
        return next(v for v in result.present().views if v.title.startswith("Savings"))

    alike = savings_view(choose(MODEL, [1, 2, 3], frequencies_ghz=FREQS, cores=CORES))
    assert [row[0] for row in alike.rows] == ["every input"]
    assert "the same for every input" in alike.title
    # Gustafson's term: the serial share shrinks with the input, so the best core count
    # and the savings differ by input
    gustafson = FittedModel(model="extended", params={**SEED_PARAMS, "w": 0.8, "d3": 1.0,
                                                       "k": 0.0, "m": 0.0})
    differ = savings_view(choose(gustafson, [1, 4], frequencies_ghz=FREQS, cores=CORES))
    assert [row[0] for row in differ.rows] == ["1", "4"]
    assert "the same for every input" not in differ.title


# --- a time limit nothing meets: said, with the fastest prediction (docs/energy.md) ---------
def test_an_impossible_time_limit_names_the_fastest_configuration() -> None:
    result = choose(MODEL, [4], frequencies_ghz=FREQS, cores=CORES, max_time_s=1.0,
                    max_cores=16)
    choice = result.choices[0]
    grid = [(f, p) for f in FREQS for p in CORES if p <= 16]
    times = [float(pt_time(f, p, 4, SEED_PARAMS["d1"], SEED_PARAMS["d2"], SEED_PARAMS["w"]))
             for f, p in grid]
    f_fast, p_fast = grid[int(np.argmin(times))]
    assert choice.best is None and choice.fastest is not None
    assert (choice.fastest.frequency_ghz, choice.fastest.cores) == (pytest.approx(f_fast),
                                                                    p_fast)
    assert choice.fastest.time_s == pytest.approx(min(times))
    assert f"fastest predicted: {min(times):.4g} s at {f_fast:g} GHz, {p_fast} cores" in (
        choice.reason)
    assert len(choice.over_limit) == len(grid)  # every configuration, for the figure
    again = ChoiceResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.choices[0].fastest.to_dict() == choice.fastest.to_dict() and again.with_time
    # the figure: every configuration against the limit, the fastest marked
    for drawn in (result, again):
        ax = drawn.plot().axes[0]
        assert "no configuration within 1 s" in ax.get_title()
        limit = next(line for line in ax.get_lines() if line.get_linestyle() == "--")
        assert list(limit.get_xdata()) == [1.0, 1.0]
        marked = next(line for line in ax.get_lines() if line.get_marker() == "D")
        assert marked.get_xdata()[0] == pytest.approx(min(times))


def test_cli_choose_plots_an_impossible_time_limit(campaign_file: Path, tmp_path: Path) -> None:
    """Before: "nothing to plot" (exit 2) and no answer at all; now the answer, the figure."""
    figure, saved = tmp_path / "choice.png", tmp_path / "choice.json"
    code, out, err = run("energy", "choose", str(campaign_file), "--no-uncertainty",
                         "--model", "pt", "--input", "2", "--max-time", "1s", "--plot",
                         str(figure), "-o", str(saved))
    assert code == 0, err
    assert "input 2: no configuration meets the time limit of 1 s (fastest predicted: " in out
    assert figure.read_bytes().startswith(b"\x89PNG") and "wrote figure" in out
    fastest = json.loads(saved.read_text())["choices"][0]["fastest"]
    assert fastest["cores"] == 32 and fastest["time_s"] > 1.0
    assert f"fastest predicted: {fastest['time_s']:.4g} s at" in out


# --- energy only: no time column, no time limit, no frontier in time -------------------------
def test_a_model_of_energy_alone_has_no_time() -> None:
    energy_only = FittedModel(model="pt", params=SEED_PARAMS, with_time=False)
    result = choose(energy_only, [2], frequencies_ghz=FREQS, cores=CORES)
    timed = choose(MODEL, [2], frequencies_ghz=FREQS, cores=CORES)
    best = result.choices[0].best
    assert not result.with_time and result.choices[0].pareto == ()
    assert np.isnan(best.time_s) and np.isnan(best.power_w)
    assert (best.frequency_ghz, best.cores, best.energy_j) == (
        timed.choices[0].best.frequency_ghz, timed.choices[0].best.cores,
        pytest.approx(timed.choices[0].best.energy_j))  # the energies are the model's
    assert "time_s" not in result.summary().columns and "time_s" in timed.summary().columns
    assert ChoiceResult.from_dict(json.loads(json.dumps(result.to_dict()))).with_time is False
    with pytest.raises(UsageError, match=r"max_time_s=60\.0: the model was fitted on energy "
                                         r"alone .*no time to limit"):
        choose(energy_only, [2], frequencies_ghz=FREQS, cores=CORES, max_time_s=60.0)


@pytest.mark.parametrize("value", [30.0, None])
def test_a_limit_is_said_as_typed_whatever_comes_before_its_name(value: float | None) -> None:
    """The command line says a limit's error with the value as typed when the library's
    error names a value (its ``value``), even when its message starts with something else
    (a file's name)."""
    from phasekit.cli.energy import _as_typed

    named = (UsageError("too short", parameter="max_time_s", value=value) if value is not None
             else UsageError("too short", parameter="max_time_s"))
    named.args = (f"runs.csv: {named}",)
    with pytest.raises(UsageError) as info, _as_typed(max_time_s=("--max-time", "30s")):
        raise named
    expected = "--max-time 30s: too short" if value is not None else "--max-time: too short"
    assert info.value.command_line() == expected


def test_a_choice_is_never_worse_than_what_was_measured(campaign_file: Path,
                                                        tmp_path: Path) -> None:
    """A model fitted on 10 configurations, then a choice over the whole measured campaign:
    no choice's denoised energy is worse, beyond the campaign's noise, than the lowest
    denoised energy of its input; where the model's pick elsewhere is not lower beyond the
    noise, a measured configuration stands and says why."""
    from phasekit.campaign import read_campaign
    from phasekit.energy.api import choose as choose_verb
    from phasekit.energy.fit import configurations
    from phasekit.energy.noise import denoised_energy, reading_noise

    fit_path = tmp_path / "fit.json"
    code, _, err = run("energy", "fit", str(campaign_file), "--model", "pt", "--train", "10",
                       "--no-baselines", "-o", str(fit_path))
    assert code == 0, err
    configs = configurations(read_campaign(campaign_file)).reset_index(drop=True)
    smooth = denoised_energy(configs)
    threshold = reading_noise(configs).threshold()
    result = choose_verb(campaign_file, fit=fit_path)
    assert result.noise is not None and result.noise["threshold"] == pytest.approx(threshold)
    for choice in result.choices:
        rows = configs["input"].to_numpy(float) == choice.input
        at = rows & np.isclose(configs["frequency_ghz"], choice.best.frequency_ghz) \
            & (configs["cores"] == choice.best.cores)
        assert smooth[at][0] <= (1 + threshold) * smooth[rows].min() + 1e-9
        if choice.why:
            assert choice.basis == "measured" and "not lower beyond the noise" in choice.why
            # the line quotes the reading the table shows, then the value it counted as
            reading = float(choice.why.split("measured ", 1)[1].split(" J", 1)[0]
                            .replace(",", ""))
            assert reading == pytest.approx(choice.best.measured_energy_j, rel=5e-4)
            if "counted as" in choice.why:
                counted = float(choice.why.split("counted as ", 1)[1].split(" J", 1)[0]
                                .replace(",", ""))
                assert counted > reading
    assert any("counted as" in c.why for c in result.choices)


def test_a_lower_reading_not_taken_where_the_noise_is_unknown_says_why() -> None:
    """Every configuration measured at the model's energy but one, read 20 % below the
    model's minimum among neighbours that read higher: with the reading noise unknown the
    smoothed estimate keeps the model's choice, and ``why`` says that the lower reading was
    seen, its estimate, and to measure it again; with the noise known, no such line."""
    freqs, cores = (1.2, 1.6, 2.2), (1, 4, 16)
    chosen = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores).choices[0].best
    low = (1.6, 16)
    assert (chosen.frequency_ghz, chosen.cores) != low
    table = _measured_table({low: 0.8 * chosen.energy_j
                             / float(pt_energy(*low, 1, **SEED_PARAMS))}, inputs=(1,))
    pick = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=table,
                  trusted=table).choices[0]
    assert (pick.best.frequency_ghz, pick.best.cores) == (chosen.frequency_ghz, chosen.cores)
    reading = 0.8 * chosen.energy_j
    assert pick.why.startswith(f"1.6 GHz, 16 cores read {reading:.4g} J, below this choice's "
                               "estimate (")
    estimate = float(pick.why.split("estimate (", 1)[1].split(" J", 1)[0])
    elsewhere = float(pick.why.split("estimated at ", 1)[1].split(" J", 1)[0])
    assert reading < estimate < elsewhere
    assert "reading noise unknown" in pick.why and pick.why.endswith("measure it again to tell")
    known = choose(MODEL, [1], frequencies_ghz=freqs, cores=cores, measured=table,
                   trusted=table, reading_error=0.05).choices[0]
    assert known.why == ""


def test_the_smoothed_estimate_against_a_naive_computation() -> None:
    """The prediction times exp of a kernel-weighted mean of the readings' log residuals,
    with a prior weight on 0: computed here point by point, and its limits."""
    from phasekit.energy.choose import smoothed_estimate

    F, P = (a.ravel() for a in np.meshgrid([1.2, 1.6, 2.0, 2.4], [1, 2, 4, 8], indexing="ij"))
    predicted = 10.0 / P + F
    readings = np.full(F.size, np.nan)
    readings[[0, 5, 6]] = predicted[[0, 5, 6]] * np.array([0.8, 1.1, 1.3])
    fi = np.searchsorted(np.unique(F), F)
    pi = np.searchsorted(np.unique(P), P)
    naive = []
    for i in range(F.size):
        total, weights = 0.0, 0.0
        for j in (0, 5, 6):
            w = np.exp(-0.5 * ((fi[i] - fi[j]) ** 2 + (pi[i] - pi[j]) ** 2))
            total += w * np.log(readings[j] / predicted[j])
            weights += w
        naive.append(predicted[i] * np.exp(total / (weights + 1.0)))
    assert smoothed_estimate(F, P, predicted, readings) == pytest.approx(naive)
    nothing = np.full(F.size, np.nan)
    assert np.array_equal(smoothed_estimate(F, P, predicted, nothing), predicted)
    lone = nothing.copy()
    lone[15] = predicted[15] * 0.5    # far from everything else: the geometric mean
    assert smoothed_estimate(F, P, predicted, lone)[15] == pytest.approx(
        predicted[15] * np.sqrt(0.5), rel=1e-6)



def test_choose_selects_its_model_by_cross_validation_on_few_readings(
        campaign_file: Path) -> None:
    from phasekit.campaign import read_campaign
    from phasekit.energy.fit import SELECTION_LIMIT, SELECTION_MIN, select_model
    from phasekit.energy.workflow import fit_then_choose

    configs = configurations(read_campaign(campaign_file)).reset_index(drop=True)
    few = configs.iloc[choose_training(configs, SELECTION_MIN, design="doptimal")]
    run_few = fit_then_choose(few)
    fitted, scores, _ = select_model(few["frequency_ghz"], few["cores"], few["input"],
                                     few["energy_j"], few["time_s"])
    assert len(scores) == 3 and run_few.result.model_selected
    assert run_few.result.model == fitted.model
    assert run_few.result.params == pytest.approx(dict(fitted.params))
    back = ChoiceResult.from_dict(json.loads(json.dumps(run_few.result.to_dict())))
    assert back.model_selected
    assert "chosen by cross-validation" in run_few.result.present().to_text()
    assert len(configs) > SELECTION_LIMIT
    whole = fit_then_choose(configs).result
    assert whole.model == "extended" and not whole.model_selected
    assert "chosen by cross-validation" not in whole.present().to_text()
