"""How the energy results read: each command prints its result's presentation (a headline in
plain words first, then the tables and notes it printed before), the report shows the same,
the library checks the options before any fit, and ``--frequencies`` (the library's
``frequencies``) is the documented name of ``--freqs``."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import run
from phasekit.energy.choose import ChoiceResult
from phasekit.energy.fit import EnergyFitResult, configurations, fit_energy
from phasekit.energy.suggest import SuggestResult, measured_rows, suggest
from phasekit.energy.workflow import fit_then_choose
from phasekit.errors import UsageError
from phasekit.synth.campaigns import seed_campaign

OPTIONS = {"seed": 1, "frequencies": (1.2, 2.2), "cores": (1, 2, 4), "inputs": (1, 2)}


@pytest.fixture(scope="module")
def campaign(seed_campaign_file: Callable[..., Path]) -> Path:
    return seed_campaign_file(**OPTIONS)


@pytest.fixture(scope="module")
def configs() -> object:
    return configurations(seed_campaign(**OPTIONS).campaign)


def _text_and_json(*args: str | Path) -> tuple[list[str], dict]:
    code, out, err = run(*args)
    assert code == 0, err
    code, printed, err = run(*args, "--json")
    assert code == 0, err
    return out.splitlines(), json.loads(printed)


# --- the headline, first ---------------------------------------------------------------------
def test_fit_says_the_model_and_its_error_on_what_it_did_not_see(campaign: Path) -> None:
    lines, data = _text_and_json("energy", "fit", campaign, "--train", "6", "--model", "pt")
    result = EnergyFitResult.from_dict(data)
    assert lines[0] == (f"pt model fitted on 6 of 12 configurations: "
                        f"{result.mpe_holdout:.1f} % mean error on the other 6 (best other: "
                        f"extended {result.other_models['extended']['mpe_holdout']:.1f} %)")
    assert lines[1].startswith(f"Energy model fit of {campaign.name}: 6 of 12")
    assert lines[0] == result.present(campaign.name).headline


def test_a_selected_model_says_why_it_was_chosen() -> None:
    from phasekit.energy.fit import SELECTION_MIN

    whole = configurations(seed_campaign(seed=2).campaign)
    result = fit_energy(whole, n_train=SELECTION_MIN, baselines=(), compare=False)
    assert len(result.selection) == 3
    assert result.present().headline.endswith(
        "; chosen because it best predicts the configurations left out in turn "
        "(cross-validation)")
    alone = fit_energy(whole, model="extended", n_train=SELECTION_MIN, baselines=())
    assert "cross-validation" not in alone.present().headline


def test_choose_says_where_each_input_uses_the_least_energy(campaign: Path) -> None:
    lines, data = _text_and_json("energy", "choose", campaign)
    result = ChoiceResult.from_dict(data)
    places = {(c.best.frequency_ghz, c.best.cores) for c in result.choices}
    sure = sum(c.uncertainty.sure for c in result.choices)
    assert lines[0].startswith("lowest energy: ")
    for f, p in places:
        assert f"{f:g} GHz x {p} cores for input" in lines[0]
    assert lines[0].endswith(f"(2 inputs; {sure} of 2 sure; on average "
                             f"{result.mean_regret:.1f} % above the lowest reading, "
                             f"{result.mean_regret_denoised:.1f} % with the noise smoothed "
                             "out)")
    assert lines[1].startswith(f"Minimum-energy configurations for {campaign.name} (")
    # one input: how much it saves against ondemand at the best core count
    lines, data = _text_and_json("energy", "choose", campaign, "--input", "2",
                                 "--no-uncertainty")
    choice = ChoiceResult.from_dict(data).choices[0]
    assert lines[0] == (f"lowest energy for input 2: {choice.best.frequency_ghz:g} GHz x "
                        f"{choice.best.cores} cores, {choice.savings_measured['best']:.1f} % "
                        "less energy than ondemand at the best core count (saving measured; "
                        f"{choice.regret:.1f} % above the lowest reading, "
                        f"{choice.regret_denoised:.1f} % with the noise smoothed out)")


def test_an_unsure_choice_says_why_in_its_headline(campaign: Path) -> None:
    """Where a choice is not sure, the headline names the larger error against the
    tolerance: the model's on configurations it did not see, or a single reading's."""
    _, data = _text_and_json("energy", "choose", campaign)
    for choice in data["choices"]:
        choice["uncertainty"].update(loss_probability=0.9, model_error=0.31,
                                     reading_error=0.02, tolerance=5.0)
    headline = ChoiceResult.from_dict(data).present().headline
    assert "0 of 2 sure: the model misses configurations it did not see by 31 % (1 sigma), " \
           "more than the 5 % a choice may lose" in headline
    for choice in data["choices"]:
        choice["uncertainty"].update(model_error=0.04, reading_error=0.12)
    headline = ChoiceResult.from_dict(data).present().headline
    assert "0 of 2 sure: measured energies are uncertain by 12 % (1 sigma)" in headline
    for choice in data["choices"]:
        choice["uncertainty"].update(loss_probability=0.0)
    assert "2 of 2 sure;" in ChoiceResult.from_dict(data).present().headline


def test_how_sure_says_when_a_measured_energy_is_a_neighbourhoods_median(
        campaign: Path) -> None:
    """The error of a measured energy counted with its neighbours' median is smaller than a
    single reading's: the table's title gives both, so it agrees with the noise line."""
    _, data = _text_and_json("energy", "choose", campaign)
    data["noise"] = {"relative": 0.09, "n_used": 20, "step_j": None, "step_evidence": 0.0}
    for choice in data["choices"]:
        choice["uncertainty"].update(reading_error=0.038)
    titles = [v.title for v in ChoiceResult.from_dict(data).present().views]
    assert any("counted with its neighbours' median (3.8 %; a single reading's 9.0 %)" in t
               for t in titles), titles
    for choice in data["choices"]:
        choice["uncertainty"].update(reading_error=0.09)
    titles = [v.title for v in ChoiceResult.from_dict(data).present().views]
    assert any("and a measured energy's (9.0 %)" in t for t in titles), titles


def test_suggest_says_what_to_measure_next(campaign: Path) -> None:
    lines, data = _text_and_json("energy", "suggest", campaign, "--train", "6", "-k", "2")
    result = SuggestResult.from_dict(data)
    first = result.suggestions[0]
    assert lines[0].startswith(f"measure next: 2 configurations, first input "
                               f"{first.input_label} at {first.frequency_ghz:g} GHz x "
                               f"{first.cores} cores")
    assert lines[0].endswith(f"(6 measured, {result.n_candidates} not yet)")
    assert lines[1].startswith(f"Next 2 configurations to measure for {campaign.name} (")
    lines, _ = _text_and_json("energy", "suggest", campaign)
    assert lines[0] == ("nothing to measure next: every configuration of the grid within the "
                        "limits is measured (12 measured)")


def test_plot_says_the_efficiency_and_the_least_energy(campaign: Path) -> None:
    lines, data = _text_and_json("energy", "plot", campaign)
    (table,) = data["efficiency"]
    last = [r["efficiency"] for r in table["rows"] if r["threads"] == 4]
    same = f"{min(last):.2f}" == f"{max(last):.2f}"  # this campaign's inputs: 0.92 both
    assert lines[0].startswith(f"program efficiency on 4 threads: {min(last):.2f} "
                               + ("for every input" if same else "(input "))
    configs = data["configurations"]
    for label in ("1", "2"):
        least = min((c for c in configs if c["input"] == label), key=lambda c: c["energy_j"])
        assert f"{least['frequency_ghz']:g} GHz x {least['cores']} cores for input" in lines[0]
    assert "; least energy measured: " in lines[0]
    assert lines[1].startswith("Efficiency (speedup / threads) of program at 2.2 GHz")
    assert lines[-1] == "no figure written (give --plot FILE.png, .svg or .pdf)"


def test_a_result_read_back_reads_the_same(campaign: Path, configs: object) -> None:
    """The report and ``pk.load`` present a saved result as the command printed it."""
    fit = fit_energy(configs, model="pt", n_train=6)
    choice = fit_then_choose(configs, model="pt", train=6).result
    found = suggest(measured_rows(configs, train=6)[0], k=2, reference=configs)
    for result in (fit, choice, found):
        again = type(result).from_dict(json.loads(json.dumps(result.saved_dict())))
        assert again.present("c.json") == result.present("c.json")
        assert result.present().headline == result.present("c.json").headline
    assert choice.present().views[0].title.startswith("Minimum-energy configurations (pt")


def test_the_report_shows_the_presentation(campaign: Path, tmp_path: Path) -> None:
    from phasekit.report import ReportItem, build_report

    _, fit = _text_and_json("energy", "fit", campaign, "--train", "6")
    _, choice = _text_and_json("energy", "choose", campaign, "--no-uncertainty")
    page = build_report([ReportItem("fit.json", fit), ReportItem("choice.json", choice)])
    for data, kind in ((fit, EnergyFitResult), (choice, ChoiceResult)):
        shown = kind.from_dict(data).present()
        assert f'<p class="headline">{html.escape(shown.headline)}</p>' in page
        for v in shown.views:
            assert f"<caption>{html.escape(v.title)}</caption>" in page
    assert "Pareto" in page and page.count("<svg ") >= 2


# --- the library checks the options, before any fit ------------------------------------------
@pytest.fixture
def no_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was fitted")

    for fitting in ("phasekit.energy.fit.fit_energy", "phasekit.energy.suggest.fit_model",
                    "phasekit.energy.choose.fit_model"):
        monkeypatch.setattr(fitting, never)


@pytest.mark.parametrize(("call", "parameter", "message", "command_line"), [
    (lambda c: fit_then_choose(c, frequencies=(1.2, -2.0)), "frequencies",
     "frequencies=(1.2, -2.0): expected positive frequencies in GHz",
     "--frequencies 1.2,-2: expected positive frequencies in GHz"),
    (lambda c: fit_then_choose(c, cores=(0, 2)), "cores", "cores=(0, 2): expected core counts",
     "--cores 0,2: expected core counts"),
    (lambda c: fit_then_choose(c, min_frequency_ghz=9.0), "min_frequency_ghz",
     "min_frequency_ghz=9.0: the limits leave no frequency",
     "--min-frequency 9: the limits leave no frequency"),
    (lambda c: suggest(c, k=0), "k", "k=0: expected at least 1", "-k 0: expected at least 1"),
    (lambda c: suggest(c, tolerance=-1.0), "tolerance", "tolerance=-1.0: expected a non-neg",
     "--tolerance -1: expected a non-negative"),
    (lambda c: suggest(c, max_cores=0), "max_cores", "max_cores=0: expected at least 1",
     "--max-cores 0: expected at least 1"),
    (lambda c: suggest(c, frequencies_ghz=(1.2, 9.0), max_frequency_ghz=1.0),
     "max_frequency_ghz", "max_frequency_ghz=1.0: the limits leave",
     "--max-frequency 1: the limits leave"),
], ids=["frequencies", "cores", "min_frequency_ghz", "k", "tolerance", "max_cores",
        "max_frequency_ghz"])
def test_the_library_checks_the_options_before_the_fit(
        call: Callable[[object], object], parameter: str, message: str, command_line: str,
        configs: object, no_fit: None) -> None:
    with pytest.raises(UsageError) as caught:
        call(configs)
    assert caught.value.parameter == parameter
    assert str(caught.value).startswith(message), str(caught.value)
    assert caught.value.command_line().startswith(command_line)


def test_the_model_and_design_are_checked_even_with_a_fit(configs: object) -> None:
    fitted = fit_energy(configs, model="pt")
    for keyword, value in (("design", "sobol"), ("model", "cubic")):
        with pytest.raises(UsageError) as caught:
            fit_then_choose(configs, fit=fitted, **{keyword: value})
        assert caught.value.parameter == keyword
    with pytest.raises(UsageError) as caught:  # without n_train too
        fit_energy(configs, design="sobol")
    assert caught.value.parameter == "design"


def test_suggest_refuses_frequencies_the_campaign_did_not_control(no_fit: None) -> None:
    import pandas as pd

    from phasekit.energy import api

    uncontrolled = pd.DataFrame({"frequency_ghz": float("nan"), "cores": [1, 2, 4, 1, 2, 4],
                                 "input": [1.0] * 3 + [2.0] * 3, "energy_j": 10.0,
                                 "time_s": 1.0, "input_label": ["1"] * 3 + ["2"] * 3})
    with pytest.raises(UsageError, match="did not control the frequency") as caught:
        suggest(uncontrolled, frequencies_ghz=(1.2, 2.0))
    assert caught.value.parameter == "frequencies_ghz"
    with pytest.raises(UsageError) as caught:  # the verb's keyword
        api.suggest(uncontrolled, frequencies=(1.2, 2.0))
    assert caught.value.parameter == "frequencies"
    assert caught.value.command_line().startswith("--frequencies: the campaign did not")


def test_measured_rows(configs: object, tmp_path: Path) -> None:
    fitted = fit_energy(configs, n_train=6, model="pt")
    path = fitted.save(tmp_path / "fit.json")
    rows, again = measured_rows(configs, fit=path)
    assert len(rows) == 6 and again is not None and again.to_dict() == fitted.to_dict()
    assert len(measured_rows(configs, train=5)[0]) == 5
    every, none = measured_rows(configs)
    assert none is None and every.to_frame().equals(configs)  # all of them, as NumPy columns
    with pytest.raises(UsageError) as caught:
        measured_rows(configs, train=6, fit=path)
    assert caught.value.command_line() == "--train and --fit: give one of them"
    with pytest.raises(UsageError, match=r"^train=12: expected 1 to 11"):
        measured_rows(configs, train=12)
    first = (configs["frequency_ghz"] == rows["frequency_ghz"][0]) & (
        configs["cores"] == rows["cores"][0]) & (configs["input"] == rows["input"][0])
    lacking = configs[~first]  # one training configuration not measured
    with pytest.raises(UsageError, match=r"^fit='.*fit\.json': its training configurations "
                                         r"are not all in t\.csv") as caught:
        measured_rows(lacking, fit=path, source="t.csv")
    assert caught.value.command_line().startswith(f"--fit {path}: its training")


# --- one name per idea: --frequencies, --min-frequency, --max-frequency ------------------------
def test_frequencies_and_its_old_name_freqs(campaign: Path) -> None:
    common = ("energy", "choose", campaign, "--no-uncertainty", "--json")
    new = _text_and_json(*common[:-1], "--frequencies", "1.2,1.6,2.2", "--min-frequency",
                         "1.5", "--max-frequency", "2.2")[1]
    old = _text_and_json(*common[:-1], "--freqs", "1.2,1.6,2.2", "--min-freq", "1.5",
                         "--max-freq", "2.2")[1]
    assert new == old and new["grid"]["frequencies_ghz"] == [1.2, 1.6, 2.2]
    assert new["limits"]["min_frequency_ghz"] == 1.5
    code, out, err = run(*common, "--frequencies", "1.2", "--freqs", "1.2")
    assert code == 2 and out == "" and "--frequencies and --freqs: give one of them" in err
    code, _, err = run(*common, "--freqs", "1.2,-2")  # said with the flag typed
    assert code == 2 and "--freqs 1.2,-2: expected positive frequencies" in err
    code, _, err = run(*common, "--min-freq", "9")
    assert code == 2 and "--min-freq 9: the limits leave no frequency" in err
    for verb in ("choose", "suggest"):
        code, text, _ = run("energy", verb, "--help")
        assert code == 0 and "--frequencies" in text and "--min-frequency" in text
        assert "--freqs" not in text and "--min-freq " not in text
