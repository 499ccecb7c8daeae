"""Synthetic profiles with ground truth (phasekit.synth)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run
from phasekit import InputError, UsageError
from phasekit.synth import KINDS, Truth, generate, read_truth, truth_path, write_truth

# target shares of the profile per kind (Phase-TA Table II / §IV-B, as in the module docstring)
TARGETS = {
    "nemo": {"compute": 0.77},
    "hpcg": {"init-a": 0.15, "init-b": 0.17, "compute": 0.57},
    "openfoam": {"compute": 0.70},
}
NOMINAL = {("nemo", "compute"): 220, ("hpcg", "init-a"): 150, ("hpcg", "init-b"): 165,
           ("hpcg", "compute"): 300, ("openfoam", "compute"): 520}
REGION_LABELS = {"nemo": ["compute"], "hpcg": ["init-a", "init-b", "compute"],
                 "openfoam": ["compute"] * 5}


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of the runs of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _acf(x: np.ndarray, max_lag: int) -> np.ndarray:
    x = x - x.mean()
    f = np.fft.rfft(x, 2 * x.size)
    a = np.fft.irfft(f * np.conj(f))[: max_lag + 1]
    return a / a[0]


def _acf_rebound(x: np.ndarray, lo: int = 50, hi: int = 1000) -> float:
    """Largest rise of the autocorrelation above its running minimum over lags lo..hi, counted
    only where the autocorrelation exceeds 0.5: a periodic signal falls and comes back near 1 at
    its period; a merely persistent one decays without coming back."""
    a = _acf(x, hi)[lo:]
    rise = a - np.minimum.accumulate(a)
    return float(np.max(np.where(a > 0.5, rise, 0.0)))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("minutes", [1, 5, 10])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_truth_layout_and_coverage(kind: str, minutes: int, seed: int) -> None:
    profile, truth = generate(kind, minutes=minutes, seed=seed)
    n = minutes * 12_000
    assert profile.n_samples == truth.n_samples == n
    assert profile.metrics == ("ipc",)
    assert profile.node == f"synth-{kind}"
    assert profile.meta == {"synth": kind, "seed": seed, "minutes": minutes}
    assert truth.period == profile.period == 0.005
    x = profile.column("ipc")
    assert np.all(np.isfinite(x))
    q01, q99 = np.quantile(x, [0.01, 0.99])
    assert q01 >= 0.1 and q99 <= 2.6

    starts, lengths, labels = truth.starts, truth.lengths, truth.instance_labels
    ends = starts + lengths
    assert starts[0] >= 0 and ends[-1] <= n
    assert np.all(starts[1:] >= ends[:-1])  # time order, no overlap
    # instances tile their regions exactly: within a region each starts where the previous ends
    regions = truth.regions()
    assert [truth.labels[lab] for lab, _, _ in regions] == REGION_LABELS[kind]
    assert sum(count for _, _, count in regions) == starts.size
    assert all(count >= 2 for _, _, count in regions)
    boundaries = {first for _, first, _ in regions}
    gaps = starts[1:] - ends[:-1]
    for i, gap in enumerate(gaps, start=1):
        if i not in boundaries:
            assert gap == 0
        else:  # a new region follows an aperiodic part, or another periodicity (hpcg A -> B)
            assert gap > 0 or labels[i] != labels[i - 1]

    for name, share in TARGETS[kind].items():
        assert truth.coverage(name) == pytest.approx(share, abs=0.03)
    assert truth.coverage() == pytest.approx(sum(TARGETS[kind].values()), abs=0.03)
    sl = truth.sample_labels()
    assert sl.shape == (n,)
    assert np.mean(sl >= 0) == pytest.approx(truth.coverage())
    for lab in range(len(truth.labels)):
        assert np.sum(sl == lab) == lengths[labels == lab].sum()

    # aperiodic parts where the layout puts them
    if kind == "nemo":
        assert starts[0] / n == pytest.approx(0.15, abs=0.03)
        assert 1 - ends[-1] / n == pytest.approx(0.08, abs=0.03)
    elif kind == "hpcg":
        assert 1 - truth.coverage() == pytest.approx(0.11, abs=0.03)
        assert starts[0] > 0 and ends[-1] < n
    else:
        assert starts[0] / n == pytest.approx(0.05, abs=0.03)
        checkpoints = [(a, b) for a, b in _runs(sl < 0) if a > 0]
        assert len(checkpoints) == 5
        assert sum(b - a for a, b in checkpoints) / n == pytest.approx(0.25, abs=0.03)
        assert len({b - a for a, b in checkpoints}) == 5  # irregular durations


@pytest.mark.parametrize("kind", KINDS)
def test_instances_are_warped_jittered_copies_of_the_template(kind: str) -> None:
    profile, truth = generate(kind, minutes=10, seed=4)
    x = profile.column("ipc")
    for lab, name in enumerate(truth.labels):
        template = truth.templates[lab]
        nominal = NOMINAL[(kind, name)]
        assert template.size == nominal
        lengths = truth.lengths[truth.instance_labels == lab]
        warp = max(1, round(0.02 * nominal))
        assert np.all(np.abs(lengths - nominal) <= warp)  # about +-2 % per instance
        assert np.unique(lengths).size >= 3  # lengths vary: warping is present
        assert truth.mean_length(name) == pytest.approx(nominal, rel=0.01)
        # each instance, resampled to the nominal length, follows its template
        grid = np.linspace(0.0, 1.0, nominal)
        corr = []
        for s, n in zip(truth.starts[truth.instance_labels == lab],
                        lengths, strict=True):
            inst = np.interp(grid, np.linspace(0.0, 1.0, n), x[s:s + n])
            corr.append(np.corrcoef(inst, template)[0, 1])
        assert np.median(corr) > 0.9
        assert np.min(corr) > 0.6


def test_determinism_by_seed() -> None:
    p1, t1 = generate("hpcg", minutes=2, seed=7)
    p2, t2 = generate("hpcg", minutes=2, seed=7)
    np.testing.assert_array_equal(p1.values, p2.values)
    assert t1.to_dict() == t2.to_dict()
    p3, t3 = generate("hpcg", minutes=2, seed=8)
    assert not np.array_equal(p1.values, p3.values)
    assert any(not np.array_equal(t1.templates[k], t3.templates[k]) for k in t1.templates)
    # templates depend on kind and seed only, not on the duration
    _, t4 = generate("hpcg", minutes=5, seed=7)
    for k in t1.templates:
        np.testing.assert_array_equal(t1.templates[k], t4.templates[k])


def test_hpcg_init_patterns_close_in_length_different_in_shape() -> None:
    for seed in range(5):
        _, truth = generate("hpcg", minutes=1, seed=seed)
        a, b = truth.templates[truth.label_id("init-a")], truth.templates[truth.label_id("init-b")]
        assert abs(a.size - b.size) / a.size < 0.15
        b_on_a = np.interp(np.linspace(0, b.size - 1, a.size), np.arange(b.size), b)
        assert np.corrcoef(a, b_on_a)[0, 1] < 0.3
        assert abs(a.mean() - b.mean()) > 0.3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aperiodic_parts_do_not_repeat(kind: str, seed: int) -> None:
    profile, truth = generate(kind, minutes=10, seed=seed)
    x = profile.column("ipc")
    sl = truth.sample_labels()
    aperiodic = [(a, b) for a, b in _runs(sl < 0) if b - a >= 2500]
    assert aperiodic
    for a, b in aperiodic:
        assert _acf_rebound(x[a:b]) < 0.1, (a, b)
    # the same test does see the periodic regions (positive control)
    for _, first, count in truth.regions():
        a = truth.starts[first]
        b = truth.starts[first + count - 1] + truth.lengths[first + count - 1]
        assert _acf_rebound(x[a:b]) > 0.5


def test_period_scales_lengths() -> None:
    profile, truth = generate("nemo", minutes=1, seed=0, period=0.01)
    assert profile.n_samples == 6000 and truth.period == 0.01
    assert truth.templates[0].size == 110
    assert truth.coverage() == pytest.approx(0.77, abs=0.03)


def test_coarse_sampling_is_the_fine_run_averaged_over_each_interval() -> None:
    """At 100 ms the run is the one generated at 5 ms, averaged over blocks of 20 samples,
    its instances from the interval of their start to that of their end."""
    fine, fine_truth = generate("nemo", minutes=2, seed=4)
    coarse, truth = generate("nemo", minutes=2, seed=4, period=0.1)
    assert coarse.period == truth.period == 0.1 and coarse.n_samples == truth.n_samples == 1200
    np.testing.assert_allclose(coarse.values[:, 0],
                               fine.values[:, 0].reshape(1200, 20).mean(axis=1))
    np.testing.assert_array_equal(truth.starts, np.rint(fine_truth.starts / 20))
    ends = np.rint((fine_truth.starts + fine_truth.lengths) / 20)
    np.testing.assert_array_equal(truth.starts + truth.lengths, ends)
    assert truth.templates[0].size == fine_truth.templates[0].size // 20
    assert truth.coverage() == pytest.approx(fine_truth.coverage(), abs=0.01)


def test_sixty_minutes() -> None:
    profile, truth = generate("nemo", minutes=60, seed=0)
    assert profile.n_samples == 720_000
    assert truth.coverage() == pytest.approx(0.77, abs=0.01)


def test_bad_arguments() -> None:
    with pytest.raises(UsageError, match="nemo, hpcg, openfoam"):
        generate("lammps")
    with pytest.raises(UsageError):
        generate("nemo", minutes=0)
    with pytest.raises(UsageError):
        generate("nemo", seed=-1)
    with pytest.raises(UsageError):
        generate("openfoam", minutes=0.05)
    with pytest.raises(UsageError):
        generate("nemo", minutes=1, period=1.0)


def test_truth_json_roundtrip(tmp_path: Path) -> None:
    _, truth = generate("openfoam", minutes=1, seed=3)
    data = json.loads(json.dumps(truth.to_dict()))
    assert data["version"] == 1
    back = Truth.from_dict(data)
    assert back.to_dict() == truth.to_dict()
    np.testing.assert_array_equal(back.instances, truth.instances)

    target = truth_path(tmp_path / "run.csv")
    assert target.name == "run.csv.truth.json"
    write_truth(truth, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv.truth.json"]  # no temp left
    again = read_truth(target)
    assert again.to_dict() == truth.to_dict()
    assert again.coverage("compute") == truth.coverage("compute")


def test_truth_rejects_bad_input(tmp_path: Path) -> None:
    _, truth = generate("nemo", minutes=1, seed=0)
    data = truth.to_dict()
    with pytest.raises(InputError, match="version"):
        Truth.from_dict({**data, "version": 2})
    with pytest.raises(InputError, match="instances"):
        Truth.from_dict({k: v for k, v in data.items() if k != "instances"})
    overlapping = {**data, "instances": {"start": [0, 5], "length": [10, 10], "label": [0, 0]}}
    with pytest.raises(InputError, match="overlap"):
        Truth.from_dict(overlapping)
    bad = tmp_path / "bad.truth.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"bad\.truth\.json"):
        read_truth(bad)
    with pytest.raises(UsageError, match="compute"):
        truth.coverage("nope")


# --- phasekit synth: the inputs of the other verbs -----------------------------------------
def test_synth_nodes_writes_a_folder_and_its_truth(tmp_path: Path) -> None:
    from phasekit.io import read_profile
    from phasekit.synth import generate_nodes

    folder = tmp_path / "runs" / "job42"
    code, out, err = run("synth", "nodes", "--nodes", "5", "--minutes", "0.5", "--seed", "1",
                         "-o", folder)
    assert code == 0, err
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"node0{i}.parquet" for i in range(5)]
    truth = json.loads((tmp_path / "runs" / "job42.truth.json").read_text())
    profiles, expected = generate_nodes("nemo", n_nodes=5, minutes=0.5, seed=1,
                                        outliers=("slow", "idle"))
    assert truth["outliers"] == expected.outliers and sorted(truth["outliers"].values()) == \
        ["idle", "slow"]
    np.testing.assert_allclose(read_profile(folder / "node03.parquet").values,
                               profiles[3].values)
    assert "5 node profiles" in out
    assert not [p for p in tmp_path.rglob(".*")], "no temporary folder left"
    # again into the same folder: files replaced, nothing else touched
    (folder / "notes.txt").write_text("mine")
    code, _, err = run("synth", "nodes", "--nodes", "2", "--minutes", "0.5", "-o", folder)
    assert code == 0, err
    assert len(list(folder.iterdir())) == 6 and (folder / "notes.txt").read_text() == "mine"


def test_synth_power_feeds_phase_division(tmp_path: Path) -> None:
    from phasekit.energy.phasediv import divide_phases, power_profiles_from_dict

    path = tmp_path / "profiles.json"
    code, out, err = run("synth", "power", "--seed", "2", "-o", path, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["configs"] == 42
    profiles = power_profiles_from_dict(json.loads(path.read_text()), source=str(path))
    truth = json.loads((tmp_path / "profiles.json.truth.json").read_text())
    assert profiles.n_configs == 42 and truth["kind"] == "power_truth"
    division = divide_phases(profiles, max_phases=truth["n_phases"])
    # the optimum on the generator's own segments, within the noise of the readings
    assert division.energy_j == pytest.approx(truth["energy_j"], rel=0.02)


def test_synth_counters_is_a_power_model_table(tmp_path: Path) -> None:
    import pandas as pd

    from phasekit.synth.counters import COUNTERS, NONLINEAR_EXPRESSION

    path = tmp_path / "counters.csv"
    code, out, err = run("synth", "counters", "--minutes", "10", "--seed", "1", "-o", path)
    assert code == 0, err
    table = pd.read_csv(path)
    assert list(table.columns) == ["time_s", *COUNTERS, "power_w"] and len(table) == 300
    assert np.all(np.diff(table["time_s"]) == 2.0)
    truth = json.loads((tmp_path / "counters.csv.truth.json").read_text())
    assert truth["expression"] == NONLINEAR_EXPRESSION and truth["target"] == "power_w"
    code, out, err = run("powermodel", "fit", path, "--model", "linear", "--json")
    assert code == 0, err
    fit = json.loads(out)
    assert fit["time_column"] == "time_s" and "time_s" not in fit["features"]
    assert fit["test"]["rmse"] < 0.8 * fit["mean_baseline"]["rmse"]


@pytest.mark.parametrize(("name", "pascal"), [("c.json", False), ("c.csv", False),
                                              ("p.json", True)])
def test_synth_campaign_reads_back(name: str, pascal: bool, tmp_path: Path) -> None:
    from phasekit.campaign import read_campaign
    from phasekit.synth.campaigns import realistic_campaign

    path = tmp_path / name
    code, _, err = run("synth", "campaign", "--seed", "1", "-o", path,
                       *(["--pascal"] if pascal else []))
    assert code == 0, err
    expected = realistic_campaign("mixed", seed=1).campaign
    if name.endswith(".csv"):
        import pandas as pd

        table = pd.read_csv(path)
        assert len(table) == len(expected.runs)
        return
    campaign = read_campaign(path)
    assert len(campaign.runs) == len(expected.runs) == 935
    assert ("pascal" in campaign.meta) is pascal
    np.testing.assert_allclose([r.time_s for r in campaign.runs],
                               [r.time_s for r in expected.runs], rtol=1e-9)
    truth = json.loads((tmp_path / f"{name}.truth.json").read_text())
    assert len(truth["energy_j"]) == 935


def test_synth_fingerprints_cluster_by_program(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    code, _, err = run("synth", "fingerprints", "--seed", "1", "-o", folder)
    assert code == 0, err
    files = sorted(folder.iterdir())
    assert len(files) == 12 and files[0].name == "prog0-in0.parquet"
    code, out, err = run("fingerprint", *files, "--json")
    assert code == 0, err
    assert json.loads(out)["n_clusters"] == 4


@pytest.mark.parametrize("args", [
    ["power", "--minutes", "3"], ["nemo", "--nodes", "4"], ["campaign", "--period", "1"],
    ["nodes", "--pascal"], ["counters", "--repetitions", "2"], ["power", "-o", "p.csv"],
    ["counters", "-o", "c.parquet"], ["campaign", "-o", "c.txt"], ["nodes", "--minutes", "-1"],
])
def test_synth_options_that_do_not_apply_are_usage_errors(args: list[str],
                                                          tmp_path: Path) -> None:
    out = ["-o", str(tmp_path / "out.json")] if "-o" not in args else []
    args = [str(tmp_path / a) if a.endswith((".csv", ".parquet", ".txt")) else a for a in args]
    code, _, err = run("synth", *args, *out)
    assert code == 2 and err.count("\n") == 1 and err.startswith("phasekit: error:"), err
    assert not list(tmp_path.iterdir())


def test_synth_folder_kinds_refuse_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "runs"
    taken.write_text("a file")
    code, _, err = run("synth", "fingerprints", "-o", taken)
    assert code == 2 and "not a folder" in err and taken.read_text() == "a file"
