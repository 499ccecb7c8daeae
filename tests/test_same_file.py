"""``phasekit VERB ... -o f.json`` and ``pk.VERB(...).save("f.json")`` write the same file.

The command line is a shell over the Python verbs: whatever a command writes (notes,
suggestions, the choice of metric) is on the result the verb returns. Each case runs the
command in this process and the verb with the same options, then compares the two JSON
files, key by key. Recording (``record``) is left out: two recordings of a machine differ. So do the
seconds a computation took (:data:`TIMINGS`), which are left out of the comparison.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import phasekit as pk
from phasekit.cli import main

DATA = Path(__file__).parent / "data"
PROFILE = DATA / "lulesh_chop8_dram_10ms.csv"
TRACE = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
COUNTERS = DATA / "kepler_rapl_kubelet_slice.csv"
#: Keys holding how long a computation took in this process: never the same twice.
TIMINGS = frozenset(("fit_time_s", "runtime_s"))


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("campaign") / "campaign.json"
    main(["synth", "campaign", "-o", str(path), "--seed", "3"])
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from phasekit.schedule.batch import write_batch
    from phasekit.synth.batches import generate_batch

    path = tmp_path_factory.mktemp("batch") / "batch.csv"
    write_batch(generate_batch(10, seed=4), path)
    return path


def _same_file(tmp_path: Path, command: list[str], verb: Callable[[], Any]) -> None:
    from_cli, from_python = tmp_path / "cli.json", tmp_path / "python.json"
    verb()  # compiled kernels: a first call's result may say it compiled them
    main([*command, "-o", str(from_cli)])
    verb().save(from_python)
    cli, python = (_without_timings(json.loads(p.read_text()))
                   for p in (from_cli, from_python))
    assert sorted(cli) == sorted(python), "the keys differ"
    for key in cli:
        assert cli[key] == python[key], key


def test_analyze(tmp_path: Path) -> None:
    _same_file(tmp_path, ["analyze", str(PROFILE), "--band", "0.2"],
               lambda: pk.periodicity(PROFILE, band=0.2))


def test_analyze_a_window(tmp_path: Path) -> None:
    _same_file(tmp_path, ["analyze", str(PROFILE), "--window", ":0.4", "-m", "dram_rd"],
               lambda: pk.periodicity(PROFILE, window=(None, 0.4), metrics="dram_rd"))


def test_phases(tmp_path: Path) -> None:
    _same_file(tmp_path, ["phases", str(PROFILE), "--smooth", "3"],
               lambda: pk.phases(PROFILE, smooth=3))


def test_structure(tmp_path: Path) -> None:
    _same_file(tmp_path, ["structure", str(TRACE)], lambda: pk.structure(TRACE))


def test_energy_fit(tmp_path: Path, campaign: Path) -> None:
    _same_file(tmp_path, ["energy", "fit", str(campaign), "--train", "12"],
               lambda: pk.energy.fit(campaign, train=12))


def test_energy_choose(tmp_path: Path, campaign: Path) -> None:
    _same_file(tmp_path, ["energy", "choose", str(campaign), "--train", "12"],
               lambda: pk.energy.choose(campaign, train=12))


def test_energy_choose_unsure_with_its_suggestions_and_notes(tmp_path: Path,
                                                             campaign: Path) -> None:
    """Where a choice is unsure the command writes what to measure next; so does the verb."""
    saved = tmp_path / "choice.json"
    pk.energy.choose(campaign, train=10, tolerance=0.01).save(saved)
    assert json.loads(saved.read_text())["suggestions"]
    _same_file(tmp_path, ["energy", "choose", str(campaign), "--train", "10",
                          "--tolerance", "0.01"],
               lambda: pk.energy.choose(campaign, train=10, tolerance=0.01))


def test_energy_choose_without_uncertainty_notes_why(tmp_path: Path, campaign: Path) -> None:
    fitted = tmp_path / "fit.json"
    pk.energy.fit(campaign, train=12, seed=1).save(fitted)
    from phasekit.energy.api import as_configurations

    configs = as_configurations(campaign)
    other = tmp_path / "half.csv"  # without some of the fit's training configurations
    configs[configs["cores"] <= configs["cores"].median()].to_csv(other, index=False)
    saved = tmp_path / "choice.json"
    pk.energy.choose(other, fit=fitted).save(saved)
    assert json.loads(saved.read_text())["notes"][0].startswith("no uncertainty")
    _same_file(tmp_path, ["energy", "choose", str(other), "--fit", str(fitted)],
               lambda: pk.energy.choose(other, fit=fitted))


def test_energy_suggest(tmp_path: Path, campaign: Path) -> None:
    _same_file(tmp_path, ["energy", "suggest", str(campaign), "-k", "3"],
               lambda: pk.energy.suggest(campaign, k=3))


def test_schedule(tmp_path: Path, batch: Path) -> None:
    _same_file(tmp_path, ["schedule", str(batch), "--servers", "2", "--cores", "12",
                          "--policy", "heuristic", "--seed", "1"],
               lambda: pk.schedule(batch, servers=2, cores=12, policies="heuristic", seed=1))


def test_powermodel_fit(tmp_path: Path) -> None:
    _same_file(tmp_path, ["powermodel", "fit", str(COUNTERS), "--target", "package_power"],
               lambda: pk.powermodel.fit(COUNTERS, target="package_power"))


@pytest.fixture(scope="module")
def power(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("power") / "profiles.json"
    main(["synth", "power", "-o", str(path), "--seed", "2"])
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fingerprints") / "runs"
    main(["synth", "fingerprints", "-o", str(folder), "--seed", "2"])
    return folder


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nodes") / "job"
    main(["synth", "nodes", "--nodes", "3", "--minutes", "0.5", "-o", str(folder), "--seed", "2"])
    return folder


def test_energy_phasediv(tmp_path: Path, power: Path) -> None:
    _same_file(tmp_path, ["energy", "phasediv", str(power), "--max-phases", "4"],
               lambda: pk.energy.phasediv(power, max_phases=4))


def test_fingerprint(tmp_path: Path, runs: Path) -> None:
    _same_file(tmp_path, ["fingerprint", str(runs), "--clusters", "3"],
               lambda: pk.energy.fingerprint(runs, clusters=3))


def test_analyze_many_nodes(tmp_path: Path, nodes: Path) -> None:
    _same_file(tmp_path, ["analyze", str(nodes), "--workers", "1"],
               lambda: pk.periodicity_many(nodes, workers=1))


def test_phases_of_many_files(tmp_path: Path, nodes: Path) -> None:
    _same_file(tmp_path, ["phases", str(nodes), "--workers", "1", "--method", "ev"],
               lambda: pk.phases_many(nodes, workers=1, method="ev"))


def test_structure_of_many_traces(tmp_path: Path) -> None:
    _same_file(tmp_path, ["structure", str(TRACE), str(TRACE), "--workers", "1"],
               lambda: pk.structure_many([TRACE, TRACE], workers=1))
