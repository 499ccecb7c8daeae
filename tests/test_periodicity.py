"""Phase-TA end to end on synthetic ground truth and on the real LULESH profile."""

from __future__ import annotations

import json

import numpy as np
import pytest

import naive
from helpers import DATA
from phasekit.distance.dtw import dtw2
from phasekit.errors import InputError
from phasekit.io import read_profile
from phasekit.metrics.periodicity import best_overlap_mapping, labels_ari, sample_labels
from phasekit.periodicity import PeriodicityResult, analyze, instances_of, relevance
from phasekit.periodicity.align import (
    _cycles,
    _rotations,
    _spectrum,
    best_rotation,
    mean_cycle,
    resample_cycle,
)
from phasekit.periodicity.analyze import padded
from phasekit.periodicity.cluster import euclidean_neighbors, resample_series, single_linkage
from phasekit.profile import Profile
from phasekit.synth import generate


def predicted_labels(n_samples: int, result: PeriodicityResult) -> np.ndarray:
    labels = np.full(n_samples, -1)
    for index, pattern in enumerate(result.patterns):
        mine = sample_labels(n_samples, pattern.starts, pattern.lengths,
                             np.full(pattern.n_instances, index))
        labels = np.where(mine >= 0, index, labels)
    return labels


@pytest.fixture(scope="module", params=[(kind, seed) for kind in ("nemo", "hpcg", "openfoam")
                                        for seed in (0, 1, 2)], ids=lambda p: f"{p[0]}-{p[1]}")
def analyzed(request: pytest.FixtureRequest):
    kind, seed = request.param
    profile, truth = generate(kind, minutes=10, seed=seed)
    return profile, truth, analyze(profile)


def test_periods_coverage_and_labels_match_the_truth(analyzed) -> None:
    profile, truth, result = analyzed
    true_labels = truth.sample_labels()
    found = predicted_labels(profile.n_samples, result)
    assert len(result.patterns) == len(truth.labels)
    assert abs(result.coverage - truth.coverage()) <= 0.03
    assert labels_ari(true_labels, found) >= 0.9
    mapping = best_overlap_mapping(true_labels, found)
    assert len(mapping) == len(truth.labels)
    for predicted, true in mapping.items():
        pattern = result.patterns[predicted]
        assert pattern.period_s == pytest.approx(truth.mean_length(true) * profile.period, rel=0.01)


def test_patterns_are_closer_to_the_template_than_the_instances(analyzed) -> None:
    profile, truth, result = analyzed
    found = predicted_labels(profile.n_samples, result)
    mapping = best_overlap_mapping(truth.sample_labels(), found)
    for predicted, true in mapping.items():
        pattern = result.patterns[predicted].values
        # a periodicity has no intrinsic start: compare at the pattern's phase
        template = resample_cycle(truth.templates[true][:, None], pattern.shape[0])
        rotation, _ = best_rotation(template, pattern)
        template = np.roll(template, rotation, axis=0)
        X, lengths = instances_of(profile, result, predicted)
        radius = max(1, int(0.1 * pattern.shape[0]))
        per_instance = np.mean([dtw2(X[i, :n], template, radius) for i, n in enumerate(lengths)])
        assert dtw2(pattern, template, radius) < per_instance


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_noise_random_walk_and_constant_give_an_empty_result(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 120_000  # ten minutes at 5 ms
    for signal in (rng.normal(size=n), rng.normal(size=n).cumsum(), np.full(n, 1.3)):
        result = analyze(Profile(signal, 0.005, ("ipc",)))
        assert result.patterns == ()
        assert result.coverage == 0.0
        assert "no periodicity" in result.explanation


def test_real_lulesh_profile_period() -> None:
    """DRAM reads per 10 ms bin of LULESH, two iterations. The README of the data says "about
    0.32 s"; the trace's own MPI_Allreduce timestamps (once per iteration) put the iteration
    at 0.341 s on rank 1 (214.42 ms and 555.31 ms), and that is the truth we hold to."""
    profile = read_profile(DATA / "lulesh_chop8_dram_10ms.csv")
    for metrics in (None, ["dram_rd"], ["dram_rd", "dram_wr"]):
        result = analyze(profile, metrics=metrics)
        assert result.patterns, result.explanation
        assert result.patterns[0].period_s == pytest.approx(0.341, rel=0.05)
        assert "short profile" in result.explanation


def test_gaps_split_the_profile_and_coverage_counts_valid_samples() -> None:
    profile, truth = generate("nemo", minutes=5, seed=3)
    values = np.array(profile.values)
    values[30_000:31_000] = np.nan
    gapped = profile.replace(values=values)
    result = analyze(gapped)
    assert result.n_valid == profile.n_samples - 1000
    assert len(result.patterns) == 1
    pattern = result.patterns[0]
    ends = pattern.starts + pattern.lengths
    assert not np.any((pattern.starts < 31_000) & (ends > 30_000))
    assert abs(result.coverage - truth.coverage()) < 0.04


def test_joint_metrics_and_ipc_derived_from_counters() -> None:
    profile, truth = generate("nemo", minutes=5, seed=4)
    ipc = profile.column("ipc")
    cycles = np.full(ipc.size, 2.1e7)
    counters = Profile(np.column_stack([ipc * cycles, cycles, 3 - ipc]), profile.period,
                       ("instructions", "cycles", "stall"))
    single = analyze(counters)
    assert single.metrics == ("ipc",)
    joint = analyze(counters, metrics=["ipc", "stall"])
    assert joint.patterns[0].values.shape[1] == 2
    for result in (single, joint):
        assert len(result.patterns) == 1
        assert result.patterns[0].period_s == pytest.approx(truth.mean_length(0) * 0.005, rel=0.01)


def test_window_and_sub_profile_relevance() -> None:
    profile, _ = generate("nemo", minutes=12, seed=5)
    reference = analyze(profile)
    sub = analyze(profile, window_s=(180.0, 420.0))
    assert sub.offset_s == pytest.approx(180.0)
    assert sub.n_samples == 48_000
    relevant = relevance(sub.patterns[0].values, reference, profile)
    assert relevant["reference_wgss"] == pytest.approx(reference.patterns[0].wgss, rel=1e-9)
    assert 0.5 < relevant["ratio"] < 1.5
    unrelated = np.full_like(sub.patterns[0].values, np.mean(profile.column("ipc")))
    assert relevance(unrelated, reference, profile)["ratio"] > 2


def test_result_round_trips_through_json() -> None:
    profile, _ = generate("hpcg", minutes=3, seed=0)
    result = analyze(profile)
    data = json.loads(json.dumps(result.to_dict()))
    assert {"duration_s", "coverage", "patterns"} <= set(data)
    assert [p["coverage"] for p in data["patterns"]] == sorted(
        [p["coverage"] for p in data["patterns"]], reverse=True)
    assert {"period_s", "length", "n_instances", "coverage", "wgss"} <= set(data["patterns"][0])
    again = PeriodicityResult.from_dict(data)
    assert again.to_dict() == result.to_dict()
    with pytest.raises(InputError):
        PeriodicityResult.from_dict({"kind": "phases"})


def test_a_long_run_says_which_approximations_it_took(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """Above the exact sizes (lowered here to a 5-minute run's) the result names the k-d tree
    neighbours and the sampled average in its params and its notes, with the same answer;
    below them, nothing is said."""
    import phasekit.periodicity.average as average
    import phasekit.periodicity.cluster as cluster
    import phasekit.periodicity.tune as tune

    profile, _ = generate("nemo", minutes=5, seed=3)
    exact = analyze(profile)
    assert "approximations" not in exact.params
    n = exact.patterns[0].n_instances
    monkeypatch.setattr(cluster, "APPROXIMATE_ABOVE", 100)
    monkeypatch.setattr(average, "DBA_SAMPLE", 100)
    monkeypatch.setattr(tune, "EXCERPTS_ABOVE", 10_000)
    monkeypatch.setattr(tune, "EXCERPT_BUDGET", 40_000)
    monkeypatch.setattr(tune, "EXCERPT_WINDOWS", 1)
    approximate = analyze(profile)
    said = approximate.params["approximations"]
    assert any("window tuned on 2 evenly spaced stretches of the run (40,000 of its 60,000 "
               "samples)" in a for a in said)
    assert any("k-d tree over 16 principal components (exact up to 100)" in a for a in said)
    assert any(f"averaged on 100 of its {n:,} instances" in a for a in said)
    notes = approximate.present().notes
    assert any(line.startswith("long run, approximated: ") for line in notes)
    assert approximate.coverage == pytest.approx(exact.coverage, abs=0.01)
    assert [p.n_instances for p in approximate.patterns] == [p.n_instances
                                                               for p in exact.patterns]


def test_a_period_of_few_samples_is_said_to_be_coarsely_sampled() -> None:
    """The same NEMO-like run sampled every 100 ms (a 1.1 s period is 11 samples): the true
    period, and a note that the sampling is coarse for it and what would resolve it; none
    at 5 ms."""
    fine = analyze(generate("nemo", minutes=10, seed=1)[0])
    coarse = analyze(generate("nemo", minutes=10, seed=1, period=0.1)[0])
    assert coarse.patterns[0].period_s == pytest.approx(fine.patterns[0].period_s, rel=0.03)
    length = coarse.patterns[0].length
    assert f"the period is only {length} samples" in coarse.explanation
    assert f"a sample every {length * 0.1 / 20:.2g} s or faster" in coarse.explanation
    assert "the period is only" not in fine.explanation


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_period_of_few_samples_keeps_its_coverage_and_one_pattern(seed: int) -> None:
    """The same NEMO-like run read every 100 ms (11 samples a period; its lengths come out
    10, 11 and 12 samples, three length groups) is one pattern with the coverage the 5 ms
    reading has, within 5 points."""
    fine = analyze(generate("nemo", minutes=10, seed=seed)[0])
    coarse = analyze(generate("nemo", minutes=10, seed=seed, period=0.1)[0])
    assert len(fine.patterns) == len(coarse.patterns) == 1
    assert coarse.patterns[0].coverage == pytest.approx(fine.patterns[0].coverage, abs=0.05)


def test_too_short_profile_is_an_input_error() -> None:
    with pytest.raises(InputError, match="valid samples"):
        analyze(Profile(np.arange(10.0), 0.005, ("ipc",)))


def test_sparse_single_linkage_equals_exact_single_linkage() -> None:
    profile, truth = generate("hpcg", minutes=6, seed=1)
    x = profile.values
    starts, lengths = truth.starts, truth.lengths
    keep = truth.instances["label"] < 2  # the two initialization patterns: lengths 150 and 165
    X = padded(x, starts[keep], lengths[keep])
    exact = single_linkage(X, lengths[keep], band=0.1, exact_below=10_000)
    sparse = single_linkage(X, lengths[keep], band=0.1, exact_below=0)
    assert labels_ari(exact, sparse) == 1.0
    assert labels_ari(truth.instances["label"][keep], exact) == 1.0


def test_resampling_and_neighbours_match_naive() -> None:
    rng = np.random.default_rng(3)
    for dims in (1, 2):
        lengths = rng.integers(1, 40, size=25)
        lengths[:3] = [1, 2, 39]
        X = rng.normal(size=(25, 40, dims)).cumsum(axis=1)
        X[4, 5, 0] = np.nan  # NumPy's special cases around a missing value
        for length in (1, 2, 17, 40, 55):
            np.testing.assert_array_equal(resample_series(X, lengths, length),
                                          naive.resample_series(X, lengths, length))
    Y = rng.normal(size=(30, 12))
    i, j = euclidean_neighbors(Y, 4)
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == naive.nearest_pairs(Y, 4)
    assert (np.diff(i * 30 + j) > 0).all()  # distinct pairs in lexicographic order


def test_projected_neighbours_find_the_exact_ones_on_clustered_instances(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the size for the exact search, the neighbours come from projected candidates:
    on instances of three templates that vary in a few ways (amplitude, drift, a bump's
    height) plus a little noise, as a long run's cycles do, they are nearly all the exact
    ones, and single linkage on the DTW_2 of either candidate set gives the same clusters."""
    import phasekit.periodicity.cluster as cluster

    rng = np.random.default_rng(5)
    templates = rng.normal(size=(3, 60)).cumsum(axis=1)
    which = rng.integers(0, 3, 900)
    t = np.linspace(0, 1, 60)
    ways = np.stack([np.ones(60), t, np.exp(-((t - 0.5) / 0.1) ** 2)])
    Y = (templates[which] * rng.uniform(0.9, 1.1, (900, 1))
         + rng.normal(size=(900, 3)) @ ways + 0.01 * rng.normal(size=(900, 60)))
    exact = set(zip(*(v.tolist() for v in euclidean_neighbors(Y, 6)), strict=True))
    i, j = euclidean_neighbors(Y, 6, approximate_above=0)
    projected = set(zip(i.tolist(), j.tolist(), strict=True))
    assert (np.diff(i * 900 + j) > 0).all()
    assert len(exact & projected) >= 0.9 * len(exact)
    assert all(which[a] == which[b] for a, b in projected)
    X = Y[:, :, None]
    lengths = np.full(900, 60)
    whole = single_linkage(X, lengths, band=0.1, exact_below=0)
    monkeypatch.setattr(cluster, "APPROXIMATE_ABOVE", 0)
    assert labels_ari(whole, single_linkage(X, lengths, band=0.1, exact_below=0)) == 1.0


def test_batched_phase_alignment_equals_the_one_batch_computation() -> None:
    rng = np.random.default_rng(12)
    for dims in (1, 2):
        x = rng.normal(size=(3000, dims)).cumsum(axis=0)
        first = np.array([0, 100, 1000, 1500, 2000])
        length = np.array([57, 60, 61, 58, 7])
        end = first + length * np.array([5, 1, 3, 8, 40])
        reference = _spectrum(np.roll(mean_cycle(x, 0, 59, 4), 9, axis=0))
        cycles = _cycles(x, first, length, end, reference[0])
        for b in range(first.size):
            one = resample_cycle(mean_cycle(x, int(first[b]), int(length[b]),
                                            int(end[b] - first[b]) // int(length[b])), 59)
            np.testing.assert_array_equal(cycles[b], one)
            assert _rotations(reference, cycles)[b] == best_rotation(
                np.roll(mean_cycle(x, 0, 59, 4), 9, axis=0), one)[0]


def test_isolated_missing_samples_do_not_break_regions() -> None:
    profile, truth = generate("nemo", minutes=5, seed=6)
    rng = np.random.default_rng(0)
    values = np.array(profile.values)
    values[rng.random(profile.n_samples) < 0.002] = np.nan  # one lost sample in 500
    result = analyze(profile.replace(values=values))
    assert result.params["bridged_samples"] > 0
    assert abs(result.coverage - truth.coverage()) <= 0.03
    assert len(result.patterns) == 1


@pytest.mark.parametrize("bad", [{"cut_ratio": 0}, {"band": 1.5}, {"near_zero": 0.7},
                                 {"alpha": 1.0}, {"min_period": 1}, {"max_iter": 0}])
def test_bad_parameters_are_usage_errors(bad: dict) -> None:
    from phasekit.errors import UsageError

    profile, _ = generate("nemo", minutes=1, seed=0)
    with pytest.raises(UsageError):
        analyze(profile, **bad)


def test_phase_cover_and_extension_match_naive() -> None:
    from phasekit.periodicity.align import _extend, _phase_cover
    from phasekit.periodicity.detect import prefix_sums

    rng = np.random.default_rng(21)
    for trial in range(6):
        n, k = 1500, int(rng.integers(20, 40))
        template = rng.normal(size=k).cumsum()
        x = np.tile(template, n // k + 1)[:n] + rng.normal(0, 0.1 + 0.3 * (trial % 3), n)
        x[rng.integers(0, n, 3)] = np.nan
        valid = np.isfinite(x)
        clean = np.where(valid, x - x[valid].mean(), 0.0)[:, None]
        cs1, cs2 = prefix_sums(clean)
        bad = np.concatenate([[0], np.cumsum(~valid)])
        first = np.sort(rng.choice(np.arange(k, n - 4 * k, 4 * k), size=4, replace=False))
        length = k + rng.integers(-1, 2, size=4)
        end = first + length * rng.integers(1, 3, size=4)
        verified = np.zeros(n, bool)
        for f, e in zip(first, end, strict=True):
            verified[f:e] = True
        covered = np.concatenate([[0], np.cumsum(verified)])
        rotation = rng.integers(0, 50, size=4)
        members = np.arange(4)
        for threshold in (0.25, 0.5):
            for b in members:
                lo = int(first[b]) + int(rng.integers(0, length[b]))
                assert _extend(lo, 1, int(length[b]), int(first[b]), int(end[b]), covered, bad,
                               clean, cs1, cs2, threshold) == naive.extend_instances(
                    lo, 1, int(length[b]), int(first[b]), int(end[b]), verified, valid,
                    clean, threshold)
            for phase in (0, 3, 17, 49):
                assert _phase_cover(phase, members, 50, rotation, length, first, end, covered,
                                    bad, clean, cs1, cs2, threshold) == naive.phase_cover(
                    phase, members.tolist(), 50, rotation, length, first, end, verified, valid,
                    clean, threshold)
