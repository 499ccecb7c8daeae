"""Choosing configurations (seed 002, section 4.12): the optimizer against the closed form
f* = (c3 / (2 c1 p))^(1/3) and brute force, limits, the Pareto frontier against a naive
dominance check, the ondemand baseline's savings (eq. 4.24), campaigns without frequency
control, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.helpers import run

from phasekit.campaign import Campaign, Run, write_campaign
from phasekit.energy.choose import choose, pareto_front
from phasekit.energy.fit import FittedModel, configurations, fit_energy
from phasekit.energy.models import optimal_frequency, seed_energy, seed_time
from phasekit.errors import UsageError
from phasekit.synth.campaigns import seed_campaign

SEED_PARAMS = {"c1": 0.3, "c2": 0.5, "c3": 90.0, "d1": 400.0, "d2": 1.2, "w": 0.97}
MODEL = FittedModel(model="seed", params=SEED_PARAMS)
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
    energies = [float(seed_energy(f, p, 2, **SEED_PARAMS)) for f, p in grid]
    f_best, p_best = grid[int(np.argmin(energies))]
    assert (choice.best.frequency_ghz, choice.best.cores) == (pytest.approx(f_best), p_best)
    assert choice.best.energy_j == pytest.approx(min(energies))
    times = [float(seed_time(f, p, 2, SEED_PARAMS["d1"], SEED_PARAMS["d2"], SEED_PARAMS["w"]))
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
                    and seed_time(f, p, 4, 400.0, 1.2, 0.97) <= (limit or np.inf)]
        energies = [float(seed_energy(f, p, 4, **SEED_PARAMS)) for f, p in feasible]
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
    at_max = np.array([float(seed_energy(2.2, p, 1, **SEED_PARAMS)) for p in CORES])
    e = choice.best.energy_j
    for policy, baseline in (("worst", at_max.max()), ("random", at_max.mean()),
                             ("best", at_max.min())):
        assert choice.savings_predicted[policy] == pytest.approx(100 * (baseline - e)
                                                                 / baseline)
    assert choice.savings_measured == {}
    # Measured energies 10 % above the model everywhere: measured savings equal predicted.
    measured = pd.DataFrame([{"frequency_ghz": f, "cores": p, "input": 1.0,
                              "energy_j": 1.1 * float(seed_energy(f, p, 1, **SEED_PARAMS)),
                              "time_s": 1.0} for f in FREQS for p in CORES])
    again = choose(MODEL, [1], frequencies_ghz=FREQS, cores=CORES, measured=measured,
                   user_cores=8).choices[0]
    assert again.best.measured_energy_j == pytest.approx(1.1 * e)
    user = float(seed_energy(2.2, 8, 1, **SEED_PARAMS))
    assert again.savings_predicted == {"user": pytest.approx(100 * (user - e) / user)}
    assert again.savings_measured["user"] == pytest.approx(again.savings_predicted["user"])
    with pytest.raises(UsageError, match="--user-cores 3"):
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
    fitted = fit_energy(configs, model="seed")
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
def campaign_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("choose") / "campaign.json"
    write_campaign(seed_campaign(seed=0).campaign, path)
    return path


def test_cli_choose_json_matches_the_library(campaign_file: Path, tmp_path: Path) -> None:
    fit_path = tmp_path / "fit.json"
    code, _, err = run("energy", "fit", str(campaign_file), "--model", "seed", "--train", "10",
                       "--no-baselines", "-o", str(fit_path))
    assert code == 0, err
    code, out, err = run("energy", "choose", str(campaign_file), "--fit", str(fit_path),
                         "--input", "2,9", "--max-cores", "16", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "energy_choice" and data["model"] == "seed"
    first, extrapolated = data["choices"]
    assert first["input_label"] == "2" and not first["extrapolated"]
    assert extrapolated["extrapolated"] and extrapolated["best"]["cores"] <= 16
    saved = json.loads(fit_path.read_text())
    model = FittedModel(model="seed", params=saved["params"])
    expected = choose(model, [2.0], frequencies_ghz=FREQS, cores=range(1, 33), max_cores=16)
    assert first["best"]["energy_j"] == pytest.approx(expected.choices[0].best.energy_j)
    assert set(first["savings_measured"]) == {"worst", "random", "best"}
    figure = tmp_path / "choice.png"
    code, text, _ = run("energy", "choose", str(campaign_file), "--fit", str(fit_path),
                        "--input", "3", "--plot", str(figure))
    assert code == 0 and "Pareto frontier" in text and "Savings vs ondemand" in text
    assert figure.read_bytes().startswith(b"\x89PNG") and "wrote figure" in text


def test_cli_choose_bad_input(campaign_file: Path, tmp_path: Path) -> None:
    code, _, err = run("energy", "choose", str(campaign_file), "--input", "huge")
    assert code == 2 and "--input 'huge': not an input of the campaign" in err
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
    assert code not in (0, 2) and "measured no energy" in err and "--power-estimate" in err
