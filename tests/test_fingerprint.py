"""Fingerprints (Silva 2024, ch. 5.10): the post-processing pipeline, Canberra and Ward, recovery
of programs on synthetic runs, and the ``phasekit fingerprint`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run as run_cli
from phasekit.energy.fingerprint import (
    FingerprintResult,
    cluster_fingerprints,
    fingerprint,
    fingerprint_profiles,
    ratio_series,
)
from phasekit.errors import InputError, UsageError
from phasekit.io import read_profile, write_profile
from phasekit.metrics import labels_ari
from phasekit.profile import Profile
from phasekit.synth.power import generate_fingerprint_runs


def canberra_naive(p: np.ndarray, q: np.ndarray) -> float:
    """Eq. 5.2, with 0/0 terms counted as 0."""
    total = 0.0
    for a, b in zip(p, q, strict=True):
        den = abs(a) + abs(b)
        if den > 0:
            total += abs(a - b) / den
    return total


def shape(x: np.ndarray) -> np.ndarray:
    return 3 + 2 * np.tanh((x - 0.3) / 0.02) - 1.5 * np.tanh((x - 0.7) / 0.02)


# --- pipeline ----------------------------------------------------------------------------------
def test_fingerprint_range_length_and_scale_invariance() -> None:
    x = np.linspace(0, 1, 500)
    fp = fingerprint(shape(x))
    assert fp.shape == (101,)
    assert fp.min() == pytest.approx(0) and fp.max() == pytest.approx(100)
    np.testing.assert_allclose(fingerprint(7 * shape(x) + 2), fp, atol=1e-9)
    assert np.all(fingerprint(np.full(50, 3.0)) == 0)
    assert fingerprint(shape(x), n_points=40).shape == (40,)


def test_time_stretched_runs_are_close_and_other_shapes_far() -> None:
    rng = np.random.default_rng(0)
    runs = [shape(np.linspace(0, 1, n)) * np.exp(0.05 * rng.standard_normal(n))
            for n in (150, 300, 1200)]
    other = 3 + np.sin(6 * np.linspace(0, 1, 400))
    fps = [fingerprint(r) for r in runs]
    d_same = max(canberra_naive(a, b) for a in fps for b in fps)
    d_other = min(canberra_naive(f, fingerprint(other)) for f in fps)
    assert d_same < 0.3 * d_other


def test_median_filter_removes_isolated_spikes() -> None:
    x = np.linspace(0, 1, 300)
    clean = shape(x)
    spiky = clean.copy()
    spiky[[40, 41, 150, 220]] *= 5
    np.testing.assert_allclose(fingerprint(spiky), fingerprint(clean), atol=1.0)
    unfiltered = fingerprint(spiky, median_kernel=1)
    assert np.abs(unfiltered - fingerprint(clean)).max() > 3


def test_short_and_bad_series() -> None:
    assert fingerprint([1.0, 2.0, 3.0]).shape == (101,)
    with pytest.raises(InputError):
        fingerprint([np.nan, 1.0])
    with pytest.raises(UsageError):
        fingerprint([1.0, 2.0, 3.0], n_points=1)


def make_profile(**columns: np.ndarray) -> Profile:
    names = tuple(columns)
    return Profile(values=np.column_stack([columns[n] for n in names]), period=0.01,
                   metrics=names)


def test_ratio_series_counters() -> None:
    ins = np.array([10.0, 20.0, np.nan, 30.0, 40.0])
    p = make_profile(instructions=ins, mem_loads=np.array([1.0, 2.0, 3.0, 0.0, 4.0]),
                     mem_stores=np.array([1.0, 2.0, 3.0, 0.0, 4.0]))
    r, how = ratio_series(p)
    assert how == "instructions/mem_loads+mem_stores"
    np.testing.assert_allclose(r, [5.0, 5.0, 5.0])  # NaN and zero denominators dropped
    r, how = ratio_series(p, "instructions/mem_loads")
    assert how == "instructions/mem_loads"
    np.testing.assert_allclose(r, [10.0, 10.0, 10.0])
    with pytest.raises(InputError, match="memory-instruction counter"):
        ratio_series(make_profile(instructions=ins, cycles=ins))
    with pytest.raises(UsageError, match="no counter 'flops'; the profile has: instructions, "
                                         "mem_loads, mem_stores"):
        ratio_series(p, "flops/mem_loads")  # a column the ratio names: the caller's mistake
    with pytest.raises(UsageError, match="no counter 'mem_reads'"):
        ratio_series(p, "instructions/mem_reads")
    with pytest.raises(InputError, match="no counter 'instructions'"):  # the default ratio
        ratio_series(make_profile(mem_loads=ins))
    with pytest.raises(UsageError):
        ratio_series(p, "instructions")


# --- clustering --------------------------------------------------------------------------------
def test_distances_are_canberra_and_linkage_is_ward() -> None:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    rng = np.random.default_rng(1)
    series = [rng.uniform(1, 5, int(rng.integers(30, 200))) for _ in range(6)]
    res = cluster_fingerprints(series, n_clusters=2)
    for i in range(6):
        for j in range(6):
            assert res.distances[i, j] == pytest.approx(
                canberra_naive(res.fingerprints[i], res.fingerprints[j]), abs=1e-9)
    np.testing.assert_allclose(res.linkage, linkage(squareform(res.distances), "ward"))
    assert res.n_clusters == 2 and res.k_rule == "given"


@pytest.mark.parametrize("seed", range(4))
def test_clustering_recovers_the_programs(seed: int) -> None:
    runs = generate_fingerprint_runs(programs=4, inputs=3, repetitions=2, seed=seed)
    programs = [r.meta["program"] for r in runs]
    # the number of programs given: the cut groups the runs by program
    given = fingerprint_profiles(runs, n_clusters=4)
    assert labels_ari(programs, given.clusters) >= 0.9
    # programs known: k chosen by agreement
    known = fingerprint_profiles(runs)
    assert known.k_rule == "programs-ari" and known.ari == pytest.approx(1.0)
    assert known.n_clusters == 4
    # programs unknown: silhouette rule
    blind = cluster_fingerprints([ratio_series(r)[0] for r in runs])
    assert blind.k_rule == "silhouette" and blind.programs is None
    assert labels_ari(programs, blind.clusters) >= 0.7


@pytest.mark.slow
def test_scores_are_scikit_learns_bit_for_bit() -> None:
    """The adjusted Rand index and the silhouette are computed without scikit-learn (its
    import, with pandas, was a quarter of the command): the same floats as its functions."""
    from scipy.spatial.distance import pdist, squareform
    from sklearn.metrics import adjusted_rand_score, silhouette_score

    from phasekit.energy.fingerprint import _silhouette

    rng = np.random.default_rng(3)
    for _ in range(400):
        n = int(rng.integers(2, 30))
        labels = rng.integers(1, int(rng.integers(1, n + 1)) + 1, n).astype(np.int32)
        programs = [f"p{v}" for v in rng.integers(0, int(rng.integers(1, n + 1)), n)]
        assert labels_ari(programs, labels) == adjusted_rand_score(programs, labels)
        noisy = rng.integers(-1, 3, n)  # -1 is a label like any other
        assert labels_ari(noisy, labels) == adjusted_rand_score(noisy, labels)
        D = squareform(pdist(rng.random((n, 12)) * 100, "canberra"))
        if 2 <= len(set(labels.tolist())) <= n - 1:
            expected = float(silhouette_score(D, labels, metric="precomputed"))
            assert np.float64(_silhouette(D, labels)).tobytes() == np.float64(expected).tobytes()
        else:
            assert _silhouette(D, labels) == -1.0


def test_result_round_trip_and_errors() -> None:
    runs = generate_fingerprint_runs(programs=2, inputs=2, seed=5)
    res = fingerprint_profiles(runs, names=[f"r{i}" for i in range(4)])
    back = FingerprintResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.names == res.names and back.programs == res.programs
    np.testing.assert_allclose(back.fingerprints, res.fingerprints)
    np.testing.assert_array_equal(back.clusters, res.clusters)
    assert "fingerprint" not in res.to_dict(series=False)["runs"][0]
    with pytest.raises(UsageError):
        cluster_fingerprints([np.ones(10)])
    with pytest.raises(UsageError):
        cluster_fingerprints([np.ones(10), np.ones(10)], n_clusters=3)
    with pytest.raises(InputError, match=r"^r1: "):
        fingerprint_profiles([runs[0], make_profile(instructions=np.ones(5))],
                             names=["r0", "r1"])


# --- command line ------------------------------------------------------------------------------
def _cli(*args: str | Path) -> tuple[int, str, str]:
    """``phasekit fingerprint ARGS`` in this process: exit code, stdout, stderr."""
    return run_cli("fingerprint", *args)


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("fingerprints")
    paths = []
    for i, run in enumerate(generate_fingerprint_runs(programs=3, inputs=2, seed=2)):
        path = folder / f"{run.meta['program']}_{run.meta['input']}_{i}.parquet"
        write_profile(run, path)
        paths.append(path)
    return paths


def test_cli_json_contract(run_files: list[Path], tmp_path: Path) -> None:
    fig, result = tmp_path / "fp.png", tmp_path / "fp.json"
    code, out, err = _cli(*run_files, "--json", "--plot", fig, "-o", result)
    assert code == 0, err
    data = json.loads(out)
    assert {"n_clusters", "k_rule", "runs", "ratio", "ari"} <= set(data)
    assert data["n_clusters"] == 3 and data["ari"] == pytest.approx(1.0)
    assert [r["name"] for r in data["runs"]] == [p.name for p in run_files]
    assert all({"name", "cluster", "program"} <= set(r) for r in data["runs"])
    assert fig.stat().st_size > 0
    assert FingerprintResult.from_dict(json.loads(result.read_text())).n_clusters == 3
    code, out, err = _cli(*run_files, "--clusters", "2", "--ratio",
                          "instructions/mem_loads")
    assert code == 0, err
    assert "2 cluster(s): given" in out


def test_cli_reads_a_folder_of_runs(run_files: list[Path], tmp_path: Path) -> None:
    """A folder (what ``phasekit synth fingerprints`` writes) gives its profiles, sorted."""
    code, out, err = _cli(run_files[0].parent, "--json")
    assert code == 0, err
    assert [r["name"] for r in json.loads(out)["runs"]] == sorted(p.name for p in run_files)
    code, out, err = _cli(tmp_path)  # a folder without profiles
    assert code == 3 and "no input in this folder" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_bad_input_is_one_line(run_files: list[Path], tmp_path: Path) -> None:
    code, out, err = _cli(run_files[0], tmp_path / "missing.csv")
    assert code == 3 and out == "" and "missing.csv" in err
    assert len(err.strip().splitlines()) == 1
    bare = tmp_path / "bare.csv"
    bare.write_text("time_s,instructions,cycles\n" + "".join(
        f"{0.01 * i},{100 + i},{200}\n" for i in range(20)))
    code, out, err = _cli(run_files[0], bare)
    assert code == 3 and "bare.csv" in err and "memory-instruction" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = _cli(run_files[0])
    assert code == 2
    # --ratio naming a column a run lacks: a usage error (exit 2) naming the file and columns
    code, out, err = _cli(run_files[0], bare, "--ratio", "instructions/mem_loads")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.strip() == ("phasekit: error: --ratio instructions/mem_loads: bare.csv: no "
                           "counter 'mem_loads'; the profile has: instructions, cycles")
    code, out, err = _cli(run_files[0], bare, "--ratio", "instructions")
    assert code == 2 and "expected NUM/DEN" in err and "bare.csv" not in err
    code, out, err = _cli(*run_files, "--clusters", "99")
    assert code == 2


def test_cli_prints_the_headline_first_and_checks_its_options_in_the_library(
        run_files: list[Path]) -> None:
    """The first line says how many runs fell into how many clusters and how the clusters
    match the programs; the table and the line on the number of clusters follow. The
    options the command line checks are the library's parameters: errors name them."""
    profiles = [read_profile(p) for p in run_files]
    result = fingerprint_profiles(profiles, names=[p.name for p in run_files])
    programs = len(set(result.programs or ()))
    code, out, err = _cli(*run_files)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == result.present().headline == (
        f"{len(run_files)} runs in {result.n_clusters} clusters (best agreement with the "
        f"profiles' programs, adjusted Rand index {result.ari:.3f}); every cluster holds the "
        f"runs of one program ({programs} programs)")
    assert lines[1].startswith("Fingerprints (")
    code, out, err = _cli(*run_files, "--clusters", "2")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(f"{len(run_files)} runs in 2 clusters (as asked); ")
    assert "of 2 clusters hold" in first  # 3 programs in 2 clusters: one holds two
    with pytest.raises(UsageError) as info:
        fingerprint_profiles(profiles[:1])
    assert info.value.parameter == "profiles" and "--" not in str(info.value)
    with pytest.raises(UsageError) as info:
        fingerprint_profiles(profiles[:2], n_points=4)
    assert (info.value.parameter, info.value.value) == ("n_points", 4)
    code, _, err = _cli(*run_files, "--points", "4")
    assert code == 2 and err.strip() == "phasekit: error: --points 4: expected at least 5"


@pytest.mark.parametrize("args, said", [
    (("--points", "4"), "--points 4: expected at least 5"),
    (("--clusters", "9"), "--clusters 9: expected 1..3 (the number of runs)"),
    (("--ratio", "instructions"),
     "--ratio instructions: expected NUM/DEN (each a column or a+b)"),
])
def test_options_are_refused_before_any_profile_is_read(args: tuple[str, ...], said: str,
                                                        run_files: list[Path],
                                                        tmp_path: Path) -> None:
    """A bad option is said (exit 2) even when a profile could not be read, and the library
    checks it before a run's series: a Python caller gets its own parameter names."""
    from phasekit.energy.api import check_fingerprint

    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not a parquet file")
    code, out, err = _cli(run_files[0], run_files[1], garbage, *args)
    assert (code, out, err.strip()) == (2, "", f"phasekit: error: {said}")
    option, value = args[0].lstrip("-"), args[1]
    with pytest.raises(UsageError) as info:
        check_fingerprint(3, **{option: value if option == "ratio" else int(value)})
    assert info.value.parameter == option
    lacking = Profile(values=np.ones((50, 1)), period=1.0, metrics=("cycles",))
    library = {"points": "n_points", "clusters": "n_clusters"}.get(option, option)
    with pytest.raises(UsageError) as info:
        fingerprint_profiles([read_profile(run_files[0]), read_profile(run_files[1]), lacking],
                             **{library: value if option == "ratio" else int(value)})
    assert info.value.parameter == library
