"""One name for one idea: the renamed options and commands, their old spellings
(hidden aliases giving the same result), ``--debug`` after the verb, and the library's
keyword-only options with :class:`~phasekit.periodicity.PeriodicityOptions`."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import numpy as np
import pytest

from helpers import run
from phasekit.io import write_profile
from phasekit.profile import Profile
from phasekit.synth.power import generate_power_profiles

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three phases of 30 s (levels of two counters per cycle), sampled every second."""
    rng = np.random.default_rng(0)
    levels = np.repeat([[2.0, 0.01], [0.5, 0.05], [2.0, 0.01]], 30, axis=0)
    values = levels * (1 + 0.05 * rng.standard_normal(levels.shape))
    profile = Profile(values=np.hstack([np.full((90, 1), 1e9), values * 1e9]), period=1.0,
                      metrics=("cycles", "instructions", "cache_misses"))
    path = tmp_path_factory.mktemp("names") / "steps.csv"
    write_profile(profile, path)
    return path


def _json(*args: str | Path) -> object:
    code, out, err = run(*args)
    assert code == 0, err
    return json.loads(out)


def _help(*verb: str) -> str:
    code, out, _ = run(*verb, "--help")
    assert code == 0
    return out


# --- --debug before and after the verb ---------------------------------------------------------
def test_debug_after_the_verb_shows_the_traceback(steps: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("phasekit.phases.api.phases", broken)  # the verb it runs
    code, _, err = run("phases", steps)
    assert code == 1 and "Traceback" not in err
    for args in (("--debug", "phases", steps), ("phases", steps, "--debug"),
                 ("phases", "--debug", steps)):
        code, _, err = run(*args)
        assert code == 1 and "Traceback" in err and "boom" in err, args


def test_verbose_after_the_verb_logs_as_before_it(steps: Path) -> None:
    """``-v`` after the verb (or both sides) gives the stage log lines ``phasekit -v VERB``
    gives; ``-vv`` after it turns on debug logging; without it there are none."""
    import logging

    def stages(*args: object) -> list[str]:
        code, _, err = run(*args)
        assert code == 0, err
        return [line.rsplit(" (", 1)[0] for line in err.splitlines()   # without the times
                if line.startswith("phasekit: info:")]

    before = stages("-v", "phases", steps)
    assert before and stages("phases", steps, "-v") == before
    assert stages("phases", "--verbose", steps) == before
    assert stages("phases", steps) == []
    run("phases", steps, "-vv")
    assert logging.getLogger("phasekit").getEffectiveLevel() == logging.DEBUG
    run("-v", "phases", steps, "-v")
    assert logging.getLogger("phasekit").getEffectiveLevel() == logging.DEBUG


@pytest.mark.parametrize("verb", [["sources"], ["energy", "plot"], ["campaign", "import"],
                                  ["powermodel", "eval"], ["signature", "run"]])
def test_every_command_takes_debug(verb: list[str]) -> None:
    code, out, _ = run(*verb, "--debug", "-v", "--help")
    assert code == 0 and "Usage:" in out
    assert "--debug" not in out and "--verbose" not in out  # hidden: documented globally


def test_debug_after_double_dash_belongs_to_the_command(tmp_path: Path) -> None:
    """``record -- COMMAND --debug`` passes --debug to COMMAND (click stops at --)."""
    script = "import sys; sys.exit(3 if '--debug' in sys.argv else 0)"
    code, _, err = run("record", "--sources", "proc", "--interval", "50ms", "--json", "-o",
                       tmp_path / "r.parquet", "--", sys.executable, "-c", script, "--debug")
    assert code == 3, err


# --- --metric everywhere -----------------------------------------------------------------------
def test_phases_metric_and_its_old_name_sensor(steps: Path) -> None:
    new = _json("phases", steps, "--metric", "instructions", "-m", "cache_misses", "--json")
    old = _json("phases", steps, "--sensor", "instructions", "--sensor", "cache_misses",
                "--json")
    assert new == old
    assert new["sensors"] == ["instructions", "cache_misses"]  # type: ignore[index]
    text = _help("phases")
    assert "--metric" in text and "--sensor" not in text


def test_watch_metric_and_its_old_name_sensor(steps: Path) -> None:
    new = run("watch", steps, "--metric", "instructions", "--metric", "cache_misses", "--json")
    old = run("watch", steps, "--sensor", "instructions", "--sensor", "cache_misses", "--json")
    assert new[0] == 0 and new == old
    text = _help("watch")
    assert "--metric" in text and "--sensor" not in text


@pytest.mark.slow
def test_record_metric_repeated_comma_or_old_name(tmp_path: Path) -> None:
    wanted = ["cpu_user_s", "cpu_idle_s"]
    summaries = []
    for k, args in enumerate((["--metric", "cpu_user_s", "--metric", "cpu_idle_s"],
                              ["-m", "cpu_user_s,cpu_idle_s"],
                              ["--metrics", "cpu_user_s,cpu_idle_s"])):
        summaries.append(_json("record", "--sources", "proc", "--interval", "50ms",
                               "--duration", "0.3s", "--json", "-o", tmp_path / f"{k}.parquet",
                               *args))
    assert all(sorted(s["metrics"]) == sorted(wanted) for s in summaries)  # type: ignore[index]
    code, _, err = run("record", "--sources", "proc", "--duration", "0.2s", "-o",
                       tmp_path / "x.parquet", "--metric", "nope")
    assert code == 2 and "--metric: no source here provides nope" in err
    text = _help("record")
    assert "--metric" in text and "--metrics" not in text


# --- -o is the JSON result, --plot the figure ----------------------------------------------------
@pytest.fixture(scope="module")
def campaign(seed_campaign_file: Callable[..., Path]) -> Path:
    return seed_campaign_file(seed=1, frequencies=(1.2, 2.2), cores=(1, 2, 4), inputs=(1, 2))


@pytest.mark.slow
def test_energy_plot_plot_is_the_figure_and_output_the_json(campaign: Path,
                                                            tmp_path: Path) -> None:
    figure, old_figure, result = tmp_path / "new.png", tmp_path / "old.png", tmp_path / "r.json"
    printed = _json("energy", "plot", campaign, "--plot", figure, "-o", result, "--json")
    assert json.loads(result.read_text()) == printed
    assert printed["figure"] == str(figure)  # type: ignore[index]
    assert figure.read_bytes()[:8] == PNG
    old = _json("energy", "plot", campaign, "-o", old_figure, "--json")  # the old spelling
    assert old_figure.read_bytes()[:8] == PNG
    assert {**old, "figure": None} == {**printed, "figure": None}  # type: ignore[dict-item]
    code, out, err = run("energy", "plot", campaign, "--plot", figure, "-o", old_figure)
    assert code == 2 and out == "" and "--plot" in err
    code, out, _ = run("energy", "plot", campaign, "--plot", figure)
    assert code == 0 and f"wrote figure: {figure}" in out


def test_energy_choose_input_repeated_or_comma_separated(campaign: Path) -> None:
    common = ("energy", "choose", campaign, "--no-uncertainty", "--json")
    repeated = _json(*common, "--input", "1", "--input", "2")
    listed = _json(*common, "--input", "1,2")
    assert repeated == listed


# --- energy phasediv (was energy phases) ---------------------------------------------------------
def test_energy_phasediv_and_its_old_name(tmp_path: Path) -> None:
    profiles, _ = generate_power_profiles(cores=[1, 8], freqs_ghz=[1.2, 2.4], seed=4)
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(profiles.to_dict()))
    args = (path, "--max-phases", "3", "--grid", "50", "--json")
    assert _json("energy", "phasediv", *args) == _json("energy", "phases", *args)
    text = _help("energy")
    assert "phasediv" in text and " phases " not in text


# --- the library: keyword-only options, PeriodicityOptions ---------------------------------------
def _keyword_only_after(func: object, n_data: int) -> None:
    params = list(inspect.signature(func).parameters.values())  # type: ignore[arg-type]
    assert all(p.kind is not inspect.Parameter.KEYWORD_ONLY for p in params[:n_data])
    assert all(p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
               for p in params[n_data:]), func


def test_public_analyses_take_their_options_as_keywords() -> None:
    from phasekit.energy.fit import fit_energy
    from phasekit.energy.phasediv import divide_phases
    from phasekit.periodicity import analyze
    from phasekit.phases import phases
    from phasekit.schedule.simulate import schedule_batch
    from phasekit.signature.reconstruct import run_signature
    from phasekit.structure import structure

    for func in (analyze, phases, structure, fit_energy, divide_phases, run_signature):
        _keyword_only_after(func, 1)
    _keyword_only_after(schedule_batch, 2)  # the batch and the data center


def test_periodicity_options_are_declared_once() -> None:
    """The tuning keywords of analyze are the fields of PeriodicityOptions (no second list
    of names and defaults), frozen, checked when made, naming the parameter at fault."""
    from phasekit.errors import UsageError
    from phasekit.periodicity import PeriodicityOptions, analyze

    signature = inspect.signature(analyze).parameters
    assert not {f.name for f in fields(PeriodicityOptions)} & set(signature)
    assert signature["keywords"].kind is inspect.Parameter.VAR_KEYWORD
    options = PeriodicityOptions(band=0.2)
    with pytest.raises(FrozenInstanceError):
        options.band = 0.3  # type: ignore[misc]
    with pytest.raises(UsageError, match=r"^band=1\.5: expected a value in \(0, 1\]") as bad:
        PeriodicityOptions(band=1.5)
    assert bad.value.command_line().startswith("--band 1.5:")
    with pytest.raises(UsageError, match=r"^min_instances=0: "):
        PeriodicityOptions(min_instances=0)


def test_periodicity_options_give_the_keywords_result() -> None:
    from phasekit.errors import UsageError
    from phasekit.periodicity import PeriodicityOptions, analyze

    t = np.arange(3000)
    values = (np.sin(2 * np.pi * t / 50) + 0.05 * np.random.default_rng(1).standard_normal(
        t.size))[:, None]
    profile = Profile(values=values, period=0.01, metrics=("ipc",))
    by_keywords = analyze(profile, band=0.2, cut_ratio=3.0, workers=1)
    by_options = analyze(profile, options=PeriodicityOptions(band=0.2, cut_ratio=3.0),
                         workers=1)
    assert by_keywords.to_dict() == by_options.to_dict()
    assert by_options.params["band"] == 0.2
    # a default given explicitly is a value like any other: never silently dropped
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords band, not"):
        analyze(profile, options=PeriodicityOptions(band=0.2), band=0.1)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'bandwidth'"):
        analyze(profile, bandwidth=0.2)
    with pytest.raises(UsageError, match=r"^band=0: "):  # checked before any work
        analyze(profile, band=0)


def test_phases_metrics_is_sensors(steps: Path) -> None:
    from phasekit.errors import UsageError
    from phasekit.io import read_profile
    from phasekit.phases import phases

    profile = read_profile(steps)
    names = ["instructions", "cache_misses"]
    assert phases(profile, metrics=names).to_dict() == phases(profile, sensors=names).to_dict()
    with pytest.raises(UsageError):
        phases(profile, metrics=names, sensors=names)
