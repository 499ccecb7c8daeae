"""The result contract for energy, schedule, signature and power-model results:
summary() against known truth, plot() on a new figure and on a given Axes, _repr_html_,
save() + phasekit.load() round trips, and the "seed" -> "pt" model rename with its migration."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import phasekit
from phasekit.energy.choose import ChoiceResult, choose
from phasekit.energy.efficiency import EfficiencyTable, efficiency_table
from phasekit.energy.fit import EnergyFitResult, configurations, fit_energy, fit_model
from phasekit.energy.models import MODELS, get_model, model_name, pt_energy, pt_time
from phasekit.energy.suggest import SuggestResult, suggest
from phasekit.errors import UsageError
from phasekit.plot.common import figure
from phasekit.results import REGISTRY, Result, json_close
from phasekit.schedule.batch import Batch
from phasekit.schedule.datacenter import DataCenter
from phasekit.schedule.simulate import schedule_batch
from phasekit.signature.coalloc import CoallocModel, fit_coalloc
from phasekit.signature.powermodels.fit import (
    PowerModelEval,
    PowerModelFit,
    evaluate_power_model,
    fit_power_model,
)
from phasekit.synth.campaigns import SEED_PARAMS, seed_campaign

FREQS = (1.2, 1.6, 2.0, 2.2)
CORES = (1, 2, 4, 8, 16)
INPUTS = (1, 2)


@pytest.fixture(scope="module")
def configs() -> pd.DataFrame:
    """A noise-free campaign of the pt model: its optimum is known."""
    return configurations(seed_campaign(noise=0.0, frequencies=FREQS, cores=CORES,
                                        inputs=INPUTS).campaign)


@pytest.fixture(scope="module")
def fitted(configs: pd.DataFrame) -> EnergyFitResult:
    return fit_energy(configs, model="pt", n_train=12, design="random", seed=1)


@pytest.fixture(scope="module")
def choice(configs: pd.DataFrame, fitted: EnergyFitResult) -> ChoiceResult:
    return choose(fitted.fitted, INPUTS, frequencies_ghz=FREQS, cores=CORES, measured=configs)


@pytest.fixture(scope="module")
def suggested(configs: pd.DataFrame) -> SuggestResult:
    return suggest(configs.iloc[::3].reset_index(drop=True), k=3, model="pt",
                   frequencies_ghz=FREQS, cores=CORES, reference=configs)


def true_optimum(n: float) -> tuple[float, int, float]:
    energy = {(f, p): float(pt_energy(f, p, n, **SEED_PARAMS))
              for f, p in itertools.product(FREQS, CORES)}
    (f, p), e = min(energy.items(), key=lambda item: item[1])
    return f, p, e


# --- summary() against known truth -----------------------------------------------------------
def test_fit_summary_rows(fitted: EnergyFitResult) -> None:
    table = fitted.summary()
    assert list(table["method"]) == ["pt", "extended"]
    assert list(table["role"]) == ["fitted", "other model"]
    # noise-free data of the model itself: the fit is exact
    assert table.loc[0, "mpe_holdout"] < 0.1 and table.loc[0, "mpe_train"] < 0.1
    assert table.loc[0, "mpe_holdout"] == fitted.mpe_holdout


def test_choice_summary_is_the_true_optimum(choice: ChoiceResult) -> None:
    table = choice.summary()
    assert list(table["input"]) == ["1", "2"]
    for row in table.itertuples(index=False):
        f, p, e = true_optimum(float(row.input))
        assert (row.frequency_ghz, row.cores) == (f, p)
        assert row.energy_j == pytest.approx(e, rel=1e-3)
        assert row.measured_energy_j == pytest.approx(e, rel=1e-9)
        assert row.regret == pytest.approx(0.0, abs=1e-9)
        worst = max(float(pt_energy(2.2, q, float(row.input), **SEED_PARAMS)) for q in CORES)
        assert row.saving_worst == pytest.approx(100 * (worst - e) / worst, rel=1e-3)


def test_suggest_summary(suggested: SuggestResult, configs: pd.DataFrame) -> None:
    table = suggested.summary()
    assert list(table["rank"]) == [1, 2, 3]
    measured = {(round(f, 9), int(p), n) for f, p, n in
                configs.iloc[::3][["frequency_ghz", "cores", "input"]].itertuples(index=False)}
    for row in table.itertuples(index=False):
        assert (round(row.frequency_ghz, 9), int(row.cores), float(row.input)) not in measured
        assert row.energy_low_j <= row.energy_j <= row.energy_high_j


def test_efficiency_summary_is_amdahls_law(configs: pd.DataFrame) -> None:
    campaign = seed_campaign(noise=0.0, frequencies=FREQS, cores=CORES, inputs=INPUTS).campaign
    table = efficiency_table(campaign)
    w = SEED_PARAMS["w"]
    rows = table.summary()
    assert len(rows) == len(CORES) * len(INPUTS)
    for row in rows.itertuples(index=False):
        p = row[1]
        t = float(pt_time(2.2, p, float(row.input), SEED_PARAMS["d1"], SEED_PARAMS["d2"], w))
        assert row.time_s == pytest.approx(t, rel=1e-9)
        assert row.efficiency == pytest.approx(1.0 / (p - w * p + w), rel=1e-9)


def small_batch() -> Batch:
    return Batch.from_tasks([("a", 2, 10.0, 50.0), ("b", 1, 4.0, 20.0), ("c", 4, 6.0, 80.0),
                             ("d", 2, 3.0, 30.0)])


def test_schedule_and_batch_summaries() -> None:
    batch = small_batch()
    result = schedule_batch(batch, DataCenter(servers=1, cores=4), policies=("rr", "heuristic"))
    table = result.summary()
    assert list(table["policy"]) == [p.policy for p in result.policies]
    # one server: the makespan is at least the total core-seconds over the cores
    work = float(np.sum(batch.threads * batch.time_s)) / 4
    assert (table["makespan_s"] >= work - 1e-9).all()
    assert table["saving_vs_rr"].iloc[0] == pytest.approx(0.0)
    assert batch.summary()["time_s"].tolist() == [10.0, 4.0, 6.0, 3.0]


def power_table(rows: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    c1, c2 = rng.uniform(0, 10, rows), rng.uniform(0, 5, rows)
    return pd.DataFrame({"C1": c1, "C2": c2, "power_w": 10 + 2 * c1 + 3 * c2})


def test_power_model_summaries() -> None:
    table = power_table()
    fit = fit_power_model(table, features=["C1", "C2"])
    rows = fit.summary()
    assert list(rows["rows"]) == ["train", "test", "mean baseline (test)"]
    assert rows.loc[1, "rmse"] == pytest.approx(0.0, abs=1e-8)        # an exact linear law
    truth = table["power_w"].to_numpy()[-fit.n_test:]
    mean = table["power_w"].to_numpy()[:fit.n_train].mean()
    assert rows.loc[2, "rmse"] == pytest.approx(np.sqrt(np.mean((truth - mean) ** 2)))
    evaluated = evaluate_power_model(fit.model, table).summary()
    assert evaluated.loc[0, "rmse"] == pytest.approx(0.0, abs=1e-8)
    assert evaluated.loc[0, "measured_mean_w"] == pytest.approx(table["power_w"].mean())


def coalloc() -> CoallocModel:
    solo = power_table(40)
    other = power_table(40).iloc[::-1].reset_index(drop=True)
    together = pd.DataFrame({"C1": solo["C1"] + other["C1"], "C2": 0.5 * solo["C2"]})
    return fit_coalloc(solo, other, together, counters=("C1", "C2"), inputs=("C1", "C2"))


def test_coalloc_summary_and_coefficients() -> None:
    model = coalloc()
    table = model.summary()
    assert list(table["counter"]) == ["C1", "C2"] and (table["features"] == 4).all()
    c1 = model.models["C1"]
    coefficients = dict(zip(c1.features, c1.coefficients, strict=True))
    assert coefficients["C1_t1"] == pytest.approx(1.0) and coefficients["C1_t2"] == pytest.approx(1)


# --- plot(), _repr_html_, save() + load() ----------------------------------------------------
def results(fitted: EnergyFitResult, choice: ChoiceResult, suggested: SuggestResult
            ) -> list[Result]:
    campaign = seed_campaign(noise=0.0, frequencies=FREQS, cores=CORES, inputs=INPUTS).campaign
    batch = small_batch()
    schedule = schedule_batch(batch, DataCenter(servers=2, cores=4), policies=("rr", "heuristic"))
    fit = fit_power_model(power_table(), features=["C1", "C2"])
    return [fitted, choice, suggested, efficiency_table(campaign), schedule, batch, fit,
            evaluate_power_model(fit.model, power_table()), coalloc()]


def drawn(ax: Any) -> int:
    return len(ax.lines) + len(ax.collections) + len(ax.patches) + len(ax.images) + len(ax.texts)


def test_every_result_plots_alone_and_on_a_given_axes(
        fitted: EnergyFitResult, choice: ChoiceResult, suggested: SuggestResult) -> None:
    for result in results(fitted, choice, suggested):
        fig = result.plot()
        assert isinstance(fig, Figure) and fig.axes, type(result).__name__
        given = figure(6, 4)
        ax = given.add_subplot()
        assert result.plot(ax=ax) is given, type(result).__name__
        assert drawn(ax) > 0, type(result).__name__


@pytest.mark.slow
def test_repr_html_has_a_table_and_an_image(
        fitted: EnergyFitResult, choice: ChoiceResult, suggested: SuggestResult) -> None:
    for result in results(fitted, choice, suggested):
        page = result._repr_html_()
        assert "<table" in page and "<img" in page, type(result).__name__
        assert len(repr(result)) <= 300


def test_save_and_load_round_trip(tmp_path: Path, fitted: EnergyFitResult,
                                  choice: ChoiceResult, suggested: SuggestResult) -> None:
    for k, result in enumerate(results(fitted, choice, suggested)):
        kind = result.to_dict()["kind"]
        assert kind == type(result).KIND and kind in REGISTRY
        assert kind == kind.lower() and "-" not in kind                     # snake_case
        path = result.save(tmp_path / f"{k}.json")
        again = phasekit.load(path)
        assert type(again) is type(result)
        assert json_close(again.to_dict(), json.loads(json.dumps(result.to_dict()))), kind
        pd.testing.assert_frame_equal(again.summary().reset_index(drop=True),
                                      result.summary().reset_index(drop=True),
                                      check_dtype=False)


def test_a_loaded_choice_still_plots(tmp_path: Path, choice: ChoiceResult) -> None:
    again = phasekit.load(choice.save(tmp_path / "choice.json"))
    assert isinstance(again.plot(), Figure)
    for mine, theirs in zip(choice.choices, again.choices, strict=True):  # kept in the JSON
        assert len(theirs.evaluated) == len(mine.evaluated) == len(FREQS) * len(CORES)
        assert json_close([c.to_dict() for c in theirs.evaluated],
                          [c.to_dict() for c in mine.evaluated])


def test_the_choice_figure_marks_the_choice_and_the_lowest_reading(
        configs: pd.DataFrame, fitted: EnergyFitResult) -> None:
    """Per input, the model's and the measured energies over frequency x cores: the star on
    the chosen cell, the black box around the cell of the lowest reading (found here by a
    plain search of the campaign), the measured panel titled with the choice's regret."""
    from matplotlib.lines import Line2D

    from phasekit.plot.energy import choice_figure

    # a campaign whose lowest reading is not where the model's least lies
    lucky = configs.copy()
    where = (lucky["input"] == 1) & (lucky["cores"] == 2) & np.isclose(lucky["frequency_ghz"], 1.6)
    lucky.loc[where, "energy_j"] *= 0.7
    result = choose(fitted.fitted, INPUTS, frequencies_ghz=FREQS, cores=CORES, measured=lucky)
    fig = choice_figure(result)
    maps = [ax for ax in fig.axes if ax.get_images()]
    assert len(maps) == 2 * len(INPUTS)
    for k, n in enumerate(INPUTS):
        choice = result.choices[k]
        mine = lucky[lucky["input"] == n]
        low = mine.loc[mine["energy_j"].idxmin()]
        cell = (FREQS.index(float(low["frequency_ghz"])), CORES.index(int(low["cores"])))
        star = (FREQS.index(choice.best.frequency_ghz), CORES.index(choice.best.cores))
        for ax in maps[2 * k: 2 * k + 2]:
            lines = [line for line in ax.get_lines() if isinstance(line, Line2D)]
            stars = [line for line in lines if line.get_marker() == "*"]
            assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in stars] == [star]
            boxes = [line for line in lines if line.get_color() == "black"]
            x, y = np.asarray(boxes[0].get_xdata()), np.asarray(boxes[0].get_ydata())
            assert np.nanmean(x[:4]) == pytest.approx(cell[0])
            assert np.nanmean(y[:4]) == pytest.approx(cell[1])
        lost = 100 * (choice.best.measured_energy_j / low["energy_j"] - 1)
        assert f"choice {lost:+.1f} %" in maps[2 * k + 1].get_title(loc="left")


# --- "seed" -> "pt" --------------------------------------------------------------------------
def test_seed_is_an_alias_of_pt(configs: pd.DataFrame) -> None:
    assert "seed" not in MODELS and get_model("seed") is MODELS["pt"] is get_model("pt")
    assert model_name("seed") == "pt"
    with pytest.raises(UsageError) as error:
        get_model("thesis")
    assert "pt" in str(error.value) and "seed" not in str(error.value).split("expected")[1]
    c = configs
    assert fit_model(c.frequency_ghz, c.cores, c.input, c.energy_j, c.time_s,
                     model="seed").model == "pt"
    result = fit_energy(configs, model="seed", n_train=12, design="random", seed=1)
    assert result.model == "pt" and result.to_dict()["model"] == "pt"
    assert suggest(configs.iloc[::3], k=1, model="seed").choice.model == "pt"


def test_old_json_naming_seed_loads_as_pt(tmp_path: Path, fitted: EnergyFitResult,
                                          choice: ChoiceResult,
                                          suggested: SuggestResult) -> None:
    old_fit = fitted.to_dict()
    old_fit["model"] = "seed"
    old_fit["other_models"] = {"seed": old_fit["other_models"]["extended"]}
    old_fit["selection"] = {"extended": 1.0, "seed": 0.5}
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(old_fit))
    loaded = phasekit.load(path)
    assert loaded.model == "pt" and set(loaded.other_models) == {"pt"}
    assert loaded.selection == {"extended": 1.0, "pt": 0.5}
    old_choice = choice.to_dict()
    old_choice["model"] = "seed"
    assert ChoiceResult.from_dict(old_choice).model == "pt"
    old_suggest = suggested.to_dict()
    old_suggest["choice"]["model"] = "seed"
    path = tmp_path / "suggest.json"
    path.write_text(json.dumps(old_suggest))
    assert phasekit.load(path).choice.model == "pt"


def test_registered_kinds_name_their_classes() -> None:
    for kind in ("energy_fit", "energy_choice", "energy_suggest", "efficiency", "schedule",
                 "batch", "signature", "signature_estimate", "power_model_fit",
                 "power_model_eval", "coalloc_model"):
        module, name = REGISTRY[kind]
        cls = getattr(__import__(module, fromlist=[name]), name)
        assert issubclass(cls, Result) and kind == cls.KIND
    assert issubclass(EfficiencyTable, Result) and issubclass(PowerModelFit, Result)
    assert issubclass(PowerModelEval, Result)


def test_signature_results(tmp_path: Path) -> None:
    from phasekit.signature.manager import ManagerResult
    from phasekit.signature.reconstruct import reconstruct
    from test_signature import FakeModel, fake_run, fake_signature

    sig = fake_signature()
    table = sig.summary()
    assert list(table["name"]) == [u.name for u in sig.units]
    path1 = table[table["name"] == "path1"].iloc[0]
    assert path1["instructions"] == pytest.approx((2000 + 100 * 100) - 1000)  # less main's
    runs = [fake_run(u, k, u.count.at(k) * 1e-6, busy=0.5)  # type: ignore[union-attr]
            for u in sig.units for k in (1, 5)]
    estimate = reconstruct(sig, ManagerResult("software", 5.0, 10, 0.001, tuple(runs), (0,),
                                              0.1, ("fake",)), power_model=FakeModel())
    segments = estimate.summary()
    assert segments["energy_j"].sum() == pytest.approx(estimate.energy_j)
    assert np.allclose(segments["power_w"], 20 * 0.5 + 2.0)
    for result in (sig, estimate):
        assert isinstance(result.plot(), Figure)
        ax = figure(6, 4).add_subplot()
        result.plot(ax=ax)
        assert drawn(ax) > 0
        page = result._repr_html_()
        assert "<table" in page and "<img" in page
        again = phasekit.load(result.save(tmp_path / f"{result.KIND}.json"))
        assert json_close(again.to_dict(), json.loads(json.dumps(result.to_dict())))


def test_a_choice_with_an_infeasible_input_still_displays(fitted: EnergyFitResult) -> None:
    none_fit = choose(fitted.fitted, INPUTS, frequencies_ghz=FREQS, cores=CORES,
                      max_time_s=1e-9)
    assert all(c.best is None for c in none_fit.choices)
    assert "none within the limits" in repr(none_fit)
    page = none_fit._repr_html_()
    # the figure shows every configuration against the time limit, the fastest marked
    assert "<table" in page and "<img" in page and "no figure" not in page
    every = [(f, p, n) for f in FREQS for p in CORES for n in INPUTS]
    failed = choose(fitted.fitted, INPUTS, frequencies_ghz=FREQS, cores=CORES,
                    failed_runs=every)
    page = failed._repr_html_()
    assert "<table" in page and "no figure" in page     # the figure says why it is missing


def test_the_readings_panel_dashes_the_configurations_within_the_noise(
        configs: pd.DataFrame, fitted: EnergyFitResult) -> None:
    """With a known noise (threshold 14 %), the readings panel borders, dashed, the cells
    whose reading lies within that much of the lowest: one segment per cell side facing a
    cell outside (counted here); without a known noise, no dashed border."""
    import dataclasses

    from matplotlib.collections import LineCollection

    from phasekit.plot.energy import choice_figure

    plain_result = choose(fitted.fitted, INPUTS, frequencies_ghz=FREQS, cores=CORES,
                          measured=configs)
    noisy = dataclasses.replace(plain_result, noise={"relative": 0.05, "threshold": 0.14})

    def dashed(fig: Figure) -> list[LineCollection]:
        return [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)
                and c.get_linestyle()[0][1] is not None]

    assert dashed(choice_figure(plain_result)) == []
    drawn = dashed(choice_figure(noisy))
    assert len(drawn) == len(INPUTS)
    for collection, n in zip(drawn, INPUTS, strict=True):
        mine = configs[configs["input"] == n]
        grid = np.full((len(CORES), len(FREQS)), np.nan)
        for _, row in mine.iterrows():
            grid[CORES.index(int(row["cores"])), FREQS.index(float(row["frequency_ghz"]))] = \
                row["energy_j"]
        inside = grid <= 1.14 * np.nanmin(grid)
        sides = 0
        for i, j in zip(*np.nonzero(inside), strict=True):
            for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
                outside = not (0 <= a < inside.shape[0] and 0 <= b < inside.shape[1])
                sides += outside or not inside[a, b]
        assert len(collection.get_segments()) == sides
