"""The options of ``pk.energy.fit``, ``choose`` and ``suggest``: one frozen dataclass each
(:class:`FitOptions`, :class:`ChooseOptions`, :class:`SuggestOptions`), given as the object or
as its fields' keywords, never both; every rule a UsageError naming the field, checked
before the campaign is read; the command line says the flag."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import run

import phasekit as pk
from phasekit.energy import ChooseOptions, FitOptions, SuggestOptions, api, workflow
from phasekit.energy.options import GridOptions
from phasekit.errors import UsageError


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from phasekit.campaign import write_campaign
    from phasekit.synth.campaigns import seed_campaign

    path = tmp_path_factory.mktemp("campaign") / "campaign.json"
    write_campaign(seed_campaign(seed=0).campaign, path)
    return path


def _without_timings(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if k != "fit_time_s"}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


#: Every keyword each verb took before its options were a dataclass.
KEYWORDS = {
    FitOptions: {"model", "train", "design", "seed", "baselines", "compare", "starts",
                 "use_time", "loss"},
    ChooseOptions: {"frequencies", "cores", "max_time_s", "max_cores", "min_frequency_ghz",
                    "max_frequency_ghz", "user_cores", "model", "train", "design", "seed",
                    "uncertainty", "tolerance"},
    SuggestOptions: {"k", "frequencies", "cores", "model", "seed", "train", "design",
                     "max_time_s", "max_cores", "min_frequency_ghz", "max_frequency_ghz",
                     "tolerance"},
}
VERBS: list[tuple[Callable[..., Any], type]] = [
    (api.fit, FitOptions), (api.choose, ChooseOptions), (api.suggest, SuggestOptions),
    (api.choose_configurations, ChooseOptions), (workflow.fit_then_choose, ChooseOptions),
    (api.suggest_configurations, SuggestOptions)]


@pytest.mark.parametrize(("verb", "kind"), VERBS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_keywords_are_the_fields_declared_once(verb: Callable[..., Any], kind: type
                                                   ) -> None:
    signature = inspect.signature(verb).parameters
    names = {f.name for f in fields(kind)}
    assert names == KEYWORDS[kind]
    assert not names & set(signature)  # no second list of names and defaults
    assert signature["keywords"].kind is inspect.Parameter.VAR_KEYWORD
    assert "options" in signature and "n_train" not in names  # one name: train


def test_options_are_values() -> None:
    options = ChooseOptions(frequencies=[1.2, 2], cores=[1, 2.0], max_cores=2)
    assert options.frequencies == (1.2, 2.0) and options.cores == (1, 2)
    assert options == ChooseOptions(frequencies=(1.2, 2.0), cores=(1, 2), max_cores=2)
    assert hash(options) == hash(replace(options))
    assert FitOptions(baselines="knn").baselines == ("knn",)
    assert issubclass(ChooseOptions, GridOptions) and issubclass(SuggestOptions, GridOptions)
    with pytest.raises(FrozenInstanceError):
        options.max_cores = 4  # type: ignore[misc]
    assert SuggestOptions().to_dict()["k"] == 5 and ChooseOptions().tolerance == 5.0
    assert SuggestOptions().tolerance == 2.0


@pytest.mark.parametrize(("verb", "kind", "keywords"), [
    (pk.energy.fit, FitOptions, {"train": 12, "seed": 1, "design": "random",
                                 "compare": False}),
    (pk.energy.choose, ChooseOptions, {"train": 12, "max_cores": 8, "uncertainty": False,
                                       "frequencies": (1.2, 1.6, 2.2)}),
    (pk.energy.suggest, SuggestOptions, {"k": 3, "train": 12, "max_cores": 8,
                                         "tolerance": 1.0}),
], ids=["fit", "choose", "suggest"])
def test_the_options_object_gives_the_keywords_result(verb: Callable[..., Any], kind: type,
                                                       keywords: dict[str, Any],
                                                       campaign: Path) -> None:
    by_keywords = verb(campaign, **keywords).saved_dict()
    by_options = verb(campaign, options=kind(**keywords)).saved_dict()
    assert _without_timings(by_keywords) == _without_timings(by_options)


def test_the_result_file_is_the_command_lines(campaign: Path, tmp_path: Path) -> None:
    saved = tmp_path / "choice.json"
    code, _, err = run("energy", "choose", campaign, "--train", "12", "--max-cores", "8",
                       "--no-uncertainty", "--min-frequency", "1.4", "-o", saved)
    assert code == 0, err
    options = ChooseOptions(train=12, max_cores=8, uncertainty=False, min_frequency_ghz=1.4)
    python = json.loads(json.dumps(pk.energy.choose(campaign, options=options).saved_dict()))
    assert python == json.loads(saved.read_text())
    assert python["limits"] == {"max_time_s": None, "max_cores": 8, "min_frequency_ghz": 1.4,
                                "max_frequency_ghz": None}


@pytest.mark.parametrize(("verb", "kind"), VERBS[:3], ids=["fit", "choose", "suggest"])
def test_options_and_keywords_together_or_a_wrong_kind(verb: Callable[..., Any], kind: type,
                                                      tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"  # the options are checked before the file is read
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords seed, not") \
            as caught:
        verb(missing, options=kind(seed=1), seed=1)
    assert caught.value.parameter == "options"
    other = FitOptions if kind is not FitOptions else ChooseOptions
    with pytest.raises(UsageError, match=rf"expected a {kind.__name__}, got {other.__name__}"):
        verb(missing, options=other())
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'n_train'"):
        verb(missing, n_train=10)


@pytest.mark.parametrize(("kind", "field", "value"), [
    (FitOptions, "model", "cubic"),
    (FitOptions, "design", "sobol"),
    (FitOptions, "train", 0),
    (FitOptions, "baselines", ("svr", "forest")),
    (FitOptions, "starts", 0),
    (FitOptions, "loss", "l1"),
    (ChooseOptions, "model", "best"),
    (ChooseOptions, "design", "sobol"),
    (ChooseOptions, "train", -1),
    (ChooseOptions, "frequencies", ()),
    (ChooseOptions, "frequencies", (1.2, -2.0)),
    (ChooseOptions, "frequencies", "fast"),
    (ChooseOptions, "cores", (0, 2)),
    (ChooseOptions, "cores", ()),
    (ChooseOptions, "max_time_s", 0.0),
    (ChooseOptions, "max_cores", 0),
    (ChooseOptions, "min_frequency_ghz", -1.0),
    (ChooseOptions, "max_frequency_ghz", math.nan),
    (ChooseOptions, "tolerance", -1.0),
    (ChooseOptions, "tolerance", None),
    (SuggestOptions, "k", 0),
    (SuggestOptions, "max_cores", 0),
])
def test_each_rule_names_its_field(kind: type, field: str, value: Any) -> None:
    with pytest.raises(UsageError) as caught:
        kind(**{field: value})
    assert caught.value.parameter == field
    assert str(caught.value).startswith(f"{field}=")
    assert "--" not in str(caught.value)


def test_the_automatic_model_fits_each_candidate_with_its_own_loss() -> None:
    with pytest.raises(UsageError, match="its own loss") as caught:
        FitOptions(model="auto", loss="squares")
    assert caught.value.parameter == "loss"
    assert FitOptions(model="auto").loss is None and FitOptions(model="seed").model == "seed"


@pytest.mark.parametrize(("keywords", "command_line"), [
    ({"k": 0}, "-k 0: expected at least 1"),
    ({"max_time_s": -1.0}, "--max-time -1: expected a positive time"),
    ({"min_frequency_ghz": 0.0}, "--min-frequency 0: expected a positive frequency"),
    ({"max_frequency_ghz": -2.0}, "--max-frequency -2: expected a positive frequency"),
    ({"cores": (0,)}, "--cores 0: expected core counts of at least 1"),
])
def test_a_parameter_named_otherwise_on_the_command_line_says_its_flag(
        keywords: dict[str, Any], command_line: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        pk.energy.suggest(tmp_path / "missing.json", **keywords)
    assert caught.value.command_line().startswith(command_line)


@pytest.mark.parametrize(("args", "expected"), [
    (("fit", "--train", "10", "--baselines", "svr,forest"),
     "--baselines svr,forest: unknown baseline(s) forest; expected some of svr, mlp, knn"),
    (("choose", "--frequencies", "1.2,0"), "--frequencies 1.2,0: expected positive frequencies"),
    (("suggest", "--min-frequency", "-1"), "--min-frequency -1: expected a positive frequency"),
])
def test_the_command_line_prints_the_flag(args: tuple[str, ...], expected: str,
                                          campaign: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was fitted")

    for fitting in ("phasekit.energy.fit.fit_energy", "phasekit.energy.suggest.fit_model"):
        monkeypatch.setattr(fitting, never)
    code, out, err = run("energy", args[0], campaign, *args[1:])
    assert code == 2 and out == ""
    assert err.startswith(f"phasekit: error: {expected}")
    assert len(err.strip().splitlines()) == 1
