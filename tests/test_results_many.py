"""The result contract for the many-input results: MultiNodeResult,
MultiPhaseResult and MultiStructureResult give a summary table, a figure, an HTML view and a
saved file that ``phasekit.load`` reads back, checked on inputs with a known truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import phasekit as pk
from phasekit.io import write_profile
from phasekit.many import MultiPhaseResult, MultiStructureResult
from phasekit.periodicity.nodes import MultiNodeResult
from phasekit.plot.common import figure
from phasekit.results import REGISTRY, Result, result_class
from phasekit.synth import EXPECTED_REASONS, generate_nodes
from phasekit.synth.phases import generate_bench
from phasekit.synth.traces import SUITE, write_paraver


def check_contract(result: Result, tmp_path: Path) -> None:
    """plot() is a Figure and draws on a given ax; the HTML view has a table and an image;
    save() then load() give the same JSON."""
    assert isinstance(result.plot(), Figure)
    fig = figure(6.0, 3.0)
    ax = fig.add_subplot()
    assert result.plot(ax=ax) is fig
    assert ax.has_data()
    view = result._repr_html_()
    assert "<table" in view and "<img" in view and "no figure" not in view
    path = result.save(tmp_path / f"{result.KIND}.json")
    loaded = pk.load(path)
    assert type(loaded) is type(result)
    assert loaded.to_dict() == result.to_dict()


def test_the_kinds_are_registered() -> None:
    for cls in (MultiNodeResult, MultiPhaseResult, MultiStructureResult):
        assert issubclass(cls, Result)
        assert REGISTRY[cls.KIND][1] == cls.__name__ and result_class(cls.KIND) is cls
    assert (MultiNodeResult.KIND, MultiPhaseResult.KIND, MultiStructureResult.KIND) == (
        "multinode_analysis", "multinode_phases", "multi_structure")


# --- the nodes of a run ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float], str]:
    """Five 1-minute node profiles of one run, one planted shape outlier, and a bad file:
    the folder, each node's true main period (median instance length) and the outlier."""
    folder = tmp_path_factory.mktemp("results_many") / "run"
    folder.mkdir()
    profiles, truth = generate_nodes("nemo", n_nodes=5, minutes=1.0, seed=2, outliers=("shape",))
    periods = {}
    for profile, node_truth in zip(profiles, truth.truths, strict=True):
        write_profile(profile, folder / f"{profile.node}.csv")
        main = max(range(len(node_truth.labels)), key=node_truth.coverage)
        lengths = node_truth.instances["length"][node_truth.instances["label"] == main]
        periods[profile.node] = float(np.median(lengths)) * node_truth.period
    (folder / "broken.csv").write_text("timestamp_s,ipc\n0,1\n0.005,oops\n")
    (outlier,) = truth.outliers
    return folder, periods, outlier


def test_multinode_summary_against_the_truth(run_folder: tuple[Path, dict[str, float], str],
                                             tmp_path: Path) -> None:
    folder, periods, outlier = run_folder
    result = pk.periodicity_many(folder, workers=1)
    table = result.summary()
    assert list(table.columns) == list(MultiNodeResult.SUMMARY_COLUMNS)
    nodes = table[table["error"] == ""]
    failed = table[table["error"] != ""]
    assert list(nodes["node"]) == sorted(periods)  # one row per node, input order
    assert [Path(f).name for f in failed["file"]] == ["broken.csv"]
    assert "line 3" in failed["error"].iloc[0]
    for _, row in nodes.iterrows():
        assert row["period_s"] == pytest.approx(periods[row["node"]], rel=0.02)
        assert row["n_patterns"] >= 1 and 0 < row["pattern_coverage"] <= row["coverage"] <= 1
        assert row["matches"] == 1
    flagged = nodes[nodes["outlier"] != ""]
    assert list(flagged["node"]) == [outlier]
    assert EXPECTED_REASONS["shape"] in flagged["outlier"].iloc[0]
    reference = nodes[nodes["reference"]]
    assert len(reference) == 1 and reference["distance"].iloc[0] == 0.0
    assert reference["node"].iloc[0] == result.agreement.reference != outlier
    assert nodes.set_index("node")["distance"][outlier] > result.agreement.threshold
    # the verdict: the outlier's pattern is further than Phase-TA's 1 %
    assert table.attrs["agreement"]["agree"] is False
    assert outlier in table.attrs["agreement"]["disagreeing"]
    assert table.attrs["verdict"].startswith("agreement: no") and outlier in table.attrs["verdict"]
    assert list(table.attrs["outliers"]) == [outlier]
    # how it reads: the verdict, the outlier and why in the headline, a row per node
    shown = result.present()
    reasons = ", ".join(result.outliers[0].reasons)
    assert f"; 1 outlier: {outlier} ({reasons}); 1 of 6 inputs failed" in shown.headline
    nodes_view, notation_view, agreement_view, outliers_view = shown.views
    assert notation_view.detail and notation_view.headers[2] == "#rp(#i)[#pa]"
    assert [row[0] for row in nodes_view.rows] == sorted(periods)
    assert [row[-1] for row in nodes_view.rows if row[-1]] == [reasons]
    assert agreement_view.title.startswith(f"Agreement with the reference node "
                                           f"{result.agreement.reference} ")
    assert [row[0] for row in outliers_view.rows] == [outlier]
    assert f"disagree with the reference node {result.agreement.reference}'s" in shown.headline
    assert shown.notes == ()  # the headline names every disagreeing node: no repeat
    check_contract(result, tmp_path)


def test_multinode_without_nodes_still_displays(tmp_path: Path) -> None:
    result = pk.periodicity_many([tmp_path / "missing.csv"], workers=1)
    table = result.summary()
    assert len(table) == 1 and table["error"].iloc[0].endswith("no such file")
    assert table.attrs["agreement"]["agree"] is None
    shown = result.present()
    assert shown.headline == "no node was analyzed; 1 of 1 inputs failed"
    assert shown.views[0].rows == () and shown.notes == ()
    assert isinstance(result.plot(), Figure)
    assert "<table" in result._repr_html_()


# --- phases of several profiles ----------------------------------------------------------------
def test_multiphase_summary_against_the_truth(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    truths = {}
    for seed in range(2):
        profile, truth = generate_bench("bench_1", seed=seed)
        write_profile(profile, folder / f"n{seed}.csv")
        truths[f"n{seed}"] = truth
    result = pk.phases_many([folder, tmp_path / "nope.csv"], workers=1)
    table = result.summary()
    assert list(table.columns) == list(MultiPhaseResult.SUMMARY_COLUMNS)
    nodes = table[table["error"] == ""]
    assert list(nodes["node"]) == ["n0", "n1"]
    assert list(table[table["error"] != ""]["file"]) == [str(tmp_path / "nope.csv")]
    for (_, row), entry in zip(nodes.iterrows(), result.nodes, strict=True):
        segments = truths[row["node"]].segments  # MG, BT, EP, IS, CG back to back
        assert row["n_phases"] == len(entry["phases"]) == len(segments) == 5
        assert row["n_changes"] == 4 and row["n_ids"] == 5
        starts = [p["start_s"] for p in entry["phases"]]
        assert np.allclose(starts, [s[0] for s in segments], atol=3.0)
        # BT is the longest workload
        longest = max(entry["phases"], key=lambda p: p["end_s"] - p["start_s"])
        assert row["main_id"] == longest["id"]
        bt = segments[1][1] - segments[1][0]
        assert row["main_share"] == pytest.approx(bt / segments[-1][1], abs=0.03)
    shown = result.present()
    assert shown.headline == "2 profiles: 5 phases each, of 5 kinds; 1 of 3 inputs failed"
    assert [row[:4] for row in shown.views[0].rows] == [("n0", row_duration(result, 0), "5", "5"),
                                                        ("n1", row_duration(result, 1), "5", "5")]
    check_contract(result, tmp_path)
    fig = result.plot()
    assert len(fig.axes[0].collections) == 10  # one bar per phase


def row_duration(result: MultiPhaseResult, k: int) -> str:
    return f"{result.nodes[k]['duration_s']:.6g}"


# --- structure of several traces ---------------------------------------------------------------
def test_multistructure_summary_against_the_truth(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    write_paraver(SUITE["test-2"], folder / "a.prv", seed=0)  # FOR 10 (FOR 2, FOR 5)
    write_paraver(SUITE["two-phases"], folder / "b.prv", seed=0)  # FOR 20; FOR 40
    (folder / "c.prv").write_text("#Paraver broken\n")
    result = pk.structure_many(folder, workers=1)
    table = result.summary()
    assert list(table.columns) == list(MultiStructureResult.SUMMARY_COLUMNS)
    traces = table[table["error"] == ""]
    assert [Path(f).name for f in traces["file"]] == ["a.prv", "b.prv"]
    assert [Path(f).name for f in table[table["error"] != ""]["file"]] == ["c.prv"]
    assert list(traces["n_ranks"]) == [SUITE["test-2"].n_ranks, SUITE["two-phases"].n_ranks]
    assert list(traces["n_loops"]) == [3, 2] and list(traces["top_loops"]) == [1, 2]
    assert list(traces["iterations"]) == ["10", "20, 40"]
    assert list(traces["main_iterations"]) == [10, 40]
    shown = result.present()
    assert shown.headline == ("2 traces, all with loops: the main loop runs 10 to "
                              "40 iterations; 1 of 3 inputs failed")
    # the main loop (the one spanning the most time) and the top-level loops' iterations
    assert [(row[4], row[7]) for row in shown.views[0].rows] == [("id 0, 10", "10"),
                                                                 ("id 1, 40", "20, 40")]
    check_contract(result, tmp_path)
    fig = result.plot()
    assert [round(p.get_width()) for p in fig.axes[0].patches] == [10, 20, 40]


def test_periodicity_options_band_reaches_the_node_comparison(
        run_folder: tuple[Path, dict[str, float], str]) -> None:
    from phasekit.periodicity import PeriodicityOptions

    folder = run_folder[0]
    keyword = pk.periodicity_many(folder, workers=1, band=0.3)
    options = pk.periodicity_many(folder, workers=1, options=PeriodicityOptions(band=0.3))
    assert keyword.params["band"] == options.params["band"] == 0.3
