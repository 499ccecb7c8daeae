"""The result contract for the analyses: periodicity, phases, structure,
fingerprints and phase division. For each, ``summary()`` has the right rows on a synthetic
input whose answer is known, ``plot()`` returns a Figure (and draws on a given Axes),
``_repr_html_`` holds a table and an image, and ``save`` + ``phasekit.load`` round-trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure

import phasekit as pk
from phasekit.energy.fingerprint import FingerprintResult, fingerprint_profiles
from phasekit.energy.phasediv import PhaseDivision, PowerProfiles, divide_phases
from phasekit.io import read_trace
from phasekit.periodicity import PeriodicityResult, analyze
from phasekit.phases import PhaseResult, phases
from phasekit.plot.common import figure
from phasekit.profile import Profile
from phasekit.results import REGISTRY, Result, from_data
from phasekit.structure import StructureResult, structure
from phasekit.synth.power import generate_fingerprint_runs
from phasekit.synth.traces import SUITE, Program, write_paraver
from phasekit.trace import Trace

PERIOD = 60  # samples of the synthetic periodic profile
SAMPLING = 0.01
REPEATS = 50


def contract(result: Result, tmp_path: Path) -> Result:
    """The parts every result shares: a Figure from plot(), drawn on a given Axes too, the
    HTML view with a table and an inline image, a short repr, save + load; returns the
    result read back."""
    fig = result.plot()
    assert isinstance(fig, Figure) and fig.get_axes()
    own = figure(6.0, 4.0)
    ax = own.add_subplot()
    assert result.plot(ax=ax) is own and ax.has_data()
    page = result._repr_html_()
    assert "<table" in page and '<img src="data:image/png;base64,' in page
    assert "no figure" not in page and "no summary" not in page
    assert len(repr(result)) <= 300 and type(result).__name__ in repr(result)
    assert REGISTRY[result.KIND][1] == type(result).__name__
    path = result.save(tmp_path / f"{result.KIND}.json")
    back = pk.load(path)
    assert type(back) is type(result)
    assert back.to_dict() == json.loads(json.dumps(result.to_dict()))
    return back


# --- periodicity -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def periodic() -> tuple[Profile, PeriodicityResult]:
    """A smooth cycle of PERIOD samples repeated REPEATS times, with 2 % noise: one pattern
    of period PERIOD x SAMPLING seconds covering (nearly) the whole profile."""
    rng = np.random.default_rng(3)
    t = np.arange(PERIOD) / PERIOD
    cycle = 1.0 + 0.6 * np.sin(2 * np.pi * t) + 0.3 * (t > 0.6)
    values = np.tile(cycle, REPEATS) + 0.02 * rng.standard_normal(PERIOD * REPEATS)
    profile = Profile(values=values, period=SAMPLING, metrics=("ipc",), node="n1")
    return profile, analyze(profile)


def test_periodicity_summary_is_table_ii(periodic: tuple[Profile, PeriodicityResult]) -> None:
    _, result = periodic
    table = result.summary()
    assert list(table.columns) == ["pattern", "period_s", "length", "instances", "regions",
                                   "mean_consecutive", "coverage", "wgss", "dba_iterations"]
    assert len(table) == 1
    row = table.iloc[0]
    assert row["pattern"] == 1
    assert row["period_s"] == pytest.approx(PERIOD * SAMPLING, rel=0.05)
    assert row["length"] == pytest.approx(PERIOD, rel=0.05)
    assert REPEATS - 6 <= row["instances"] <= REPEATS
    assert row["coverage"] > 0.85 and row["regions"] >= 1
    profile_row = table.attrs["profile"]
    assert profile_row["duration_s"] == pytest.approx(PERIOD * REPEATS * SAMPLING)
    assert profile_row["patterns"] == 1 and profile_row["instances"] == row["instances"]
    assert profile_row["coverage"] == pytest.approx(row["coverage"])


def test_periodicity_without_pattern_has_an_empty_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    result = analyze(Profile(values=rng.normal(size=4000), period=0.005, metrics=("noise",)))
    table = result.summary()
    assert table.empty and "period_s" in table.columns
    assert table.attrs["profile"]["patterns"] == 0
    assert isinstance(result.plot(), Figure)
    contract_back = pk.load(result.save(tmp_path / "r.json"))
    assert contract_back.to_dict() == json.loads(json.dumps(result.to_dict()))


def test_periodicity_contract(periodic: tuple[Profile, PeriodicityResult],
                              tmp_path: Path) -> None:
    _, result = periodic
    back = contract(result, tmp_path)
    assert back.summary().equals(result.summary())
    assert isinstance(back.plot(), Figure)  # from the preview the JSON keeps


def test_one_presentation_from_the_library_rows(
        periodic: tuple[Profile, PeriodicityResult]) -> None:
    """The command line prints, and the report renders, the result's own presentation:
    its headline and the patterns in plain words, Table II and the patterns in Phase-TA's
    notation as detail views, built from ``summary()``'s rows."""
    from rich.console import Console

    from phasekit.cli.render import print_view

    _, result = periodic
    shown = result.present("p.csv")
    p = result.patterns[0]
    assert shown.headline.startswith(f"{result.metrics[0]} repeats every {p.period_s:.4g} s")
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for v in shown.views:
        print_view(console, v)
    text = console.export_text()
    assert "p.csv" in text
    assert f"{len(result.patterns)}({result.n_instances})[{result.mean_consecutive:.1f}]" in text
    assert f"{p.period_s:.4g}" in text and f"{100 * p.coverage:.2f}%" in text
    rows = result.summary()
    titles = [v.title for v in shown.views]
    assert titles[0] == "Patterns" and titles[1].startswith("In Phase-TA's notation (Table II")
    assert [v.detail for v in shown.views] == [False, True, True]
    assert len(shown.views[0].rows) == len(rows)
    assert shown.views[0].rows[0][1] == f"{rows['period_s'].iloc[0]:.4g}"


# --- phases ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def three_phases() -> PhaseResult:
    """Levels A, B, A of two sensors, 20 s each (200 samples at 0.1 s), 1 % noise: three
    phases at 0, 20 and 40 s, the first and the last sharing an id."""
    rng = np.random.default_rng(0)
    levels = [(1.0, 5.0), (3.0, 1.0), (1.0, 5.0)]
    x = np.vstack([np.tile(level, (200, 1)) for level in levels])
    x = x * (1 + 0.01 * rng.standard_normal(x.shape))
    return phases(Profile(values=x, period=0.1, metrics=("a", "b")))


def test_phases_summary_one_row_per_phase(three_phases: PhaseResult) -> None:
    table = three_phases.summary()
    assert list(table.columns) == ["phase", "start_s", "end_s", "duration_s", "id",
                                   "detected_at_s"]
    assert table["phase"].tolist() == [1, 2, 3]
    np.testing.assert_allclose(table["start_s"], [0.0, 20.0, 40.0], atol=0.3)
    np.testing.assert_allclose(table["end_s"], [20.0, 40.0, 60.0], atol=0.3)
    np.testing.assert_allclose(table["duration_s"], table["end_s"] - table["start_s"])
    ids = table["id"].tolist()
    assert ids[0] == ids[2] != ids[1]
    assert (table["detected_at_s"] >= table["start_s"]).all()


def test_phases_headline_says_which_kind_takes_most_of_the_run(
        three_phases: PhaseResult) -> None:
    """The first and last phases share a kind (id): two thirds of the run, in 2 phases; a
    run whose longest kind is one phase says where it lies, and the kind that recurs after
    it."""
    assert three_phases.present().headline == (
        "3 phases of 2 kinds in 60 s; id 1 is 66.67% of the run in 2 phases")
    main = replace(three_phases, phases=(
        replace(three_phases.phases[0], end_s=5.0),
        replace(three_phases.phases[1], start_s=5.0),
        three_phases.phases[2]))
    assert main.present().headline == (
        "3 phases of 2 kinds in 60 s; id 2 is 58.33% of the run, from 5 to 40 s; id 1 occurs "
        "in 2 phases, 41.67% of the run")


def test_phases_contract(three_phases: PhaseResult, tmp_path: Path) -> None:
    back = contract(three_phases, tmp_path)
    assert back.summary().equals(three_phases.summary())
    assert isinstance(back.plot(), Figure)  # without the score (not saved by default)


# --- structure -------------------------------------------------------------------------------
def _loops(program: Program) -> int:
    """Loops in a suite program's outline, at every depth."""
    def count(items: tuple[Any, ...]) -> int:
        return sum(1 + count(item[2]) for item in items if item[0] == "loop")
    return count(program.outline())


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("traces")
    return {name: write_paraver(SUITE[name], root / f"{name}.prv")["prv"]
            for name in ("test-2", "nest-3", "single-iteration")}


@pytest.mark.parametrize("name", ["test-2", "nest-3", "single-iteration"])
def test_structure_summary_is_the_pseudocode(traces: dict[str, Path], name: str) -> None:
    result = structure(read_trace(traces[name]))
    table = result.summary()
    assert list(table.columns) == ["FILE", "LINE", "PSEUDOCODE", "E(TIME)", "E(SIZE)",
                                   "E(IPC)"]
    text = [cell.replace(": ", "").strip() for cell in table["PSEUDOCODE"]]
    n_loops = _loops(SUITE[name])
    assert sum(t.startswith("FOR 1 TO") for t in text) == n_loops == result.n_loops
    assert text.count("END LOOP") == n_loops
    assert text == [row.text for row in result.rows]


def test_structure_is_frozen_and_keeps_no_trace(traces: dict[str, Path]) -> None:
    import dataclasses

    result = structure(read_trace(traces["test-2"]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.explanation = "changed"  # type: ignore[misc]
    assert not any(isinstance(getattr(result, f.name), Trace)
                   for f in dataclasses.fields(result))
    assert result.trace["n_ranks"] == SUITE["test-2"].n_ranks


def test_structure_contract_and_todays_json(traces: dict[str, Path], tmp_path: Path) -> None:
    result = structure(read_trace(traces["test-2"]))
    back = contract(result, tmp_path)
    assert isinstance(back, StructureResult) and back.analysis is None
    assert back.summary().equals(result.summary())
    assert back.n_loops == result.n_loops == len(result.loops)
    with pytest.raises(ValueError, match="read from JSON"):
        _ = back.reduction
    # the JSON the CLI writes (-o, and --json without the clusters) reads back
    out, printed = tmp_path / "cli.json", tmp_path / "printed.json"
    from phasekit.cli import main

    main(["structure", str(traces["test-2"]), "-o", str(out)])
    loaded = pk.load(out)
    assert loaded.to_dict() == json.loads(out.read_text())
    printed.write_text(json.dumps(result.to_dict(clusters=False)))
    bare = pk.load(printed)
    assert bare.clusters is None and "clusters" not in bare.to_dict()
    assert isinstance(bare.plot(), Figure)
    renamed = {**json.loads(out.read_text()), "kind": "structure"}
    assert from_data(renamed).to_dict() == loaded.to_dict()


# --- fingerprints ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fingerprints() -> FingerprintResult:
    runs = generate_fingerprint_runs(programs=2, inputs=3, seed=5)
    return fingerprint_profiles(runs, names=[f"r{i}" for i in range(len(runs))])


def test_fingerprint_summary_rows(fingerprints: FingerprintResult) -> None:
    table = fingerprints.summary()
    assert list(table.columns) == ["run", "program", "cluster", "nearest", "distance"]
    assert sorted(table["run"]) == sorted(fingerprints.names)
    program = dict(zip(fingerprints.names, fingerprints.programs or (), strict=True))
    # two programs, three inputs each: the clusters are the programs and each run's
    # nearest run is one of its own program
    assert table.groupby("program")["cluster"].nunique().eq(1).all()
    assert table["cluster"].nunique() == 2
    assert all(program[r] == program[n] for r, n in zip(table["run"], table["nearest"],
                                                       strict=True))
    d = fingerprints.distances
    index = {name: i for i, name in enumerate(fingerprints.names)}
    for run, distance in zip(table["run"], table["distance"], strict=True):
        others = np.delete(d[index[run]], index[run])
        assert distance == pytest.approx(others.min())


def test_fingerprint_contract(fingerprints: FingerprintResult, tmp_path: Path) -> None:
    back = contract(fingerprints, tmp_path)
    assert back.summary().equals(fingerprints.summary())


# --- phase division --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def division() -> PhaseDivision:
    """Two configurations over a 10 s run: ``a`` draws 100 W in the first half and 300 W in
    the second, ``b`` the reverse: the best division is ``a`` then ``b`` at 50 %, 500 J and
    5 s each (1000 J against 2000 J for either alone). Sampled every 10 ms, so that the
    integrator's hold between samples moves the answer by one sample at most."""
    t = np.arange(1001) * 0.01
    a = np.where(t < 5, 100.0, 300.0)
    profiles = PowerProfiles.from_series(["a", "b"], [0.0, 0.0], [10.0, 10.0], [t, t],
                                         [a, 400.0 - a])
    return divide_phases(profiles, max_phases=3, grid=100)


def test_phase_division_summary_rows(division: PhaseDivision) -> None:
    table = division.summary()
    assert list(table.columns) == ["phase", "start", "end", "config", "energy_j", "time_s"]
    assert table["phase"].tolist() == [1, 2] and table["config"].tolist() == ["a", "b"]
    np.testing.assert_allclose(table["start"], [0.0, 0.5], atol=0.011)
    np.testing.assert_allclose(table["end"], [0.5, 1.0], atol=0.011)
    np.testing.assert_allclose(table["energy_j"], [500.0, 500.0], rtol=0.01)
    np.testing.assert_allclose(table["time_s"], [5.0, 5.0], rtol=0.03)
    assert division.single_energy_j == pytest.approx(2000.0, rel=0.01)


def test_phase_division_contract(division: PhaseDivision, tmp_path: Path) -> None:
    back = contract(division, tmp_path)
    assert back.summary().equals(division.summary())


def test_a_cycle_seen_once_is_not_said_to_repeat() -> None:
    """The short-profile mode can find one cycle of a profile too short to hold two: the
    headline says so instead of "repeats every ... (once)"."""
    from helpers import DATA

    result = pk.periodicity(DATA / "lulesh_chop8_dram_10ms.csv")
    assert result.patterns[0].n_instances == 1 and result.params["short_profile"]
    headline = result.present().headline
    assert "repeats" not in headline
    assert headline.startswith(f"dram_rd: one cycle of {result.patterns[0].period_s:.4g} s")
