"""Which configurations to measure next: an active-learning loop on synthetic
campaigns with known truth reduces the regret of `energy choose` faster than random
measurements; the suggestions are new, feasible and spread; the result's JSON; the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.helpers import run

from phasekit.energy.fit import choose_training, configurations
from phasekit.energy.suggest import (
    SuggestResult,
    _improving_votes,
    lowest_measured,
    measured_keys,
    suggest,
)
from phasekit.errors import UsageError
from phasekit.synth.campaigns import realistic_campaign, seed_campaign


def _grid(configs: pd.DataFrame) -> dict[str, tuple]:
    return {"frequencies_ghz": tuple(np.unique(configs["frequency_ghz"])),
            "cores": tuple(int(c) for c in np.unique(configs["cores"]))}


def _loop(configs: pd.DataFrame, seed: int, rounds: int, by: str) -> list[float]:
    """Mean regret (%) of the choice after 0..rounds rounds of 5 new measurements, picked by
    ``suggest`` or at random, from 10 random ones."""
    index = {key: i for i, key in enumerate(zip(configs["frequency_ghz"].round(9),
                                                configs["cores"].astype(int),
                                                configs["input"].round(9), strict=True))}
    chosen = list(choose_training(configs, 10, seed=seed))
    rng = np.random.default_rng(1000 + seed)
    regrets = []
    for step in range(rounds + 1):
        result = suggest(configs.iloc[chosen], seed=seed, reference=configs, **_grid(configs))
        regrets.append(result.choice.mean_regret)
        if step == rounds:
            break
        if by == "suggest":
            chosen += [index[(round(s.frequency_ghz, 9), s.cores, round(s.input, 9))]
                       for s in result.suggestions]
        else:
            rest = np.setdiff1d(np.arange(len(configs)), chosen)
            chosen += list(rng.choice(rest, 5, replace=False))
    return regrets


@pytest.mark.slow
def test_active_learning_reduces_regret_faster_than_random_measurements() -> None:
    suggested, random = [], []
    for seed in range(4):
        configs = configurations(realistic_campaign("mixed", seed=seed,
                                                    inputs=(1, 2, 3)).campaign)
        suggested.append(_loop(configs, seed, 3, "suggest"))
        random.append(_loop(configs, seed, 3, "random"))
    suggested_mean, random_mean = np.mean(suggested, axis=0), np.mean(random, axis=0)
    assert suggested_mean[0] == pytest.approx(random_mean[0])       # the same start
    assert suggested_mean[-1] < 0.5 * suggested_mean[0]             # the loop helps ...
    assert suggested_mean[-1] < 0.6 * random_mean[-1]               # ... more than chance
    assert suggested_mean[-1] < 6.0


def test_suggestions_are_new_feasible_and_spread() -> None:
    configs = configurations(seed_campaign(seed=3, cores=(1, 2, 4, 8, 16, 32),
                                           inputs=(1, 2, 3)).campaign)
    measured = configs.iloc[choose_training(configs, 12, seed=3)]
    result = suggest(measured, k=6, max_cores=16, min_frequency_ghz=1.4, model="pt",
                     **_grid(configs))
    assert len(result.suggestions) == 6 and result.n_measured == 12
    keys = measured_keys(measured)
    seen = set()
    for s in result.suggestions:
        key = (round(s.frequency_ghz, 9), s.cores, round(s.input, 9))
        assert key not in keys and key not in seen
        seen.add(key)
        assert s.cores <= 16 and s.frequency_ghz >= 1.4 - 1e-9
        assert s.energy_low_j <= s.energy_j <= s.energy_high_j
    assert len({s.input for s in result.suggestions}) == 3    # spread over the inputs
    assert result.n_candidates == 3 * 9 * 5 - sum(
        1 for f, p, _ in keys if p <= 16 and f >= 1.4 - 1e-9)
    assert all(np.isnan(c.regret) for c in result.choice.choices)  # not all measured
    data = json.loads(json.dumps(result.to_dict()))
    assert data["kind"] == "energy_suggest" and len(data["suggestions"]) == 6
    assert SuggestResult.from_dict(data).to_dict() == data
    with pytest.raises(UsageError, match="nothing measured yet"):
        suggest(measured.iloc[:0])
    with pytest.raises(UsageError, match=r"^k=0: expected at least 1"):
        suggest(measured, k=0, model="pt")


def test_improving_votes_count_each_fits_best_unmeasured_below_the_bar() -> None:
    full = np.log([5.0, 1.0, 2.0, 3.0])
    members = np.log([[5.0, 1.0, 2.5, 1.5],    # best unmeasured: #3 (1.5 < 2)
                      [5.0, 1.0, 1.9, 2.5],    # #2 (1.9 < 2)
                      [5.0, 1.0, 2.1, 2.2]])   # #2 at 2.1: not below the bar
    unmeasured = np.array([True, False, True, True])    # #1 (1 J predicted) is measured
    votes = _improving_votes(full, members, unmeasured, lowest=2.0)
    assert votes.tolist() == [0, 0, 1, 1]     # the full fit's best unmeasured #2 is at 2 J
    assert _improving_votes(full, members, unmeasured, lowest=10.0).tolist() == [0, 0, 3, 1]
    assert not _improving_votes(full, members, np.zeros(4, bool), lowest=10.0).any()
    table = pd.DataFrame({"input": [1.0, 1.0, 2.0], "energy_j": [3.0, 2.0, 7.0]})
    assert lowest_measured(table) == {1.0: 2.0, 2.0: 7.0}


def test_suggestions_lead_with_what_may_beat_the_best_measured() -> None:
    configs = configurations(realistic_campaign("mixed", seed=1, inputs=(1, 2)).campaign)
    measured = configs.iloc[choose_training(configs, 10, seed=1)]
    result = suggest(measured, k=4, seed=1, **_grid(configs))
    votes = [s.improving_members for s in result.suggestions]
    assert votes[0] > 0 and votes == sorted(votes, reverse=True)[:1] + votes[1:]
    lowest = lowest_measured(measured)
    for s in result.suggestions:
        if s.improving_members:
            assert s.energy_low_j < lowest[s.input]   # some fit puts it below the bar


def test_nothing_left_to_suggest_is_an_empty_result() -> None:
    configs = configurations(seed_campaign(seed=1, frequencies=(1.2, 2.2), cores=(1, 4, 16),
                                           inputs=(1, 2)).campaign)
    result = suggest(configs, model="pt")
    assert result.suggestions == () and result.n_candidates == 0
    assert all(np.isfinite(c.regret) for c in result.choice.choices)


@pytest.fixture(scope="module")
def campaign_file(seed_campaign_file: Callable[..., Path]) -> Path:
    return seed_campaign_file(seed=0, cores=(1, 2, 4, 8, 16, 32), inputs=(1, 2, 3))


def test_cli_suggest(campaign_file: Path, tmp_path: Path) -> None:
    code, out, err = run("energy", "suggest", campaign_file, "--train", "10", "--model", "pt",
                         "-k", "4", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["suggestions"]) == 4 and data["n_measured"] == 10
    assert data["choice"]["regret"]["mean"] is not None       # the campaign measured all
    code, text, err = run("energy", "suggest", campaign_file, "--train", "10", "--model",
                          "seed")
    assert code == 0, err
    assert "Next 5 configurations to measure" in text and "How sure" in text
    fit_path = tmp_path / "fit.json"
    code, _, err = run("energy", "fit", campaign_file, "--model", "pt", "--train", "12",
                       "-o", fit_path)
    assert code == 0, err
    code, out, err = run("energy", "suggest", campaign_file, "--fit", fit_path, "--json")
    assert code == 0, err
    assert json.loads(out)["n_measured"] == 12


@pytest.mark.parametrize("args, message", [
    (("-k", "0"), "-k 0"),
    (("--train", "100000"), "--train 100000"),
    (("--tolerance", "-3"), "--tolerance -3"),
    (("--design", "sobol"), "--design sobol: expected one of"),
    (("--train", "10", "--fit", "x.json"), "give one of them"),
])
def test_cli_suggest_bad_input_is_one_line(campaign_file: Path, args: tuple[str, ...],
                                           message: str) -> None:
    code, out, err = run("energy", "suggest", campaign_file, *args)
    assert code == 2 and out == "" and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
