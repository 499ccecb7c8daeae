"""One pattern per loop: clusters of one period whose shapes differ only at noise level are
merged (phasekit.periodicity.merge), different shapes of one period are not."""

from __future__ import annotations

import json

import numpy as np
import pytest

from phasekit.periodicity import PeriodicityResult, analyze, average, merge
from phasekit.periodicity.analyze import padded
from phasekit.profile import Profile

CYCLE = 40


def square(phase: np.ndarray) -> np.ndarray:
    return (np.sin(phase) > 0).astype(float)


def sine(phase: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.sin(phase)


def tiled(shape, cycles: int, *, offset: float = 0.0, noise: float = 0.0, seed: int = 0,
          cycle: int = CYCLE) -> np.ndarray:
    """``cycles`` cycles of ``shape`` (``cycle`` samples each) from phase ``offset`` (in
    samples), with Gaussian noise (samples x 1)."""
    t = np.arange(cycles * cycle) + offset
    values = shape(2 * np.pi * t / cycle)
    return (values + np.random.default_rng(seed).normal(0, noise, values.size))[:, None]


def cluster_of(x: np.ndarray, starts, lengths) -> merge.Cluster:
    starts, lengths = np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
    X = padded(x, starts, lengths)
    return merge.Cluster(X, starts, lengths, average.dba(X, lengths, band=0.1))


def two_clusters(x: np.ndarray, first: int, second: int, *, cycle: int = CYCLE,
                 shift: int = 0) -> tuple[merge.Cluster, merge.Cluster]:
    """The first ``first`` cycles of ``x`` and the next ``second`` (cut ``shift`` samples
    later) as two clusters."""
    a = cluster_of(x, np.arange(first) * cycle, np.full(first, cycle))
    b = cluster_of(x, (first + np.arange(second)) * cycle + shift, np.full(second, cycle))
    return a, b


def merged(x: np.ndarray, clusters: list[merge.Cluster], **kw) -> list[merge.Cluster]:
    return merge.merge_same_shape(x, clusters, band=0.1, period_tolerance=0.05,
                                  sampling_period=0.005, **kw)


# --- the rule's quantities -----------------------------------------------------------------
def test_instance_variance_measures_the_noise() -> None:
    x = tiled(sine, 200, noise=0.1)
    _, variance = merge.mean_and_variance(merge.resampled(cluster_of(
        x, np.arange(200) * CYCLE, np.full(200, CYCLE)), CYCLE))
    assert variance == pytest.approx(0.01, rel=0.1)


def test_time_resolution_is_a_half_sample_shift() -> None:
    """A square wave of steps 1 differs by 1/2 at each of its 2 steps when sampled half a
    sample later: (2 x 1/4) / 40 per sample."""
    cycle = tiled(square, 1)
    assert merge.time_resolution(cycle) == pytest.approx(2 * 0.25 / CYCLE)
    assert merge.time_resolution(np.ones((CYCLE, 1))) == 0.0


def test_same_shape_at_noise_level_is_below_the_ratio() -> None:
    x = tiled(sine, 38, noise=0.1, seed=1)
    a, b = two_clusters(x, 30, 8)
    found = merge.compare(a, b)
    assert found.ratio <= merge.MERGE_RATIO
    assert found.noise > 0 and found.rotation == 0


def test_two_shapes_of_one_period_are_far_above_the_ratio() -> None:
    x = np.concatenate([tiled(sine, 30, noise=0.1, seed=2), tiled(square, 30, noise=0.1, seed=3)])
    a, b = two_clusters(x, 30, 30)
    assert merge.compare(a, b).ratio > 5 * merge.MERGE_RATIO


def test_a_noise_free_cycle_cut_a_sample_apart_merges_on_the_time_resolution() -> None:
    """Without noise the instance variance is 0 and the clusters differ by the sampling only:
    the time resolution is the scale."""
    x = tiled(lambda p: np.tanh(3 * np.sin(p)), 20, offset=0.5)
    a, b = two_clusters(x, 12, 6, shift=1)
    found = merge.compare(a, b)
    assert found.noise == pytest.approx(min(merge.time_resolution(merge.resampled(c, CYCLE)
                                                                   .mean(axis=0)) for c in (a, b)))
    assert found.ratio <= merge.MERGE_RATIO


# --- merging -------------------------------------------------------------------------------
def test_merge_pools_the_instances_and_records_why() -> None:
    x = tiled(sine, 38, noise=0.1, seed=1)
    a, b = two_clusters(x, 30, 8)
    out = merged(x, [b, a])
    assert len(out) == 1
    one = out[0]
    assert one.n_instances == 38 and np.array_equal(one.starts, np.arange(38) * CYCLE)
    (record,) = one.merges
    assert [r["n_instances"] for r in record["from"]] == [30, 8]
    assert record["ratio"] == pytest.approx(record["distance"] / record["noise"])
    assert record["ratio"] <= merge.MERGE_RATIO and record["dropped"] == 0
    assert merge.records(out) == [{"into": 0, **record}]


def test_two_shapes_stay_apart_and_other_periods_are_not_compared() -> None:
    x = np.concatenate([tiled(sine, 30, noise=0.05, seed=2), tiled(square, 30, noise=0.05, seed=3),
                        tiled(sine, 30, noise=0.05, seed=4, cycle=48)])
    a, b = two_clusters(x, 30, 30)
    c = cluster_of(x, 60 * CYCLE + np.arange(30) * 48, np.full(30, 48))  # a sine of 48 samples
    out = merged(x, [a, b, c])
    assert len(out) == 3 and merge.records(out) == []


def test_periods_a_sample_apart_are_compared_when_the_cycle_is_short() -> None:
    # a loop of 11 samples whose instances came out 11 and 12 samples long (two length
    # groups, 8 % apart): the shape test decides, not the 5 % tolerance on the period
    def of(period: float) -> merge.Cluster:
        return merge.Cluster(np.zeros((3, 12, 1)), np.arange(3), np.full(3, period),
                             average.Average(np.zeros((12, 1)), 0.0, 1, ()))
    assert merge.same_period(of(11.07), of(11.86), 0.05)
    assert not merge.same_period(of(11.0), of(13.0), 0.05)
    assert merge.same_period(of(220.0), of(230.0), 0.05)
    assert not merge.same_period(of(220.0), of(234.0), 0.05)  # 1 sample adds 0.5 % at 220


def test_a_cluster_cut_at_another_phase_is_recut_at_the_larger_ones() -> None:
    """The instances of B start a third of a cycle later: the rotation finds it, B's instances
    are cut again at A's phase and the representative keeps the shape (not a blur of two
    phases)."""
    x = tiled(lambda p: (np.sin(p) > 0.5).astype(float), 40, noise=0.05, seed=5)
    a, b = two_clusters(x, 30, 9, shift=13)
    found = merge.compare(a, b)
    assert abs(found.rotation) == 13
    (one,) = merged(x, [a, b])
    assert np.all(one.starts % CYCLE == 0)
    assert one.n_instances == 39 and one.merges[0]["dropped"] == 0
    template = x[:CYCLE].ravel()
    pattern = one.average.pattern.ravel()
    assert np.corrcoef(template, pattern[:CYCLE])[0, 1] > 0.95


def test_recut_drops_instances_that_leave_the_profile_or_overlap() -> None:
    x = tiled(sine, 20, noise=0.02, seed=6)
    a = cluster_of(x, np.arange(13) * CYCLE, np.full(13, CYCLE))
    b = cluster_of(x, (13 + np.arange(7)) * CYCLE, np.full(7, CYCLE))  # to the profile's end
    starts, _ = merge.recut(x, a, b, 20)  # the last would end 20 samples past it
    assert np.array_equal(starts, (13 + np.arange(6)) * CYCLE + 20)
    starts, _ = merge.recut(x, a, b, -20)  # the first would overlap A's last by half
    assert np.array_equal(starts, (14 + np.arange(6)) * CYCLE - 20)
    starts, _ = merge.recut(x, a, b, -8)  # an overlap of a fifth is kept
    assert np.array_equal(starts, (13 + np.arange(7)) * CYCLE - 8)
    x[16 * CYCLE - 3] = np.nan  # a missing sample
    starts, _ = merge.recut(x, a, b, -8)
    assert np.array_equal(starts, np.delete((13 + np.arange(7)) * CYCLE - 8, 3))


def test_a_negative_ratio_merges_nothing() -> None:
    x = tiled(sine, 38, noise=0.1, seed=1)
    a, b = two_clusters(x, 30, 8)
    assert len(merged(x, [a, b], ratio=-1.0)) == 2


# --- end to end ----------------------------------------------------------------------------
def noise_free(shape, phase: float) -> Profile:
    """19 cycles of 200 ms sampled at 5 ms (exact values, no noise)."""
    t = np.arange(19 * CYCLE) * 0.005
    return Profile(values=shape(2 * np.pi * t / 0.2 + phase)[:, None], period=0.005,
                   metrics=("x",))


NOISE_FREE = [("sine", np.sin, 0.3), ("square-ish", lambda p: np.tanh(3 * np.sin(p)), 0.3),
              ("square-ish", lambda p: np.tanh(3 * np.sin(p)), 2.0),
              ("sawtooth", lambda p: (p / (2 * np.pi)) % 1, 2.0)]


@pytest.mark.parametrize("name, shape, phase", NOISE_FREE, ids=[f"{n}-{p}" for n, _, p in NOISE_FREE])
def test_a_noise_free_loop_is_one_pattern(name: str, shape, phase: float,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    profile = noise_free(shape, phase)
    result = analyze(profile)
    assert len(result.patterns) == 1, [(p.period_s, p.n_instances) for p in result.patterns]
    assert result.coverage >= 0.93
    assert result.patterns[0].period_s == pytest.approx(0.2, rel=0.02)
    merges = result.params["merged"]
    assert merges and all(m["into"] == 0 and m["ratio"] <= merge.MERGE_RATIO for m in merges)
    monkeypatch.setattr(merge, "MERGE_RATIO", -1.0)  # the analysis without the merge
    assert len(analyze(profile).patterns) > 1


def two_loops(first, second, noise: float = 0.04, seed: int = 0) -> Profile:
    """30 cycles of ``first``, an aperiodic stretch, 30 cycles of ``second`` (same period)."""
    rng = np.random.default_rng(seed)
    walk = lambda n: (np.cumsum(rng.normal(0, 0.05, n)) % 1)[:, None]  # noqa: E731
    values = np.concatenate([walk(100), tiled(first, 30), walk(150), tiled(second, 30, offset=7),
                             walk(100)])
    values = values + rng.normal(0, noise, values.shape)
    return Profile(values=values, period=0.005, metrics=("x",))


@pytest.mark.parametrize("seed", [0, 1])
def test_two_shapes_of_one_period_stay_two_patterns(seed: int) -> None:
    profile = two_loops(sine, square, seed=seed)
    result = analyze(profile)
    assert len(result.patterns) == 2
    assert "merged" not in result.params
    a, b = (merge.Cluster(padded(profile.values, p.starts, p.lengths), p.starts,
                          p.lengths, average.Average(p.values, p.wgss, 0, ()))
            for p in result.patterns)
    assert merge.compare(a, b).ratio > merge.MERGE_RATIO


def test_the_same_loop_in_two_regions_is_one_pattern_and_the_record_is_saved(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two regions of one low-noise two-harmonic loop at different phases (2 or 3 clusters before
    the merge): one pattern, and params["merged"] survives the JSON round trip."""
    def bumps(p: np.ndarray) -> np.ndarray:
        return 0.5 + 0.3 * np.sin(p) + 0.2 * np.sin(3 * p)

    rng = np.random.default_rng(3)
    walk = lambda n: (np.cumsum(rng.normal(0, 0.05, n)) % 1)[:, None]  # noqa: E731
    values = np.concatenate([walk(100), bumps(2 * np.pi * np.arange(1200) / CYCLE)[:, None],
                             walk(150), bumps(2 * np.pi * np.arange(1200) / CYCLE
                                              + rng.uniform(0, 2 * np.pi))[:, None], walk(100)])
    profile = Profile(values=values + rng.normal(0, 0.01, values.shape), period=0.005,
                      metrics=("x",))
    result = analyze(profile)
    assert len(result.patterns) == 1 and result.patterns[0].n_instances >= 55
    assert result.params["merged"]
    back = PeriodicityResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back.params["merged"] == json.loads(json.dumps(result.params["merged"]))
    monkeypatch.setattr(merge, "MERGE_RATIO", -1.0)  # the analysis without the merge
    assert len(analyze(profile).patterns) >= 2
