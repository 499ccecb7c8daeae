"""PowerModelOptions: the tuning parameters of a power-model fit, declared once (each
model's own fields among them), given as one object or as keywords, checked when made."""

from __future__ import annotations

import inspect
import json
from dataclasses import FrozenInstanceError, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.helpers import run

import phasekit as pk
from phasekit.errors import UsageError
from phasekit.signature.powermodels import (
    PowerModelOptions,
    fit_ge,
    fit_linear,
    fit_pls,
    fit_power_model,
)
from phasekit.signature.powermodels.fit import MODEL_FIELDS

#: The keys of a fit's JSON (``phasekit powermodel fit --json``): those of version 1 and
#: version 2's ``choice`` and ``formula`` (the choice by validation, GE's formula beside).
FIT_KEYS = {"kind", "version", "model", "method", "target", "features", "excluded",
            "expression", "n_train", "n_test", "train", "test", "mean_baseline", "seed",
            "split", "time_column", "test_fraction", "fit_time_s", "source", "breakdown",
            "n_dropped", "missing", "choice", "formula"}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    counters = rng.uniform(1.0, 2.0, (160, 3))
    power = 50 + 10 * counters[:, 0] + 3 * counters[:, 1] + rng.normal(0, 0.2, 160)
    return pd.DataFrame({"C1": counters[:, 0], "C2": counters[:, 1], "C3": counters[:, 2],
                         "power_w": power})


def _without_time(fit: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(fit.to_dict()))
    data.pop("fit_time_s")
    return data


def test_the_fields_are_the_keywords_of_each_models_fit() -> None:
    """One name per idea: a model's fields are its fit's keywords (no second list)."""

    def keywords(func: Any, *left_out: str) -> set[str]:
        names = inspect.signature(func).parameters
        return {n for n, p in names.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
                and n not in ("features", "seed", *left_out)}

    assert set(MODEL_FIELDS["linear"]) == keywords(fit_linear)
    assert set(MODEL_FIELDS["pls"]) == keywords(fit_pls)
    assert set(MODEL_FIELDS["ge"]) == keywords(fit_ge, "progress", "validation_split")
    common = {"model", "seed", "test_fraction", "split"}
    taken = {name for names in MODEL_FIELDS.values() for name in names}
    assert {f.name for f in fields(PowerModelOptions)} == common | taken
    signature = inspect.signature(fit_power_model).parameters
    assert not (common | taken) & set(signature)
    assert signature["keywords"].kind is inspect.Parameter.VAR_KEYWORD
    with pytest.raises(FrozenInstanceError):
        PowerModelOptions().seed = 1  # type: ignore[misc]


@pytest.mark.parametrize("chosen", [dict(model="pls", seed=3, n_components=1, folds=3),
                                    dict(model="linear", split="random", seed=2,
                                         test_fraction=0.25, select="none")])
def test_options_give_the_keywords_result(frame: pd.DataFrame, chosen: dict[str, Any]) -> None:
    by_keywords = fit_power_model(frame, **chosen)
    by_options = fit_power_model(frame, options=PowerModelOptions(**chosen))
    assert _without_time(by_options) == _without_time(by_keywords)
    assert set(by_options.to_dict()) == FIT_KEYS
    for name in ("seed", "split", "test_fraction"):
        assert getattr(by_options, name) == getattr(PowerModelOptions(**chosen), name)
    front_door = pk.powermodel.fit(frame, options=PowerModelOptions(**chosen))
    assert _without_time(front_door) == _without_time(by_keywords)


def test_options_and_keywords_are_never_both(frame: pd.DataFrame) -> None:
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords seed, not") \
            as both:
        fit_power_model(frame, options=PowerModelOptions(seed=1), seed=1)
    assert both.value.parameter == "options"
    with pytest.raises(UsageError) as both:
        pk.powermodel.fit(frame, options=PowerModelOptions(), model="pls")
    assert both.value.parameter == "options"
    with pytest.raises(TypeError, match=r"fit_power_model\(\) got an unexpected keyword "
                                        r"argument 'generation'"):
        fit_power_model(frame, model="ge", generation=5)
    with pytest.raises(TypeError, match="'validation_split'"):  # it follows split
        fit_power_model(frame, model="ge", validation_split="random")


#: (keywords, the parameter at fault): every rule of PowerModelOptions.
BAD: list[tuple[dict[str, Any], str]] = [
    (dict(model="svm"), "model"),
    (dict(split="sideways"), "split"),
    (dict(test_fraction=1.0), "test_fraction"),
    (dict(test_fraction=-0.1), "test_fraction"),
    (dict(select="lasso"), "select"),
    (dict(max_features=0), "max_features"),
    (dict(model="pls", n_components=0), "n_components"),
    (dict(model="pls", folds=1), "folds"),
    *((dict(model="ge", **{name: 0}), name)
      for name in ("population", "codons", "generations", "tournament", "fit_samples",
                   "max_nodes", "restarts", "candidates")),
    *((dict(model="ge", **{name: -1}), name) for name in ("wraps", "patience", "elite")),
    (dict(model="ge", margin=-0.1), "margin"),
    (dict(model="ge", crossover=1.5), "crossover"),
    (dict(model="ge", mutation=-0.1), "mutation"),
    (dict(model="ge", validation=1.0), "validation"),
    (dict(model="ge", population=10, elite=10), "elite"),
    (dict(model="ge", grammar="bogus"), "grammar"),
    (dict(model="ge", grammar="<e> ::= <undefined>"), "grammar"),
    # a field of another model
    (dict(model="linear", n_components=2), "n_components"),
    (dict(model="linear", folds=3), "folds"),
    (dict(model="pls", generations=5), "generations"),
    (dict(model="ge", select="pca"), "select"),
    (dict(model="ge", max_features=2), "max_features"),
]


@pytest.mark.parametrize(("keywords", "parameter"), BAD,
                         ids=[f"{p}={k.get(p)!r}" for k, p in BAD])
def test_each_rule_names_its_field(keywords: dict[str, Any], parameter: str) -> None:
    with pytest.raises(UsageError) as info:
        PowerModelOptions(**keywords)
    assert info.value.parameter == parameter
    assert info.value.value == keywords[parameter]
    assert str(info.value).startswith(f"{parameter}={keywords[parameter]!r}: ")


def test_a_field_of_another_model_names_both_models(frame: pd.DataFrame) -> None:
    with pytest.raises(UsageError, match=r"^n_components=2: only model 'pls' or 'auto' takes "
                                         r"it, not model 'linear'$"):
        fit_power_model(frame, model="linear", n_components=2)
    with pytest.raises(UsageError, match=r"^max_features=2: only model 'linear', 'pls' or "
                                         r"'auto' takes it, not model 'ge'$"):
        fit_power_model(frame, model="ge", max_features=2)
    # a field of the model is used: the fewest counters that a forward selection keeps
    assert len(fit_power_model(frame, model="linear", max_features=1).model.features) == 1


@pytest.mark.parametrize(("args", "typed"), [
    (("--generations", "0", "--model", "ge"), "--generations 0: expected a positive number"),
    (("--generations", "50", "--model", "linear"), "--generations 50: only model 'ge' or "
                                                   "'auto' takes it, not model 'linear'"),
    (("--test-fraction", "1.5"), "--test-fraction 1.5: expected 0 <= fraction < 1"),
])
def test_the_command_line_names_the_flag(frame: pd.DataFrame, tmp_path: Path,
                                         args: tuple[str, ...], typed: str) -> None:
    table = tmp_path / "counters.csv"
    frame.to_csv(table, index=False)
    code, out, err = run("powermodel", "fit", table, *args)
    assert code == 2 and out == "", err
    assert err == f"phasekit: error: {typed}\n"
