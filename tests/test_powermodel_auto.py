"""``model="auto"`` (the default of ``phasekit powermodel fit``) and gradient boosting.

Known truths: tables whose power is a step in one counter (trees can follow it, a formula of
products and ratios and a straight line cannot) or a straight line plus noise (the noise
floor); scikit-learn's own predictions for the stored trees; the test rows take no part in
the choice (changing them changes no validation score).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import helpers
from phasekit.errors import InputError, UsageError
from phasekit.signature.powermodels import PowerModelFit, fit_power_model, power_model_from_dict
from phasekit.signature.powermodels.boosting import BoostedPowerModel, fit_boosting
from phasekit.signature.powermodels.choice import choice_line
from phasekit.signature.powermodels.fit import FIT_VERSION

run = helpers.run
#: A small evolution: the tests check the choice, not how good GE gets.
QUICK_GE = {"generations": 30, "restarts": 1}
NOISE_W = 1.0


def step_table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Power 100 W, 160 W once counter ``x`` passes 5 (a machine leaving a low-power
    state), plus N(0, 1 W); ``z`` is unrelated. Rows in time order (``timestamp``)."""
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(0, 10, n), rng.uniform(0, 10, n)
    return pd.DataFrame({"timestamp": np.arange(n, dtype=float), "x": x, "z": z,
                         "power_w": 100 + 60 * (x > 5) + rng.normal(0, NOISE_W, n)})


def line_table(n: int = 600, seed: int = 1) -> pd.DataFrame:
    """Power exactly linear in two counters plus N(0, 1 W)."""
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(1e8, 1e9, n), rng.uniform(1e6, 1e7, n)
    return pd.DataFrame({"a": a, "b": b, "c": rng.uniform(0, 1, n),
                         "power_w": 40 + 8e-8 * a + 3e-6 * b + rng.normal(0, NOISE_W, n)})


@pytest.fixture(scope="module")
def step_fit() -> PowerModelFit:
    return fit_power_model(step_table(), seed=0, **QUICK_GE)


def test_auto_is_the_default_and_follows_a_step_that_no_formula_follows(
        step_fit: PowerModelFit) -> None:
    fit = step_fit
    choice = fit.choice
    validation = choice["validation_rmse"]
    assert set(validation) == {"linear", "pls", "ge", "boosting"}
    assert choice["chosen"] == "boosting" and isinstance(fit.model, BoostedPowerModel)
    assert validation["boosting"] == min(validation.values())
    assert validation["boosting"] < 0.5 * validation["linear"]
    # the trees' held-out error is the noise but near the step (where one row on the wrong
    # side costs 60 W); a straight line's is the step's
    assert fit.test["mae"] < 2 * NOISE_W and fit.test["rmse"] < 6 * NOISE_W
    assert choice["test"]["linear"]["rmse"] > 10 * NOISE_W
    assert fit.test["rmse"] == pytest.approx(choice["test"]["boosting"]["rmse"])
    # validated on the last 20 % of the training rows in time, fitted on the rest
    assert choice["split"] == "time" and fit.split == "time"
    assert choice["n_validation"] == round(0.2 * fit.n_train)
    assert choice["n_fitted"] + choice["n_validation"] == fit.n_train


def test_the_choice_is_one_line_naming_the_model_and_the_others(
        step_fit: PowerModelFit) -> None:
    line = step_fit.choice_text
    assert line is not None and "\n" not in line
    assert line.startswith("model chosen by validation: gradient boosting, RMSE ")
    assert f"on the last {step_fit.choice['n_validation']} training rows in time" in line
    for other in ("GE", "linear", "PLS"):
        assert f"{other} " in line.split("against", 1)[1]
    shown = step_fit.present("step.csv")
    assert line in shown.notes
    assert any(note.startswith("GE formula (not chosen): power_w = ") for note in shown.notes)
    table = next(v for v in shown.views if v.title.startswith("Model choice"))
    assert table.rows[0][0] == "gradient boosting (chosen)" and len(table.rows) == 4
    validation = {kind: 1.0 for kind in ("linear", "pls", "ge", "boosting")}
    random = {"chosen": "pls", "validation_rmse": validation | {"pls": 0.5},
              "n_validation": 12, "n_fitted": 48, "split": "random"}
    assert choice_line(random) == ("model chosen by validation: PLS, RMSE 0.5 W on 12 training "
                                   "rows drawn at random, against linear 1 W, GE 1 W, gradient "
                                   "boosting 1 W")


def test_the_ge_formula_is_kept_and_predicts_what_its_scores_say(
        step_fit: PowerModelFit) -> None:
    formula = step_fit.formula
    assert formula is not None and formula.text.startswith("power_w = ")
    table = step_table()
    test_rows = table.iloc[step_fit.n_train:]
    rmse = float(np.sqrt(np.mean((formula.predict(test_rows) - test_rows["power_w"]) ** 2)))
    assert rmse == pytest.approx(step_fit.choice["test"]["ge"]["rmse"], rel=1e-9)


def test_a_straight_line_is_not_given_to_the_trees() -> None:
    fit = fit_power_model(line_table(), seed=0, **QUICK_GE)
    assert fit.choice["chosen"] != "boosting"
    assert fit.choice["validation_rmse"]["boosting"] > fit.choice["validation_rmse"]["linear"]
    assert fit.test["rmse"] < 1.15 * NOISE_W
    # GE's formula is kept beside the model chosen, unless GE is that model
    assert (fit.formula is not None) == (fit.choice["chosen"] != "ge")


def test_the_test_rows_take_no_part_in_the_choice(step_fit: PowerModelFit) -> None:
    table = step_table()
    table.loc[step_fit.n_train:, "power_w"] = 1000.0  # only the held-out rows change
    again = fit_power_model(table, seed=0, **QUICK_GE)
    assert again.choice["validation_rmse"] == step_fit.choice["validation_rmse"]
    assert again.choice["chosen"] == step_fit.choice["chosen"]
    assert again.train == step_fit.train and again.test != step_fit.test


def test_boosted_trees_predict_what_scikit_learn_predicts() -> None:
    from sklearn.ensemble import GradientBoostingRegressor

    table = step_table(400, seed=3)
    model = fit_boosting(table, "power_w", features=["x", "z"], seed=4)
    reference = GradientBoostingRegressor(random_state=4).fit(
        table[["x", "z"]].to_numpy(), table["power_w"].to_numpy())
    unseen = pd.DataFrame({"x": np.linspace(-5, 15, 301), "z": np.linspace(20, -3, 301)})
    np.testing.assert_array_equal(model.predict(unseen),
                                  reference.predict(unseen[["x", "z"]].to_numpy()))
    again = power_model_from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_array_equal(again.predict(unseen), model.predict(unseen))
    assert model.text == ("power_w: gradient boosting of 100 regression trees of depth 3 on "
                          "x, z")


def test_a_saved_auto_fit_reads_back_and_scores_the_same(step_fit: PowerModelFit,
                                                          tmp_path: Path) -> None:
    saved = step_fit.to_dict()
    assert saved["version"] == FIT_VERSION == 2 and saved["method"] == "boosting"
    assert saved["choice"]["chosen"] == "boosting" and saved["formula"]["model"] == "ge"
    back = PowerModelFit.from_dict(json.loads(json.dumps(saved)))
    assert back.to_dict() == saved
    table = step_table()
    np.testing.assert_array_equal(back.model.predict(table), step_fit.model.predict(table))
    np.testing.assert_array_equal(back.formula.predict(table), step_fit.formula.predict(table))
    path = tmp_path / "step.csv"
    table.to_csv(path, index=False)
    fit_file = tmp_path / "fit.json"
    fit_file.write_text(json.dumps(saved))
    code, out, err = run("powermodel", "eval", fit_file, path, "--json")
    assert code == 0, err
    scored = json.loads(out)
    both = (step_fit.train["rmse"] ** 2 * step_fit.n_train
            + step_fit.test["rmse"] ** 2 * step_fit.n_test) / len(table)
    assert scored["method"] == "boosting"
    assert scored["rmse"] == pytest.approx(math.sqrt(both), rel=1e-9)
    # the one reader of every kind reads it too (signature's power_model= takes it)
    assert isinstance(power_model_from_dict(saved), BoostedPowerModel)


def test_a_fit_saved_before_the_choice_reads_with_none() -> None:
    fit = fit_power_model(line_table(200), model="linear")
    old = fit.to_dict()
    old = {k: v for k, v in old.items() if k not in ("choice", "formula")} | {"version": 1}
    back = PowerModelFit.from_dict(old)
    assert back.choice == {} and back.formula is None and back.choice_text is None
    assert fit.to_dict()["choice"] is None


def test_broken_trees_are_one_line_input_errors() -> None:
    model = fit_boosting(step_table(100), "power_w", features=["x"]).to_dict()
    model["trees"][0]["left"][0] = 999
    with pytest.raises(InputError, match="malformed gradient-boosting power model: tree node 0"):
        power_model_from_dict(model, "m.json")


def test_too_few_rows_to_validate_take_the_first_candidate_that_fits() -> None:
    fit = fit_power_model(line_table(40), seed=0, **QUICK_GE)  # 28 training rows
    assert fit.choice["n_validation"] == 0 and fit.choice["chosen"] == "linear"
    assert fit.choice_text == ("model: linear, not validated (28 training rows are too few to "
                               "hold some out)")


def test_options_of_auto_and_boosting() -> None:
    table = line_table(200)
    with pytest.raises(UsageError) as info:
        fit_power_model(table, model="boosting", generations=5)
    assert str(info.value).endswith("only model 'ge' or 'auto' takes it, not model 'boosting'")
    with pytest.raises(UsageError, match="server model's dynamic parts"):
        fit_power_model(table, model="boosting", server={"leakage": (0,), "fan": (0,)})
    fit = fit_power_model(table, model="boosting")
    assert fit.choice == {} and fit.formula is None
    assert fit.text.startswith("power_w: gradient boosting of 100 regression trees")


def test_cli_fit_defaults_to_auto_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "step.csv"
    step_table().to_csv(path, index=False)
    code, out, err = run("powermodel", "fit", path, "--generations", "30", "--restarts", "1",
                         "-o", tmp_path / "fit.json")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("boosting model of power_w from 2 counters: ")
    said = [line for line in lines if line.startswith("model chosen by validation: ")]
    assert len(said) == 1 and "gradient boosting" in said[0]
    assert any(line.startswith("GE formula (not chosen): power_w = ") for line in lines)
    assert "Model choice" in out
    code, out, err = run("powermodel", "fit", path, "--generations", "30", "--restarts", "1",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["choice"]["chosen"] == "boosting"
    code, out, err = run("powermodel", "fit", path, "--model", "boosting", "--generations", "3")
    assert code == 2 and "--generations" in err and "'boosting'" in err


def test_a_server_model_chooses_between_the_classical_fits() -> None:
    from phasekit.signature.powermodels import fit_fan, fit_leakage
    from phasekit.synth.counters import fan_data, leakage_data, server_power_data

    data = server_power_data(600, seed=3, noise_w=0.5, dynamic="linear").frame
    leak, fan = leakage_data(seed=3), fan_data(seed=3)
    server = {"leakage": fit_leakage(leak["temp_c"], leak["leak_w"]),
              "fan": fit_fan(fan["fan_rpm"], fan["fan_w"])}
    fit = fit_power_model(data, server=server)
    assert set(fit.choice["validation_rmse"]) == {"linear", "pls"}
    assert fit.model.to_dict()["model"] == "server"
    # the dynamic parts are linear in the counters: least squares on every counter
    # validates better than PLS on the counters a PCA keeps
    assert fit.choice["chosen"] == "linear" and fit.model.cpu.to_dict()["model"] == "linear"
    assert fit.test == fit_power_model(data, server=server, model="linear").test
    assert PowerModelFit.from_dict(json.loads(json.dumps(fit.to_dict()))).choice == fit.choice
    with pytest.raises(UsageError, match=r"^generations=5: with a server model, auto chooses"):
        fit_power_model(data, server=server, generations=5)


# --- the average of candidates validation cannot tell apart -----------------------------------
class Offset:
    """A fake fitted model: the truth ``y`` of its rows plus its own fixed error per row."""

    def __init__(self, kind: str, error: np.ndarray, refitted: bool) -> None:
        self.kind, self.error, self.refitted = kind, error, refitted
        self.features = ("x",)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return X["power_w"].to_numpy(float) + self.error[X.index.to_numpy()]

    def to_dict(self) -> dict[str, object]:
        return {"model": self.kind}


def fake_fits(errors: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    def fit_kind(kind, table, target, names, seed, options, server):  # type: ignore[no-untyped-def]
        return Offset(kind, errors[kind], refitted=len(table) == len(errors[kind]))
    return fit_kind


def test_candidates_within_one_standard_error_are_averaged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from phasekit.signature.powermodels import choice

    n = 500
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"x": rng.uniform(0, 1, n), "power_w": rng.uniform(100, 200, n)})
    errors = {"linear": rng.normal(0, 5.0, n),  # clearly worse
              "pls": rng.normal(0, 2.0, n), "boosting": rng.normal(0, 2.0, n)}
    monkeypatch.setattr(choice, "fit_kind", fake_fits(errors))
    picked = choice.choose_model(table, "power_w", ["x"], seed=0, split="time", options={},
                                 candidates=("linear", "pls", "boosting"))
    assert picked.chosen == "average" and picked.members == ("pls", "boosting")
    held = np.arange(n - picked.n_validation, n)
    # the average's validation RMSE is that of the mean of the two errors, below either's
    expected = math.sqrt(np.mean(((errors["pls"][held] + errors["boosting"][held]) / 2) ** 2))
    assert picked.validation["average"] == pytest.approx(expected, rel=1e-12)
    assert picked.validation["average"] < min(picked.validation["pls"],
                                              picked.validation["boosting"])
    # the members refitted on every training row, averaged
    average = picked.models["average"]
    assert all(member.refitted for member in average.members)
    assert np.allclose(average.predict(table), table["power_w"]
                       + (errors["pls"] + errors["boosting"]) / 2)
    assert average.label == "average of PLS and gradient boosting"


def test_the_one_standard_error_rule_against_a_naive_paired_test() -> None:
    from phasekit.signature.powermodels.choice import averaged_kinds

    rng = np.random.default_rng(7)
    y = rng.uniform(0, 100, 80)
    predicted = {k: y + rng.normal(0, s, y.size) for k, s in
                 (("a", 1.0), ("b", 1.05), ("c", 1.6), ("d", 1.0))}
    predicted["d"] = predicted["a"] + 1e-3  # the same errors as a, all but equal
    for best in predicted:
        own = (predicted[best] - y) ** 2
        naive = []
        for kind, p in predicted.items():
            d = [(p[i] - y[i]) ** 2 - own[i] for i in range(y.size)]
            mean = sum(d) / len(d)
            sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (len(d) - 1))
            if kind == best or mean <= sd / math.sqrt(len(d)):
                naive.append(kind)
        got = averaged_kinds(predicted, y, best)
        assert got == (tuple(naive) if len(naive) > 1 else ())
    assert "c" not in averaged_kinds(predicted, y, "a")  # 1.6x the error: told apart
    assert averaged_kinds(predicted, y[:1], "a") == ()  # one row: no standard error


def test_one_clearly_best_candidate_is_not_averaged(monkeypatch: pytest.MonkeyPatch) -> None:
    from phasekit.signature.powermodels import choice

    n = 400
    rng = np.random.default_rng(4)
    table = pd.DataFrame({"x": rng.uniform(0, 1, n), "power_w": rng.uniform(100, 200, n)})
    errors = {"linear": rng.normal(0, 5.0, n), "pls": rng.normal(0, 1.0, n),
              "boosting": rng.normal(0, 3.0, n)}
    monkeypatch.setattr(choice, "fit_kind", fake_fits(errors))
    picked = choice.choose_model(table, "power_w", ["x"], seed=0, split="random", options={},
                                 candidates=("linear", "pls", "boosting"))
    assert picked.chosen == "pls" and picked.members == () and "average" not in picked.validation


def test_an_average_is_stored_read_back_and_said() -> None:
    line = line_table()
    from phasekit.signature.powermodels import LinearPowerModel
    from phasekit.signature.powermodels.average import AveragePowerModel

    members = [fit_boosting(line, "power_w", features=["a", "b"], seed=0),
               LinearPowerModel("linear", ("a", "c"), 40.0, (8e-8, 2.0))]
    average = AveragePowerModel.of(members)
    assert average.features == ("a", "b", "c")
    assert np.allclose(average.predict(line), (members[0].predict(line)
                                               + members[1].predict(line)) / 2)
    back = power_model_from_dict(json.loads(json.dumps(average.to_dict())))
    assert np.array_equal(back.predict(line), average.predict(line))
    assert back.label == "average of gradient boosting and linear"
    assert "gradient boosting of" in back.text and "*a" in back.text
    with pytest.raises(InputError, match="at least two 'members'"):
        power_model_from_dict({**average.to_dict(), "members": [members[0].to_dict()]})
    with pytest.raises(ValueError, match="at least two"):
        AveragePowerModel.of(members[:1])
    choice = {"chosen": "average", "members": ["ge", "boosting"], "n_validation": 120,
              "n_fitted": 480, "split": "time",
              "validation_rmse": {"linear": 5.0, "ge": 3.1, "boosting": 3.2, "average": 2.9}}
    said = choice_line(choice)
    assert said.startswith("model chosen by validation: average of GE and gradient "
                           "boosting, RMSE 2.9 W on the last 120 training rows in time, "
                           "against GE 3.1 W, gradient boosting 3.2 W, linear 5 W")
    assert "validation cannot tell them apart" in said


def test_a_stored_average_is_scored_from_the_command_line(tmp_path: Path) -> None:
    from phasekit.signature.powermodels import LinearPowerModel
    from phasekit.signature.powermodels.average import AveragePowerModel

    line = line_table()
    average = AveragePowerModel.of([fit_boosting(line, "power_w", features=["a", "b"], seed=0),
                                    LinearPowerModel("linear", ("a", "c"), 40.0, (8e-8, 2.0))])
    (tmp_path / "average.json").write_text(json.dumps(average.to_dict()))
    line.to_csv(tmp_path / "line.csv", index=False)
    code, out, err = run("powermodel", "eval", tmp_path / "average.json", tmp_path / "line.csv")
    assert code == 0, err
    rmse = math.sqrt(np.mean((average.predict(line) - line["power_w"]) ** 2))
    assert out.splitlines()[0].startswith(
        f"average of gradient boosting and linear models of power_w: {rmse:.3g} W RMSE")
