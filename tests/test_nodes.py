"""The nodes of one run compared (Phase-TA, IV-B): the DTW path against a naive reference, the
agreement check and the outliers on hand-made nodes and against the outliers planted by
phasekit.synth.generate_nodes, the JSON round trip, and the multi-input CLI (analyze, phases,
structure)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import helpers
import naive
from phasekit.distance import band_radius
from phasekit.errors import InputError, UsageError
from phasekit.io import write_profile
from phasekit.periodicity import analyze
from phasekit.periodicity.nodes import (
    THRESHOLD,
    MultiNodeResult,
    NodePattern,
    NodeSummary,
    compare_nodes,
    dtw_path,
    pattern_distance,
)
from phasekit.results import json_close
from phasekit.synth import EXPECTED_REASONS, OUTLIER_KINDS, generate_nodes
from phasekit.synth.traces import SUITE, write_paraver

run = helpers.run


# --- the DTW path ----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_dtw_path_matches_naive(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = (int(v) for v in rng.integers(4, 40, 2))
    dims = 1 + seed % 2
    a, b = rng.normal(size=(n, dims)), rng.normal(size=(m, dims))
    band = (0.1, 0.3, None)[seed % 3]
    i, j = dtw_path(a, b, band=band)
    radius = band_radius(n, m, band)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == naive.dtw2_path(a, b, radius)
    assert float(((a[i] - b[j]) ** 2).sum()) == pytest.approx(naive.dtw2(a, b, radius))


def cycle(length: int, *, bump: float = 0.0, phase: float = 0.0) -> np.ndarray:
    """A smooth iteration of ``length`` samples (IPC-like, mean 1.5), with an extra bump."""
    t = (np.arange(length) / length + phase) % 1.0
    return (1.5 + 0.5 * np.sin(2 * np.pi * t) + 0.3 * np.exp(-((t - 0.7) / 0.05) ** 2)
            + bump * np.exp(-((t - 0.3) / 0.08) ** 2))


def test_pattern_distance_is_the_mean_distance_per_associated_point() -> None:
    rng = np.random.default_rng(1)
    ref = cycle(120)
    noisy = ref + rng.normal(0, 0.02, ref.size)
    radius = band_radius(120, 120, 0.1)
    path = naive.dtw2_path(ref[:, None], noisy[:, None], radius)
    expected = np.mean([abs(ref[i] - noisy[j]) for i, j in path])
    expected /= np.mean(np.abs(np.concatenate([ref, noisy])))
    assert pattern_distance(ref, noisy) == pytest.approx(expected)
    # a pattern cut at another phase is the same periodicity
    assert pattern_distance(ref, np.roll(ref, 37)) == pytest.approx(0.0, abs=1e-12)
    # a different shape is further than Phase-TA's 1 %
    assert pattern_distance(ref, cycle(120, bump=0.4)) > 2 * THRESHOLD
    with pytest.raises(UsageError, match="metrics"):
        pattern_distance(np.ones((5, 2)), np.ones((5, 1)))


# --- the comparison on hand-made nodes ---------------------------------------------------------
def pattern(values: np.ndarray, *, period_s: float, coverage: float) -> NodePattern:
    return NodePattern(values=np.asarray(values, float)[:, None], period_s=period_s,
                       coverage=coverage, n_instances=int(coverage * 100), n_regions=1,
                       mean_consecutive=float(coverage * 100), wgss=1.0, dba_iterations=5)


def node(name: str, patterns: Sequence[NodePattern], coverage: float | None = None
         ) -> NodeSummary:
    return NodeSummary(node=name, file=f"{name}.csv", duration_s=600.0, sampling_period=0.005,
                       n_samples=120_000, n_valid=120_000, metrics=("ipc",), window=100,
                       coverage=sum(p.coverage for p in patterns) if coverage is None
                       else coverage, patterns=tuple(patterns))


def hand_made_run(seed: int) -> list[NodeSummary]:
    """Nine normal nodes (a 0.5 s and a 2 s periodicity, 60 % and 20 % of the profile, a
    little noise) and one of each kind of outlier, plus two harmless differences."""
    rng = np.random.default_rng(seed)

    def main(length: int = 100, **kw: float) -> NodePattern:
        return pattern(cycle(length, phase=float(rng.uniform()), **kw)
                       + rng.normal(0, 0.002, length), period_s=length * 0.005, coverage=0.6)

    def second() -> NodePattern:
        return pattern(0.8 + cycle(400, phase=0.5) / 3 + rng.normal(0, 0.002, 400),
                       period_s=2.0, coverage=0.2)

    nodes = [node(f"n{i}", [main(), second()]) for i in range(9)]
    nodes += [
        node("odd", [main(bump=0.4), second()]),  # its main pattern differs
        node("slow", [main(length=120), second()]),  # 20 % longer iterations
        node("idle", [main(), second()], coverage=0.45),  # same patterns, less of the run
        node("extra", [main(), second(), pattern(cycle(260), period_s=1.3, coverage=0.15)],
             coverage=0.82),
        node("missing", [main()]),  # no 2 s periodicity
        # not outliers: a periodicity split in two clusters, and a marginal extra pattern
        node("split", [main(), second(), pattern(cycle(102), period_s=0.51, coverage=0.12)],
             coverage=0.83),
        node("marginal", [main(), second(), pattern(cycle(600), period_s=3.0, coverage=0.06)],
             coverage=0.84),
    ]
    order = rng.permutation(len(nodes))
    return [nodes[k] for k in order]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_outliers_and_agreement_on_hand_made_nodes(seed: int) -> None:
    nodes = hand_made_run(seed)
    result = compare_nodes(nodes)
    reasons = {o.node: set(o.reasons) for o in result.outliers}
    assert reasons == {"odd": {"pattern"}, "slow": {"period"}, "idle": {"coverage"},
                       "extra": {"patterns"}, "missing": {"patterns", "coverage"}}
    details = {o.node: " ".join(o.details) for o in result.outliers}
    assert "1.3 s" in details["extra"] and "pattern 2" in details["missing"]
    a = result.agreement
    assert a.reference is not None and a.reference.startswith("n")  # a normal node
    assert a.agree is False and set(a.disagreeing) == {"odd", "missing"}
    assert a.n_nodes == len(nodes) and a.n_agree == len(nodes) - 2
    assert [p.n_nodes for p in a.patterns] == [len(nodes), len(nodes) - 1]
    assert a.patterns[0].max_node == "odd" and a.patterns[0].max_distance > 2 * THRESHOLD
    assert a.patterns[0].period_s == pytest.approx(0.5)
    by_name = {n.node: n for n in result.nodes}
    # every pattern is associated with the reference's of the same periodicity
    for n in result.nodes:
        for p in n.patterns:
            if p.reference is not None:
                assert p.period_s / a.patterns[p.reference].period_s == pytest.approx(1, abs=0.21)
    assert [p.reference for p in by_name["extra"].patterns] == [0, 1, None]
    assert [p.reference for p in by_name["missing"].patterns] == [0]
    assert all(p.distance < THRESHOLD for n in result.nodes if n.node != "odd"
               for p in n.patterns if p.distance is not None)


def test_agreement_follows_the_threshold() -> None:
    nodes = [n for n in hand_made_run(0) if n.node.startswith("n") or n.node == "odd"]
    odd = next(p.distance for n in compare_nodes(nodes).nodes if n.node == "odd"
               for p in n.patterns if p.reference == 0)
    assert compare_nodes(nodes, threshold=odd * 1.01).agreement.agree is True
    below = compare_nodes(nodes, threshold=odd * 0.99).agreement
    assert below.agree is False and below.disagreeing == ("odd",)
    normal = [n for n in nodes if n.node != "odd"]
    assert compare_nodes(normal).agreement.agree is True


def test_small_and_empty_runs() -> None:
    nodes = hand_made_run(0)
    one = compare_nodes(nodes[:1])
    assert one.agreement.agree is None and "only one node" in one.agreement.explanation
    two = compare_nodes([n for n in nodes if n.node in ("n0", "odd")])
    assert two.outliers == () and two.agreement.agree is False  # compared, but no outlier
    flat = [node(f"f{i}", [], coverage=0.0) for i in range(3)]
    none = compare_nodes(flat)
    assert none.agreement.agree is None
    assert "no node has a periodicity" in none.agreement.explanation
    assert none.outliers == ()
    assert compare_nodes([]).agreement.explanation == "no node was analyzed"
    with pytest.raises(UsageError, match="unique"):
        compare_nodes([nodes[0], nodes[0]])
    with pytest.raises(UsageError, match="threshold"):
        compare_nodes(nodes, threshold=0)


def test_round_trip_through_json() -> None:
    result = compare_nodes(hand_made_run(2))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["kind"] == "multinode_analysis" and data["version"] == 1
    again = MultiNodeResult.from_dict(data)
    assert again.to_dict() == data
    with pytest.raises(InputError, match="multinode_analysis"):
        MultiNodeResult.from_dict({"kind": "periodicity", "version": 1})


# --- against planted ground truth ------------------------------------------------------------
def test_generate_nodes() -> None:
    profiles, truth = generate_nodes("nemo", n_nodes=5, minutes=1.0, seed=3,
                                     outliers=("slow", "idle"))
    again, _ = generate_nodes("nemo", n_nodes=5, minutes=1.0, seed=3, outliers=("slow", "idle"))
    assert all(np.array_equal(p.values, q.values) for p, q in zip(profiles, again, strict=True))
    assert [p.node for p in profiles] == list(truth.nodes) == [f"node0{i}" for i in range(5)]
    assert sorted(truth.outliers.values()) == ["idle", "slow"]
    assert len(truth.normal) == 3
    lengths = {p.node: p.n_samples for p in profiles}
    slow = next(n for n, k in truth.outliers.items() if k == "slow")
    normal = np.median([lengths[n] for n in truth.normal])
    assert lengths[slow] / normal == pytest.approx(1.15, abs=0.02)
    idle = truth.nodes.index(next(n for n, k in truth.outliers.items() if k == "idle"))
    assert truth.truths[idle].coverage() < 0.6 * truth.truths[0 if idle else 1].coverage()
    with pytest.raises(UsageError, match="unknown outlier"):
        generate_nodes(outliers=("late",))
    with pytest.raises(UsageError, match="do not fit"):
        generate_nodes(n_nodes=1, outliers=("slow", "idle"))


@pytest.mark.slow
def test_outliers_against_planted_truth() -> None:
    """Eight 2-minute nodes per run, one outlier of each kind planted, over kinds and seeds:
    recall and precision of the flagged nodes, and the expected reason for each kind."""
    found = missed = false = right_reason = 0
    normal_distances: list[float] = []
    for kind, seed in [("nemo", 0), ("nemo", 1), ("hpcg", 0), ("hpcg", 1), ("openfoam", 0),
                       ("openfoam", 1)]:
        profiles, truth = generate_nodes(kind, n_nodes=8, minutes=2.0, seed=seed,
                                         outliers=OUTLIER_KINDS)
        summaries = [NodeSummary.from_result(analyze(p, workers=1), file=f"{p.node}.parquet")
                     for p in profiles]
        result = compare_nodes(summaries)
        flagged = {o.node: o.reasons for o in result.outliers}
        for name, planted in truth.outliers.items():
            if name in flagged:
                found += 1
                right_reason += EXPECTED_REASONS[planted] in flagged[name]
            else:
                missed += 1
        false += len(set(flagged) - set(truth.outliers))
        normal_distances += [p.distance for n in result.nodes if n.node in truth.normal
                             for p in n.patterns if p.distance is not None]
    planted = found + missed
    assert found / planted >= 0.9 and found / (found + false) >= 0.9
    assert right_reason / found >= 0.9
    # the patterns of normal nodes: within about Phase-TA's 1 %
    assert np.median(normal_distances) < 1.5 * THRESHOLD


# --- the CLI ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five 1-minute node profiles of one run (one planted shape outlier) and a bad file."""
    folder = tmp_path_factory.mktemp("nodes") / "run"
    folder.mkdir()
    profiles, _ = generate_nodes("nemo", n_nodes=5, minutes=1.0, seed=2, outliers=("shape",))
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.csv")
    (folder / "broken.csv").write_text("timestamp_s,ipc\n0,1\n0.005,oops\n")
    return folder


def test_cli_json_contract(run_folder: Path, tmp_path: Path) -> None:
    written = tmp_path / "nodes.json"
    code, out, err = run("analyze", run_folder, "--json", "--workers", "1", "-o", written)
    assert code == 5  # some inputs failed, the others were analyzed
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"phasekit: error: {run_folder / 'broken.csv'}, line 3")
    data = json.loads(out)
    assert json.loads(written.read_text()) == data
    assert {"nodes", "agreement", "outliers", "errors"} <= set(data)
    assert [n["node"] for n in data["nodes"]] == [f"node0{i}" for i in range(5)]
    for entry in data["nodes"]:
        assert {"node", "file", "duration_s", "coverage", "patterns"} <= set(entry)
        assert entry["file"] == str(run_folder / f"{entry['node']}.csv")
        assert entry["duration_s"] == pytest.approx(60.0, abs=1.5)
        assert 0 < entry["coverage"] <= 1 and entry["patterns"]
        assert {"period_s", "values", "distance", "reference_pattern"} <= set(
            entry["patterns"][0])
    assert {"threshold", "reference", "agree", "patterns", "disagreeing"} <= set(
        data["agreement"])
    assert data["agreement"]["threshold"] == THRESHOLD
    assert [e["file"] for e in data["errors"]] == [str(run_folder / "broken.csv")]
    assert data["errors"][0]["exit_code"] == 3
    for outlier in data["outliers"]:
        assert {"node", "file", "reasons", "details"} <= set(outlier)


@pytest.mark.slow
def test_cli_processes_give_the_same_result(run_folder: Path) -> None:
    files = sorted(str(p) for p in run_folder.glob("node*.csv"))
    code, out, err = run("analyze", *files, "--json", "--workers", "2")
    assert code == 0 and err == ""
    spread = json.loads(out)
    code, out, _ = run("analyze", str(run_folder / "node*.csv"), "--json", "--workers", "1")
    assert code == 0 and json_close(json.loads(out), spread)


def test_cli_table(run_folder: Path) -> None:
    code, out, err = run("analyze", run_folder, "--workers", "1")
    assert code == 5 and "broken.csv" in err and "broken.csv" not in out.split("analyzed")[0]
    assert "Nodes" in out and "node04" in out and "#rp(#i)" not in out  # notation: --detail
    assert "disagree with the reference node" in out and "Agreement with the reference node" in out
    assert "analyzed 5 of 6 inputs; 1 failed" in out
    # first the headline, last the failed inputs (listed on stderr) and what was written
    lines = out.splitlines()
    assert lines[0].startswith("the patterns of") and "; 1 of 6 inputs failed" in lines[0]
    assert lines[-1] == "analyzed 5 of 6 inputs; 1 failed (listed on stderr)"


def test_cli_every_input_bad(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp_s,ipc\n0,x\n")
    code, out, err = run("analyze", bad, tmp_path / "missing.csv", "--json")
    assert code == 3 and out == ""
    assert err.splitlines() == [
        f"phasekit: error: {bad}, line 2, column 'ipc': expected a number, found 'x'",
        f"phasekit: error: {tmp_path / 'missing.csv'}: no such file"]
    code, out, err = run("analyze", str(tmp_path / "none*.csv"))
    assert code == 3 and "no file matches" in err


def test_cli_many_rejects_plot_and_bad_workers(run_folder: Path, tmp_path: Path) -> None:
    code, out, err = run("analyze", run_folder, "--plot", tmp_path / "f.png")
    assert code == 2 and out == "" and "--plot draws one profile" in err
    code, _, err = run("analyze", run_folder, "--workers", "0")
    assert code == 2 and "--workers" in err


@pytest.mark.slow
def test_cli_phases_many(run_folder: Path) -> None:
    code, out, err = run("phases", run_folder / "node00.csv", run_folder / "node01.csv",
                         run_folder / "broken.csv", "--sensor", "ipc", "--json", "--workers", "1")
    assert code == 5 and err.count("\n") == 1 and "broken.csv" in err
    data = json.loads(out)
    assert [n["node"] for n in data["nodes"]] == ["node00", "node01"]
    assert all(n["kind"] == "phases" and n["phases"] for n in data["nodes"])
    assert [e["file"] for e in data["errors"]] == [str(run_folder / "broken.csv")]
    code, out, _ = run("phases", run_folder / "node00.csv", run_folder / "node01.csv",
                       "--sensor", "ipc", "--workers", "1")
    assert code == 0 and "Phases of 2 profiles" in out and "node01" in out
    assert out.splitlines()[0].startswith("2 profiles: ")


def test_cli_structure_many(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    write_paraver(SUITE["test-2"], folder / "a.prv", seed=0)
    write_paraver(SUITE["test-2"], folder / "b.prv", seed=1)
    (folder / "c.prv").write_text("#Paraver broken\n")
    code, out, err = run("structure", folder, "--json", "--workers", "1")
    assert code == 5 and err.count("\n") == 1 and "c.prv" in err
    data = json.loads(out)
    assert [Path(t["file"]).name for t in data["traces"]] == ["a.prv", "b.prv"]
    assert [t["loops"][0]["iterations"] for t in data["traces"]] == [10, 10]
    code, out, _ = run("structure", folder / "a.prv", folder / "b.prv", "--workers", "1",
                       "-o", tmp_path / "s.json")
    assert code == 0 and "Loop structure of 2 traces" in out
    assert out.splitlines()[0] == ("2 traces, all with loops: the main loop runs "
                                   "10 iterations")
    assert out.splitlines()[-1] == f"wrote result: {tmp_path / 's.json'}"
    saved = json.loads((tmp_path / "s.json").read_text())
    assert [t["loops"][0]["iterations"] for t in saved["traces"]] == [10, 10]


def test_cli_node_names_fall_back_to_file_names(tmp_path: Path) -> None:
    profiles, _ = generate_nodes("nemo", n_nodes=2, minutes=1.0, seed=5)
    for k, profile in enumerate(profiles):  # both profiles say they are "same"
        write_profile(replace(profile, node="same"), tmp_path / f"host{k}.parquet")
    code, out, _ = run("analyze", tmp_path, "--json", "--workers", "1")
    assert code == 0
    assert [n["node"] for n in json.loads(out)["nodes"]] == ["host0", "host1"]
